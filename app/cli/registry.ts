import { agreementCommand } from "./agreement";
import { assignCommand } from "./assign";
import { backupCommand } from "./backup";
import type { Command } from "./command";
import { exportGoldCommand, importGoldCommand } from "./gold";
import { importCommand } from "./import";
import { metricsCommand } from "./metrics";
import { runCommand } from "./run";
import { statsCommand } from "./stats";
import { usersCommand } from "./users";

/** Every command of `npm run concord`. Add a command here, one import and one entry, in alphabetical order. */
export const commands: Command[] = [
  agreementCommand,
  assignCommand,
  backupCommand,
  exportGoldCommand,
  importCommand,
  importGoldCommand,
  metricsCommand,
  runCommand,
  statsCommand,
  usersCommand,
];
