import { agreementCommand } from "./agreement";
import { assignCommand } from "./assign";
import { backupCommand } from "./backup";
import type { Command } from "./command";
import { casereviewImportCommand, casereviewReportCommand, expertPanelCommand, mentatExpandCommand, mentatExportCommand, mentatFitCommand, mentatImportCommand } from "./expert-ratings";
import { exportGoldCommand, importGoldCommand } from "./gold";
import { importCommand } from "./import";
import { judgeAssignCommand, judgeExportCommand, judgeImportCommand, judgeImportOutputsCommand, judgeReportCommand, judgeSampleCommand } from "./judge";
import { metricsCommand } from "./metrics";
import { runCommand } from "./run";
import { screeningImportCommand, screeningReleaseCommand, screeningReportCommand, screeningRoundCommand } from "./screening";
import { statsCommand } from "./stats";
import { usersCommand } from "./users";
import { gradingCommands } from "../rubric-grading/cli";

/** Every command of `npm run concord`. Add a command here, one import and one entry, in alphabetical order. */
export const commands: Command[] = [
  agreementCommand,
  assignCommand,
  backupCommand,
  casereviewImportCommand,
  casereviewReportCommand,
  expertPanelCommand,
  exportGoldCommand,
  importCommand,
  importGoldCommand,
  judgeAssignCommand,
  judgeExportCommand,
  judgeImportCommand,
  judgeImportOutputsCommand,
  judgeReportCommand,
  judgeSampleCommand,
  mentatExpandCommand,
  mentatExportCommand,
  mentatFitCommand,
  mentatImportCommand,
  metricsCommand,
  runCommand,
  screeningImportCommand,
  screeningReleaseCommand,
  screeningReportCommand,
  screeningRoundCommand,
  statsCommand,
  usersCommand,
  // Rubric-graded evaluation (docs/rubric-grading.md): grade-* commands, kept together.
  ...gradingCommands,
];
