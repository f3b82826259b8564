import { agreementCommand } from "./agreement";
import { backupCommand } from "./backup";
import type { Command } from "./command";
import { importCommand } from "./import";
import { statsCommand } from "./stats";
import { usersCommand } from "./users";

/** Every command of `npm run concord`. Add a command here, one import and one entry, in alphabetical order. */
export const commands: Command[] = [agreementCommand, backupCommand, importCommand, statsCommand, usersCommand];
