import { ROLES, type Role } from "../../db/schema";
import { getDb } from "../platform/db.server";
import { PASSWORD_MIN_LENGTH } from "./password.server";
import { createUser, getUserByUsername, listUsers, resetPassword, setActive } from "./users.server";
import { ServiceError } from "../platform/service-error";
import { CliError, parseOptions, requireOption, type CliIO, type Command } from "../cli/command";

const help = `Usage: npm run concord -- users <action> [options]

Actions:
  create --username U --role ROLE [--role ROLE…] [--display-name NAME] [--password-stdin]
        Create a user. Roles: ${ROLES.join(", ")}. The password is asked for on the terminal,
        or read from standard input with --password-stdin (first line; at least ${PASSWORD_MIN_LENGTH} characters).
  list  List users, their roles and whether they are active.
  reset-password --username U [--password-stdin]
        Set a new password and end the user's sessions.
  deactivate --username U     Stop a user from logging in (their work is kept).
  activate --username U       Let a deactivated user log in again.

The database is CONCORD_DB (default ./data/concord.db).`;

async function readPassword(io: CliIO, fromStdin: boolean): Promise<string> {
  if (fromStdin) return (await io.readStdin()).split(/\r?\n/)[0] ?? "";
  if (!process.stdin.isTTY)
    throw new CliError("no terminal to ask for the password on: pass it with --password-stdin.");
  const ask = (prompt: string) =>
    new Promise<string>((resolve) => {
      process.stderr.write(prompt);
      const stdin = process.stdin;
      stdin.setRawMode(true);
      stdin.resume();
      let value = "";
      const onData = (buf: Buffer) => {
        for (const ch of buf.toString("utf8")) {
          if (ch === "\r" || ch === "\n") {
            stdin.setRawMode(false);
            stdin.pause();
            stdin.off("data", onData);
            process.stderr.write("\n");
            return resolve(value);
          }
          if (ch === "\u0003") process.exit(130);
          if (ch === "\u007f") value = value.slice(0, -1);
          else value += ch;
        }
      };
      stdin.on("data", onData);
    });
  const first = await ask("Password: ");
  const second = await ask("Repeat the password: ");
  if (first !== second) throw new CliError("the two passwords differ; nothing was changed.");
  return first;
}

function userOrFail(username: string) {
  const user = getUserByUsername(getDb(), username);
  if (!user) throw new CliError(`no user named "${username}".`);
  return user;
}

export const usersCommand: Command = {
  name: "users",
  summary: "Create, list, activate and deactivate users; reset passwords",
  help,
  async run(argv, io) {
    const [action, ...rest] = argv;
    const { values } = parseOptions(rest, {
      username: { type: "string" },
      role: { type: "string", multiple: true },
      "display-name": { type: "string" },
      "password-stdin": { type: "boolean", default: false },
    });
    const db = getDb();
    try {
      switch (action) {
        case "create": {
          const username = requireOption(values.username, "--username");
          const roles = values.role ?? [];
          if (roles.length === 0) throw new CliError(`give at least one --role (${ROLES.join(", ")}).`);
          const bad = roles.filter((r) => !(ROLES as readonly string[]).includes(r));
          if (bad.length)
            throw new CliError(`unknown role ${bad.map((b) => `"${b}"`).join(", ")}; roles are ${ROLES.join(", ")}.`);
          const password = await readPassword(io, values["password-stdin"]!);
          if (password.length < PASSWORD_MIN_LENGTH)
            throw new CliError(`the password must have at least ${PASSWORD_MIN_LENGTH} characters.`);
          const user = await createUser(db, {
            username,
            displayName: values["display-name"],
            password,
            roles: roles as Role[],
            actorId: null,
          });
          io.out(`Created user ${user.username} (${user.roles.join(", ")}).\n`);
          return 0;
        }
        case "list": {
          for (const u of listUsers(db))
            io.out(`${u.username}\t${u.roles.join(",")}\t${u.active ? "active" : "deactivated"}\t${u.displayName}\n`);
          return 0;
        }
        case "reset-password": {
          const user = userOrFail(requireOption(values.username, "--username"));
          const password = await readPassword(io, values["password-stdin"]!);
          if (password.length < PASSWORD_MIN_LENGTH)
            throw new CliError(`the password must have at least ${PASSWORD_MIN_LENGTH} characters.`);
          await resetPassword(db, { userId: user.id, password, actorId: null });
          io.out(`New password set for ${user.username}; their sessions were ended.\n`);
          return 0;
        }
        case "deactivate":
        case "activate": {
          const user = userOrFail(requireOption(values.username, "--username"));
          setActive(db, { userId: user.id, active: action === "activate", actorId: null });
          io.out(`${user.username} is now ${action === "activate" ? "active" : "deactivated"}.\n`);
          return 0;
        }
        default:
          throw new CliError(
            `unknown action "${action ?? ""}". Actions: create, list, reset-password, deactivate, activate.`,
          );
      }
    } catch (e) {
      if (e instanceof ServiceError) throw new CliError(e.message);
      if (e instanceof Error && e.name === "ZodError")
        throw new CliError(JSON.parse(e.message)[0]?.message ?? e.message);
      throw e;
    }
  },
};
