import type { Command } from "./command";

/** Every command of `npm run concord`. Add a command here, one import and one entry, in alphabetical order. */
export const commands: Command[] = [];
