import { parseArgs, type ParseArgsConfig } from "node:util";
import { ServiceError } from "../platform/service-error";

/** What a command may touch: its output streams and standard input. Tests pass their own. */
export interface CliIO {
  out: (text: string) => void;
  err: (text: string) => void;
  readStdin: () => Promise<string>;
  isTTY: boolean;
}

export interface Command {
  name: string;
  summary: string;
  /** Full help text, printed by `concord <name> --help`. */
  help: string;
  run: (argv: string[], io: CliIO) => Promise<number>;
}

/** A user error: printed as `concord <command>: message` and the process exits with `exitCode` (2 = bad input). */
export class CliError extends Error {
  constructor(
    message: string,
    public exitCode = 2,
  ) {
    super(message);
  }
}

/**
 * Runs a service call (or an async body), turning a ServiceError into a usage error: exit 2 with the service's
 * message and no stack trace. One helper for every command.
 */
export function serviceCall<T>(body: () => T): T {
  const asCliError = (e: unknown) => (e instanceof ServiceError ? new CliError(e.message) : e);
  try {
    const result = body();
    if (result instanceof Promise)
      return result.catch((e: unknown) => {
        throw asCliError(e);
      }) as T;
    return result;
  } catch (e) {
    throw asCliError(e);
  }
}

type Options = NonNullable<ParseArgsConfig["options"]>;

/** `util.parseArgs` with errors turned into CliError, so a mistyped flag answers with the command's usage. */
export function parseOptions<O extends Options>(argv: string[], options: O, allowPositionals = false) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (e) {
    throw new CliError(`${(e as Error).message}. See --help.`);
  }
}

export function requireOption(value: string | undefined, flag: string): string {
  if (value === undefined || value === "") throw new CliError(`${flag} is required. See --help.`);
  return value;
}
