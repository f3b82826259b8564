/**
 * Files complete or absent (docs/reliability.md, "Atomic files" and "Downloads"): the output layer
 * (app/platform/output-files.server.ts) under a full disk, permission denied and a read-only file system, injected at
 * every point of a write; the commands that write through it (backup, export-gold) exit 2 with one line naming the
 * cause and leave nothing behind; a backup leaves no -wal/-shm beside it; and a web download on a full disk answers
 * 507 with a plain message, never a 200 with a short body. The other commands' full-disk cases are in their own test
 * files, through test/support/output-faults.ts.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CliIO } from "../../app/cli/command";
import { runCli } from "../../app/cli/index";
import { importCases, requireStudyByName } from "../../app/annotation/studies.server";
import { login } from "../../app/accounts/users.server";
import { openDatabase, setDb, type Db } from "../../app/platform/db.server";
import { downloadResponse } from "../../app/platform/download.server";
import {
  injectOutputFault,
  openOutputFile,
  OutputError,
  writeFileAtomic,
  writeFileStreaming,
  writeFileWith,
  writeFolderAtomic,
  writeFolderStreaming,
} from "../../app/platform/output-files.server";
import { loader as goldExportLoader } from "../../app/routes/admin.studies.$studyId.export";
import { freshDb, makeUser, TEST_PASSWORD } from "../support/db";
import { expectFullDiskRefusal, snapshot } from "../support/output-faults";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "concord-output-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIO = {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    readStdin: async () => "",
    isTTY: false,
  };
  return { code: await runCli(argv, io), out, err };
}

/** 196,000 bytes of text in lines, so that a fault can fall in the first, a middle or the last piece written. */
const BIG = Array.from({ length: 4000 }, (_, i) => `line ${String(i).padStart(6, "0")} ${"x".repeat(36)}\n`).join("");

type Writer = (target: string) => void | Promise<void>;
const WRITERS: [string, Writer][] = [
  ["writeFileAtomic", (t) => writeFileAtomic(t, BIG)],
  ["writeFileStreaming", (t) => void writeFileStreaming(t, (write) => BIG.match(/[^]{1,5000}/g)!.forEach(write))],
  [
    "openOutputFile",
    (t) => {
      const f = openOutputFile(t);
      f.write(BIG.slice(0, 100_000));
      f.write(new TextEncoder().encode(BIG.slice(100_000)));
      f.commit();
    },
  ],
  ["writeFileWith", (t) => writeFileWith(t, (temp) => writeFileSync(temp, BIG))],
  ["writeFolderAtomic", (t) => writeFolderAtomic(t, { "a.csv": BIG, "runs/b.json": BIG.slice(0, 1000) })],
  [
    "writeFolderStreaming",
    (t) =>
      void writeFolderStreaming(t, (write) => {
        for (let i = 0; i < 10; i++) write(i % 2 ? "odd.txt" : "even.txt", BIG.slice(i * 20_000, (i + 1) * 20_000));
      }),
  ],
];

const FAULTS: { code: string; after: number | null; cause: string }[] = [
  { code: "ENOSPC", after: 0, cause: "the disk is full (ENOSPC)" },
  { code: "ENOSPC", after: 1, cause: "the disk is full (ENOSPC)" },
  { code: "ENOSPC", after: 70_000, cause: "the disk is full (ENOSPC)" },
  { code: "ENOSPC", after: BIG.length - 1, cause: "the disk is full (ENOSPC)" },
  { code: "EACCES", after: null, cause: "permission denied (EACCES)" },
  { code: "EROFS", after: null, cause: "the file system is read-only (EROFS)" },
];

describe("the output layer", () => {
  for (const [name, write] of WRITERS) {
    it(`${name}: complete, or absent with the cause named and nothing left behind`, async () => {
      const target = join(dir, "out");
      await write(target);
      const previous = snapshot(dir);
      expect(Object.keys(previous).some((f) => f.startsWith("out"))).toBe(true);
      for (const fault of FAULTS) {
        for (const t of [target, join(dir, "new")]) {
          const undo = injectOutputFault(fault.code, fault.after);
          let error: unknown = null;
          try {
            await write(t);
          } catch (e) {
            error = e;
          } finally {
            undo();
          }
          expect(error, `${fault.code} after ${fault.after}`).toBeInstanceOf(OutputError);
          expect((error as Error).message).toBe(
            `cannot write ${t}: ${fault.cause}. Nothing was written${fault.code === "ENOSPC" ? "; free some space and try again" : ""}.`,
          );
          // The earlier output as it was, no new one, no temporary file or folder, no 0-byte file.
          expect(snapshot(dir)).toEqual(previous);
        }
      }
    });
  }

  it("throws a producer's own error as it is, and leaves nothing", () => {
    const refusal = new Error("the cases are not final");
    expect(() =>
      writeFolderStreaming(join(dir, "x"), (write) => {
        write("a.txt", "begun");
        throw refusal;
      }),
    ).toThrow(refusal);
    expect(() =>
      writeFileStreaming(join(dir, "y"), (write) => {
        write("begun");
        throw refusal;
      }),
    ).toThrow(refusal);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("removes a file's temporary left by a killed writer when the file is written again, not a fresh one", () => {
    const old = join(dir, ".run.json.0123456789ab.partial");
    const fresh = join(dir, ".run.json.ba9876543210.partial");
    const other = join(dir, ".runs.json.0123456789ab.partial");
    for (const f of [old, fresh, other]) writeFileSync(f, "{ half");
    const longAgo = new Date(Date.now() - 5 * 60_000);
    utimesSync(old, longAgo, longAgo);
    utimesSync(other, longAgo, longAgo);
    writeFileAtomic(join(dir, "run.json"), "{}\n");
    expect(readdirSync(dir).sort()).toEqual([
      ".run.json.ba9876543210.partial",
      ".runs.json.0123456789ab.partial",
      "run.json",
    ]);
  });

  it("refuses to replace a folder that holds files it did not write", () => {
    mkdirSync(join(dir, "report"));
    writeFileSync(join(dir, "report", "notes.txt"), "mine");
    expect(() => writeFolderAtomic(join(dir, "report"), { "a.csv": "x\r\n" })).toThrow(
      `cannot write ${join(dir, "report")}: the folder holds other files (notes.txt), which replacing it would delete; name a new folder. Nothing was written.`,
    );
    expect(snapshot(dir)).toEqual({ "report/": "", "report/notes.txt": expect.any(String) });
  });
});

describe("backup", () => {
  let cleanup: () => void;
  beforeEach(() => ({ cleanup } = freshDb()));
  afterEach(() => cleanup());

  it("leaves only the backup file: no -wal, -shm or temporary file beside it", async () => {
    const out = join(dir, "copy.db");
    expect((await run(["backup", "--out", out])).code).toBe(0);
    expect(readdirSync(dir)).toEqual(["copy.db"]);
  });

  it("on a full disk exits 2 naming the cause, and leaves nothing", async () => {
    await expectFullDiskRefusal(run, "backup", (out) => ["backup", "--out", out, "--force"], dir, "copy.db");
  });
});

const HEADER =
  "id,age_group,sex,presenting_symptoms,psychiatric_history,psychiatric_exam,psychological_exam,secondary_diagnoses";
const LABELS =
  ",diagnosis_sufficiency,diagnosis_sufficiency_agreement,diagnosis,diagnosis_agreement,earliest_sufficient_section";

/** A study of `n` notes with reference labels: every case final, so that it exports. */
function labelledStudy(db: Db, name: string, n: number): number {
  const lines = [HEADER + LABELS];
  for (let i = 0; i < n; i++)
    lines.push(`r${i},38-47,F,Low mood for ${i} weeks.,No admissions.,Tearful.,,,1,1,F32.1,1,2`);
  const r = importCases(db, {
    studyName: name,
    bytes: new TextEncoder().encode(lines.join("\n") + "\n"),
    filename: "labelled.csv",
    actorId: null,
  });
  expect(r.ok).toBe(true);
  return requireStudyByName(db, name).id;
}

describe("export-gold", () => {
  let db: Db;
  let cleanup: () => void;
  beforeEach(() => ({ db, cleanup } = freshDb()));
  afterEach(() => cleanup());

  it("on a full disk exits 2 naming the cause (not EBADF), and leaves no .partial folder", async () => {
    labelledStudy(db, "Pilot", 300);
    const total = await expectFullDiskRefusal(
      run,
      "export-gold",
      (out) => ["export-gold", "--study", "Pilot", "--out", out],
      dir,
    );
    expect(total).toBeGreaterThan(100_000);
    // Every label of the study: readable by its owner only, as before.
    for (const f of readdirSync(join(dir, "out-first")))
      expect(statSync(join(dir, "out-first", f)).mode & 0o777).toBe(0o600);
  });
});

describe("a web download", () => {
  let db: Db;
  let cookie: string;
  let studyId: number;
  beforeEach(async () => {
    // In memory, so that the export is made on this thread, where the fault is injected.
    db = openDatabase(":memory:");
    setDb(db);
    await makeUser(db, "boss", ["admin"]);
    const r = await login(db, { username: "boss", password: TEST_PASSWORD, ip: "192.0.2.1" });
    if (!r.ok) throw new Error(r.error);
    cookie = r.sessionCookie.split(";")[0]!;
    studyId = labelledStudy(db, "Pilot", 1000);
  });
  afterEach(() => {
    setDb(undefined);
    db.$client.close();
  });

  const goldFolders = () => readdirSync(tmpdir()).filter((f) => f.startsWith("concord-gold-"));
  const download = (file: string) =>
    goldExportLoader({
      request: new Request(`http://concord.test/admin/studies/${studyId}/export?file=${file}`, {
        headers: { Cookie: cookie },
      }),
      params: { studyId: String(studyId) },
      context: {},
    });

  it("is complete, with its Content-Length", async () => {
    for (const file of ["data.csv", "samples.json", "data_gt.json"]) {
      const res = await download(file);
      expect(res.status).toBe(200);
      const body = new Uint8Array(await res.arrayBuffer());
      expect(body.byteLength).toBeGreaterThan(50_000);
      expect(res.headers.get("Content-Length")).toBe(String(body.byteLength));
    }
  });

  it("on a full disk answers 507 with a plain message, never a 200 with a short body, and leaves no file", async () => {
    const before = goldFolders();
    for (const file of ["data.csv", "samples.json", "data_gt.json"]) {
      const size = (await (await download(file)).arrayBuffer()).byteLength;
      for (const after of [0, Math.floor(size / 2), size - 1]) {
        const undo = injectOutputFault("ENOSPC", after);
        let res: Response;
        try {
          res = await download(file);
        } finally {
          undo();
        }
        expect(res.status, `${file}, full after ${after} bytes`).toBe(507);
        expect(res.headers.get("Content-Type")).toBe("text/plain; charset=utf-8");
        expect(await res.text()).toBe(
          `The server's disk is full, so ${file} could not be made and nothing was downloaded. Tell the administrator of the server; once space has been freed, download it again.\n`,
        );
        expect(goldFolders()).toEqual(before);
      }
    }
  });

  it("answers 500 naming the cause when the server may not write its temporary files", async () => {
    const undo = injectOutputFault("EACCES", null);
    try {
      const res = await download("data.csv");
      expect(res.status).toBe(500);
      expect(await res.text()).toMatch(
        /^The server could not write its temporary files \(permission denied \(EACCES\)\)/,
      );
    } finally {
      undo();
    }
  });
});

describe("downloadResponse", () => {
  it("answers a full disk met while making the body (SQLite's or the system's) with 507; other errors are thrown", async () => {
    for (const code of ["ENOSPC", "SQLITE_FULL"]) {
      const res = await downloadResponse({ filename: "tags.csv", contentType: "text/csv" }, () => {
        throw Object.assign(new Error("full"), { code });
      });
      expect(res.status).toBe(507);
      expect(await res.text()).toMatch(/^The server's disk is full, so tags\.csv could not be made/);
    }
    const bug = new Error("a bug");
    await expect(
      downloadResponse({ filename: "a.csv", contentType: "text/csv" }, () => {
        throw bug;
      }),
    ).rejects.toBe(bug);
    const ok = await downloadResponse({ filename: "a.csv", contentType: "text/csv" }, () => "é\r\n");
    expect(ok.headers.get("Content-Length")).toBe("4");
    expect(ok.headers.get("Content-Disposition")).toBe('attachment; filename="a.csv"');
  });
});
