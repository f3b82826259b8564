/**
 * The command line (`npm run concord -- …`, docs/architecture.md#layers) through runCli with a capturing io, against the process-wide
 * database freshDb() sets: users, import (its report and exit code 2, --dry-run), backup while another connection writes.
 */
import Database from "better-sqlite3";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { annotations, assignments, sessions } from "../../db/schema";
import { runCli } from "../../app/cli/index";
import type { CliIO } from "../../app/cli/command";
import type { Db } from "../../app/platform/db.server";
import { createSession } from "../../app/accounts/auth.server";
import { getStudyByName, listStudyCases, requireStudyByName } from "../../app/annotation/studies.server";
import { getUserByUsername, listUsers, login } from "../../app/accounts/users.server";
import { freshDb, makeUser } from "../support/db";

let db: Db;
let dbPath: string;
let dir: string;
let cleanup: () => void;

beforeEach(() => {
  ({ db, path: dbPath, cleanup } = freshDb());
  dir = dirname(dbPath);
});
afterEach(() => cleanup());

async function run(argv: string[], stdin = ""): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIO = {
    out: (t) => (out += t),
    err: (t) => (err += t),
    readStdin: async () => stdin,
    isTTY: false,
  };
  const code = await runCli(argv, io);
  return { code, out, err };
}

function file(name: string, content: string | Uint8Array): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

const HEADER =
  "id,age_group,sex,presenting_symptoms,psychiatric_history,psychiatric_exam,psychological_exam,secondary_diagnoses";
const GOOD = `${HEADER}\nc1,28-37,F,Low mood,None,Slowed,,\nc2,58-67,M,Voices,One admission,Paranoid,PANSS 90,\n`;

function count(table: string): number {
  return (db.$client.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n;
}

describe("runCli", () => {
  it("prints the overview for --help and exits 0; no command is a usage error", async () => {
    const help = await run(["--help"]);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^Usage: npm run concord -- <command> \[options\]/);
    for (const name of ["backup", "import", "users"]) expect(help.out).toMatch(new RegExp(`^  ${name} `, "m"));
    expect((await run([])).code).toBe(2);
  });

  it("answers an unknown command with exit 2 on stderr", async () => {
    const result = await run(["frobnicate"]);
    expect(result).toMatchObject({ code: 2, out: "" });
    expect(result.err).toMatch(/^concord: unknown command "frobnicate"\./);
  });

  it.each(["users", "import", "backup"])("%s --help prints its usage", async (name) => {
    const result = await run([name, "--help"]);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(new RegExp(`^Usage: npm run concord -- ${name} `));
    expect(result.err).toBe("");
  });

  it("refuses an unknown option with a pointer to --help", async () => {
    const result = await run(["import", "--stduy", "x", "f.csv"]);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/^concord import: .*--stduy.*See --help\.\n$/s);
  });
});

describe("users", () => {
  it("creates the first admin with --password-stdin (first line) who can then log in", async () => {
    const result = await run(
      [
        "users",
        "create",
        "--username",
        "Boss",
        "--role",
        "admin",
        "--role",
        "rater",
        "--display-name",
        "Dr Boss",
        "--password-stdin",
      ],
      "first-admin-pw\r\nsecond line\n",
    );
    expect(result).toEqual({ code: 0, out: "Created user boss (admin, rater).\n", err: "" });
    expect(getUserByUsername(db, "boss")).toMatchObject({
      displayName: "Dr Boss",
      roles: ["admin", "rater"],
      active: true,
    });
    expect((await login(db, { username: "boss", password: "first-admin-pw", ip: "127.0.0.1" })).ok).toBe(true);
  });

  it.each([
    [
      ["--username", "u1", "--role", "admin", "--password-stdin"],
      "short\n",
      "the password must have at least 10 characters.",
    ],
    [
      ["--username", "u1", "--password-stdin"],
      "long-enough-pw\n",
      "give at least one --role (admin, annotator, adjudicator, rater).",
    ],
    [
      ["--username", "u1", "--role", "boss", "--password-stdin"],
      "long-enough-pw\n",
      'unknown role "boss"; roles are admin, annotator, adjudicator, rater.',
    ],
    [["--role", "admin", "--password-stdin"], "long-enough-pw\n", "--username is required. See --help."],
    [
      ["--username", "u 1", "--role", "admin", "--password-stdin"],
      "long-enough-pw\n",
      "Username may contain only letters, digits, dot, underscore and hyphen.",
    ],
  ])("refuses %j with exit 2 and creates nobody", async (args, stdin, message) => {
    const result = await run(["users", "create", ...args], stdin);
    expect(result).toEqual({ code: 2, out: "", err: `concord users: ${message}\n` });
    expect(listUsers(db)).toEqual([]);
  });

  it("refuses a taken username", async () => {
    await makeUser(db, "boss", ["admin"]);
    const result = await run(
      ["users", "create", "--username", "BOSS", "--role", "rater", "--password-stdin"],
      "long-enough-pw\n",
    );
    expect(result).toEqual({ code: 2, out: "", err: 'concord users: A user named "boss" already exists.\n' });
  });

  it("lists, deactivates, activates and resets passwords, ending sessions", async () => {
    const ann = await makeUser(db, "ann", ["annotator", "rater"]);
    createSession(db, ann.id);
    expect((await run(["users", "list"])).out).toBe("ann\tannotator,rater\tactive\tann\n");

    expect(await run(["users", "deactivate", "--username", "ann"])).toMatchObject({
      code: 0,
      out: "ann is now deactivated.\n",
    });
    expect(db.select().from(sessions).all()).toEqual([]);
    expect((await run(["users", "list"])).out).toBe("ann\tannotator,rater\tdeactivated\tann\n");
    expect(await run(["users", "activate", "--username", "ann"])).toMatchObject({
      code: 0,
      out: "ann is now active.\n",
    });

    createSession(db, ann.id);
    const reset = await run(["users", "reset-password", "--username", "ann", "--password-stdin"], "another-password\n");
    expect(reset).toEqual({ code: 0, out: "New password set for ann; their sessions were ended.\n", err: "" });
    expect(db.select().from(sessions).all()).toEqual([]);
    expect((await login(db, { username: "ann", password: "another-password", ip: "127.0.0.1" })).ok).toBe(true);

    expect(await run(["users", "deactivate", "--username", "nobody"])).toEqual({
      code: 2,
      out: "",
      err: 'concord users: no user named "nobody".\n',
    });
    expect((await run(["users", "promote"])).err).toMatch(/^concord users: unknown action "promote"\./);
  });
});

describe("import", () => {
  it("imports a file, then finds nothing to change on the second run", async () => {
    const path = file("pilot.csv", GOOD);
    const first = await run(["import", "--study", "Pilot", path]);
    expect(first).toEqual({
      code: 0,
      out: 'Imported into study "Pilot": 2 cases in file: 2 new, 0 changed, 0 unchanged.\n',
      err: "",
    });
    expect(listStudyCases(db, requireStudyByName(db, "Pilot").id).map((c) => c.externalId)).toEqual(["c1", "c2"]);
    const before = count("events");
    const second = await run(["import", "--study", "Pilot", path]);
    expect(second).toEqual({
      code: 0,
      out: 'Study "Pilot": 2 cases in file: 0 new, 0 changed, 2 unchanged. Nothing to change.\n',
      err: "",
    });
    expect(count("events")).toBe(before);
    expect(count("imports")).toBe(1);
  });

  it("reports every bad row as `FILE:LINE: reason`, exits 2 and writes nothing", async () => {
    const path = file(
      "bad.csv",
      `${HEADER}\nc1,28-37,F,a,b,c,,\n,28-37,F,a,b,c,,\nc3,18 to 27,F,a,,c,,\nc1,28-37,F,a,b,c,,\n`,
    );
    const result = await run(["import", "--study", "Pilot", path]);
    expect(result.code).toBe(2);
    expect(result.out).toBe("");
    expect(result.err).toBe(
      [
        `${path}:3: missing id: every case needs a non-empty id.`,
        `${path}:4: (id c3) 2 non-empty sections; a case needs 3 to 5.`,
        `${path}:5: (id c1) duplicate id "c1" (first on line 2).`,
        "3 errors; nothing was imported.",
        "",
      ].join("\n"),
    );
    expect(getStudyByName(db, "Pilot")).toBeNull();
    expect(count("cases")).toBe(0);
  });

  it("prints warnings on stderr but imports", async () => {
    const path = file("warn.csv", `${HEADER},ward\nc1,18 to 27,F,a,b,c,,,7B\n`);
    const result = await run(["import", "--study", "Pilot", path]);
    expect(result.code).toBe(0);
    expect(result.err).toBe(
      `warning: ${path}:1: column "ward" not used.\n` +
        `warning: ${path}:2: (id c1) age group "18 to 27" is not one of 18-27, 28-37, 38-47, 48-57, 58-67, 68-77, 78+; kept as given.\n`,
    );
    expect(result.out).toMatch(/^Imported into study "Pilot": 1 cases in file: 1 new/);
  });

  it("--dry-run validates and reports without writing", async () => {
    const good = await run(["import", "--study", "Pilot", "--dry-run", file("pilot.csv", GOOD)]);
    expect(good).toEqual({
      code: 0,
      out: 'Dry run for study "Pilot": 2 cases in file: 2 new, 0 changed, 0 unchanged. Nothing was written.\n',
      err: "",
    });
    expect(getStudyByName(db, "Pilot")).toBeNull();
    expect(count("events")).toBe(0);
    const badPath = file("bad.csv", `${HEADER}\nc1,,,a,,,,\n`);
    const bad = await run(["import", "--study", "Pilot", "--dry-run", badPath]);
    expect(bad.code).toBe(2);
    expect(bad.err).toBe(
      `${badPath}:2: (id c1) 1 non-empty section; a case needs 3 to 5.\n1 error; nothing was imported.\n`,
    );
  });

  it("refuses to change an annotated case's text, naming it", async () => {
    await run(["import", "--study", "Pilot", file("pilot.csv", GOOD)]);
    const c2 = listStudyCases(db, requireStudyByName(db, "Pilot").id)[1]!;
    const ann = await makeUser(db, "ann", ["annotator"]);
    const assignmentId = db
      .insert(assignments)
      .values({ caseId: c2.id, annotatorId: ann.id, assignedAt: 1 })
      .returning()
      .get().id;
    db.insert(annotations).values({ assignmentId, caseId: c2.id, annotatorId: ann.id, updatedAt: 1 }).run();
    const changed = file("changed.csv", GOOD.replace("Voices", "Voices and visions"));
    const result = await run(["import", "--study", "Pilot", changed]);
    expect(result.code).toBe(2);
    expect(result.err.slice(changed.length)).toMatch(
      /^:3: \(id c2\) the case already has annotations and its text or metadata differs from the stored one;/,
    );
    expect(result.err).toMatch(/1 error; nothing was imported\.\n$/);
  });

  it("reads JSONL, a chosen format and mapped columns", async () => {
    const jsonl =
      JSON.stringify({ id: "j1", presenting_symptoms: "a", psychiatric_exam: "b", secondary_diagnoses: "c" }) + "\n";
    expect((await run(["import", "--study", "J", file("notes.jsonl", jsonl)])).code).toBe(0);
    const unknown = await run(["import", "--study", "J", file("notes.txt", jsonl)]);
    expect(unknown).toEqual({
      code: 2,
      out: "",
      err: `${join(dir, "notes.txt")}: cannot tell the format of "${join(dir, "notes.txt")}": name it .csv or .jsonl, or choose the format.\n1 error; nothing was imported.\n`,
    });
    expect((await run(["import", "--study", "J", "--format", "jsonl", file("notes.txt", jsonl)])).out).toMatch(
      /1 unchanged/,
    );

    const mapped = file(
      "mapped.csv",
      "Case,Symptoms,psychiatric_history,psychiatric_exam,psychological_exam,secondary_diagnoses\nm1,a,b,c,,\n",
    );
    const result = await run(["import", "--study", "M", "--map", "id=Case, presenting_symptoms=Symptoms", mapped]);
    expect(result).toMatchObject({ code: 0, err: "" });
    expect(listStudyCases(db, requireStudyByName(db, "M").id)[0]!.externalId).toBe("m1");
  });

  it.each([
    [["--study", "P"], "give exactly one FILE to import. See --help."],
    [["missing.csv"], "--study is required. See --help."],
    [["--study", "P", "nope.csv"], "cannot read nope.csv: no such file."],
    [["--study", "P", "--format", "xml", "x.csv"], '--format must be csv or jsonl, not "xml".'],
    [["--study", "P", "--map", "id", "x.csv"], '--map must look like "id=case_id,presenting_symptoms=Symptoms".'],
    [["--study", "P", "--map", "case=Case", "x.csv"], /^--map names unknown column case; known: id, /],
    [["--study", "a/b", "PILOT_FILE"], "A study name may contain letters, digits, spaces, dot, underscore and hyphen."],
  ])("refuses %j with exit 2", async (args, message) => {
    const argv = args.map((a) => (a === "PILOT_FILE" ? file("pilot.csv", GOOD) : a));
    const result = await run(["import", ...argv]);
    expect(result.code).toBe(2);
    expect(result.out).toBe("");
    if (typeof message === "string") expect(result.err).toBe(`concord import: ${message}\n`);
    else expect(result.err.replace(/^concord import: /, "")).toMatch(message);
    expect(count("studies")).toBe(0);
  });
});

describe("backup", () => {
  it("takes a consistent, readable copy while another connection writes", async () => {
    await run(["import", "--study", "Pilot", file("pilot.csv", GOOD)]);
    // Enough pages for the online backup to take several steps (it copies 100 pages per step).
    const fill = db.$client.prepare(
      "insert into events (at, entity, entity_id, action, changes) values (0, 'fill', ?, 'fill', ?)",
    );
    db.$client.transaction(() => {
      for (let i = 0; i < 600; i++) fill.run(String(i), "x".repeat(4000));
    })();

    // Another connection (the running app) writes two rows per transaction while the backup runs.
    const other = new Database(dbPath);
    other.pragma("busy_timeout = 5000");
    other.exec(
      "create table if not exists backup_probe (n integer primary key); insert into app_meta (key, value) values ('probe', '0')",
    );
    const write = other.transaction((n: number) => {
      other.prepare("insert into backup_probe (n) values (?)").run(n);
      other.prepare("update app_meta set value = ? where key = 'probe'").run(String(n));
    });
    const out = join(dir, "copy.db");
    let written = 0;
    let done = false;
    const writer = new Promise<void>((resolve) => {
      const tick = () => {
        if (done || written >= 20) return resolve();
        // The backup has opened its destination: a temporary name beside the final one (docs/reliability.md).
        if (existsSync(out) || readdirSync(dir).some((f) => f.startsWith(".copy.db."))) write(++written);
        setImmediate(tick);
      };
      setImmediate(tick);
    });

    const result = await run(["backup", "--out", out]);
    const writtenWhileBackingUp = written;
    done = true;
    await writer;
    other.close();
    expect(result.code).toBe(0);
    expect(result.out).toMatch(
      new RegExp(`^Backed up the database to ${out.replace(/[.]/g, "\\.")} in \\d+ ms\\.\\n$`),
    );
    expect(writtenWhileBackingUp).toBeGreaterThan(0);

    const copy = new Database(out, { readonly: true });
    try {
      expect(copy.pragma("integrity_check", { simple: true })).toBe("ok");
      expect(copy.prepare("select external_id from cases order by position").pluck().all()).toEqual(["c1", "c2"]);
      expect(copy.prepare("select count(*) from events where entity = 'fill'").pluck().get()).toBe(600);
      // A snapshot at a transaction boundary: the probe counter matches the probe rows it copied.
      const rows = copy.prepare("select count(*) from backup_probe").pluck().get() as number;
      expect(copy.prepare("select value from app_meta where key = 'probe'").pluck().get()).toBe(String(rows));
    } finally {
      copy.close();
    }
  });

  it("refuses to overwrite a file unless --force", async () => {
    const out = file("existing.db", "not a database");
    const refused = await run(["backup", "--out", out]);
    expect(refused).toEqual({
      code: 2,
      out: "",
      err: `concord backup: ${out} exists; choose another file or pass --force.\n`,
    });
    expect((await run(["backup", "--out", out, "--force"])).code).toBe(0);
    const copy = new Database(out, { readonly: true });
    expect(copy.prepare("select count(*) from users").pluck().get()).toBe(0);
    copy.close();
    expect((await run(["backup"])).err).toBe("concord backup: --out is required. See --help.\n");
  });

  it("fails with a message, not a stack trace, when it cannot write the copy", async () => {
    const out = join(dir, "no-such-folder", "copy.db");
    const result = await run(["backup", "--out", out]);
    expect(result).toEqual({
      code: 2,
      out: "",
      err: `concord backup: cannot write ${out}: Cannot save backup because the directory does not exist. Nothing was written.\n`,
    });
    expect(existsSync(out)).toBe(false);
  });
});
