import { agreementCommand } from "../stats/cli";
import { assignCommand } from "../annotation/cli/assign";
import { backupCommand } from "../platform/backup-cli";
import type { Command } from "./command";
import { expertPanelCommand } from "../expert-panel/cli";
import { mentatExpandCommand, mentatExportCommand, mentatFitCommand, mentatImportCommand } from "../mentat/cli";
import { casereviewImportCommand, casereviewReportCommand } from "../case-review/cli";
import { exportGoldCommand, importGoldCommand } from "../gold/cli";
import { importCommand } from "../annotation/cli/import";
import { mentatImportRatingsCommand } from "../mentat/annotations-cli";
import { judgeAssignCommand, judgeExportCommand, judgeImportCommand, judgeImportOutputsCommand, judgeReportCommand, judgeSampleCommand } from "../judge-validation/cli";
import { metricsCommand } from "../evaluation/cli/metrics";
import { runCommand } from "../evaluation/cli/run";
import { screeningImportCommand, screeningReleaseCommand, screeningReportCommand, screeningRoundCommand } from "../screening/cli";
import { statsCommand } from "../study-report/cli";
import { usersCommand } from "../accounts/cli";
import { mcReportCommand, mcRunCommand } from "../mc-evaluation/cli";
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
  mcReportCommand,
  mcRunCommand,
  mentatExpandCommand,
  mentatExportCommand,
  mentatFitCommand,
  mentatImportCommand,
  mentatImportRatingsCommand,
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
