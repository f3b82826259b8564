/**
 * A bulk import never blocks the app and is all-or-nothing for readers (docs/reliability.md, "Bulk imports"): new
 * cases are written in short transactions, hidden until the last one; a killed or failed import leaves nothing
 * visible and is cleaned; saves interleave with it; the guard of the write (does a changed case have annotations?)
 * runs in the last transaction. A few thousand rows and a tiny chunk budget drive the import through many chunks;
 * the large sizes and the latencies are measured by `npm run bench` (scripts/bench/bulk-import.ts).
 */
import { spawn, spawnSync } from "node:child_process";
import { hostname } from "node:os";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { importRuns } from "../../db/schema";
import { SECTION_KINDS } from "../../app/annotation/domain/sections";
import { MAX_FILE_BYTES } from "../../app/annotation/domain/case-import";
import { openDatabase, type Db } from "../../app/platform/db.server";
import { cleanAbandonedRuns } from "../../app/platform/import-runs.server";
import {
  getCaseSections,
  getStudyByName,
  importCases,
  listStudies,
  listStudyCases,
  requireStudyByName,
} from "../../app/annotation/studies.server";
import { autoAssign } from "../../app/annotation/assignments.server";
import { saveDraft } from "../../app/annotation/annotations.server";
import { listCaseEvents } from "../../app/audit/audit.server";
import { countByState, listCaseProgress } from "../../app/gold/gold-export.server";
import { studyStateCounts } from "../../app/annotation/study-counts.server";
import { freshDb, makeUser } from "../support/db";
import { sufficient } from "../support/labels";

const ROOT = new URL("../..", import.meta.url).pathname;

let db: Db;
let path: string;
let cleanup: () => void;
beforeEach(() => ({ db, path, cleanup } = freshDb()));
afterEach(() => cleanup());

function csv(n: number, text = "Low mood", first = 0): Uint8Array {
  const lines = [["id", "age_group", "sex", ...SECTION_KINDS].join(",")];
  for (let i = first; i < first + n; i++)
    lines.push([`c${i}`, "38-47", "F", `${text} ${i}.`, "None.", "Calm.", "", ""].join(","));
  return new TextEncoder().encode(lines.join("\n") + "\n");
}

const raw = (sql: string) => (db.$client.prepare(sql).get() as { n: number }).n;

/** What a reader on another connection sees of study `name`. */
function readerView(reader: Db, name: string) {
  const study = getStudyByName(reader, name);
  return {
    studies: listStudies(reader).map((s) => `${s.name}:${s.numCases}`),
    cases: study ? listStudyCases(reader, study.id).length : null,
    progress: study ? listCaseProgress(reader, study.id).length : null,
  };
}

function runChild(args: string[]): Promise<{ code: number | null; signal: string | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "test/support/import-child.ts", ...args], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.on("exit", (code, signal) => resolve({ code, signal, out }));
  });
}

describe("bulk case import", () => {
  it("shows readers nothing of an import until it is complete, then all of it", () => {
    importCases(db, { studyName: "Old", bytes: csv(3), filename: "old.csv", actorId: null });
    const reader = openDatabase(path);
    const seen: ReturnType<typeof readerView>[] = [];
    const oldSeen: number[] = [];
    let hiddenRows = 0;
    const result = importCases(
      db,
      { studyName: "Bulk", bytes: csv(3000), filename: "bulk.csv", actorId: null },
      {
        chunkBudgetMs: 1,
        onChunk: () => {
          seen.push(readerView(reader, "Bulk"));
          oldSeen.push(listStudyCases(reader, requireStudyByName(reader, "Old").id).length);
          hiddenRows = Math.max(hiddenRows, raw("select count(*) as n from cases where study_id <> 1"));
        },
      },
    );
    expect(result.written).toBe(true);
    // Many chunks were committed, and each time the reader saw neither the study nor any of its cases or events.
    expect(seen.length).toBeGreaterThan(3);
    expect(hiddenRows).toBeGreaterThan(0);
    for (const view of seen) expect(view).toEqual({ studies: ["Old:3"], cases: null, progress: null });
    expect(new Set(oldSeen)).toEqual(new Set([3]));
    expect(readerView(reader, "Bulk")).toEqual({ studies: ["Bulk:3000", "Old:3"], cases: 3000, progress: 3000 });
    const first = listStudyCases(reader, requireStudyByName(reader, "Bulk").id)[0]!;
    expect(listCaseEvents(reader, first.id).map((e) => e.action)).toEqual(["import"]);
    expect(raw("select count(*) as n from import_runs")).toBe(0);
    reader.$client.close();
  });

  it("hides the new cases of an existing study while they are written", () => {
    importCases(db, { studyName: "Pilot", bytes: csv(5), filename: "a.csv", actorId: null });
    const reader = openDatabase(path);
    const counts: number[] = [];
    importCases(
      db,
      { studyName: "Pilot", bytes: csv(2000, "Low mood", 5), filename: "b.csv", actorId: null },
      { chunkBudgetMs: 1, onChunk: () => counts.push(readerView(reader, "Pilot").cases!) },
    );
    expect(counts.length).toBeGreaterThan(2);
    expect(new Set(counts)).toEqual(new Set([5]));
    expect(readerView(reader, "Pilot").cases).toBe(2005);
    reader.$client.close();
  });

  it("leaves nothing when the import fails half way, in the same process", () => {
    const before = raw("select count(*) as n from events");
    let chunks = 0;
    expect(() =>
      importCases(
        db,
        { studyName: "Bulk", bytes: csv(3000), filename: "bulk.csv", actorId: null },
        {
          chunkBudgetMs: 1,
          onChunk: () => {
            if (++chunks === 3) throw new Error("disk gone");
          },
        },
      ),
    ).toThrow("disk gone");
    expect(raw("select count(*) as n from cases")).toBe(0);
    expect(raw("select count(*) as n from case_sections")).toBe(0);
    expect(raw("select count(*) as n from studies")).toBe(0);
    expect(raw("select count(*) as n from events")).toBe(before);
    expect(raw("select count(*) as n from import_runs")).toBe(0);
  });

  it("a killed import leaves nothing visible; its rows are removed at the next start or import", async () => {
    const file = join(path, "..", "bulk.csv");
    writeFileSync(file, csv(3000));
    const killed = await runChild([path, file, "Bulk", "1", "kill-after-chunk"]);
    expect(killed.signal).toBe("SIGKILL");
    expect(killed.out).toMatch(/^chunk \d+\nchunk \d+\n$/);
    // Its rows are in the file, but no reader sees them.
    expect(raw("select count(*) as n from cases")).toBeGreaterThan(0);
    expect(raw("select count(*) as n from import_runs")).toBe(1);
    expect(readerView(db, "Bulk")).toEqual({ studies: [], cases: null, progress: null });
    // The next start (or the next import, which calls the same cleaning first) removes them.
    expect(cleanAbandonedRuns(db)).toBe(1);
    for (const table of ["cases", "case_sections", "events", "studies", "import_runs"])
      expect(raw(`select count(*) as n from ${table}`), table).toBe(0);
    // And the same file imports completely afterwards.
    const again = await runChild([path, file, "Bulk", "1"]);
    expect(again.out).toMatch(/done\n$/);
    expect(readerView(db, "Bulk").cases).toBe(3000);
  });

  it("the next import removes what a killed one left, then imports", async () => {
    const file = join(path, "..", "bulk.csv");
    writeFileSync(file, csv(2000));
    await runChild([path, file, "Bulk", "1", "kill-after-chunk"]);
    expect(raw("select count(*) as n from import_runs")).toBe(1);
    const result = importCases(db, { studyName: "Bulk", bytes: csv(2000), filename: "bulk.csv", actorId: null });
    expect(result).toMatchObject({ written: true, create: 2000 });
    expect(raw("select count(*) as n from cases")).toBe(2000);
    expect(raw("select count(*) as n from import_runs")).toBe(0);
  });

  it("lets saves through while an import runs in another process", async () => {
    importCases(db, { studyName: "Pilot", bytes: csv(2), filename: "a.csv", actorId: null });
    const ann = await makeUser(db, "annotator1", ["annotator"]);
    const ann2 = await makeUser(db, "annotator2", ["annotator"]);
    autoAssign(db, {
      studyId: requireStudyByName(db, "Pilot").id,
      annotatorIds: [ann.id, ann2.id],
      seed: 1,
      actorId: null,
    });
    const caseId = listStudyCases(db, requireStudyByName(db, "Pilot").id)[0]!.id;
    const file = join(path, "..", "bulk.csv");
    writeFileSync(file, csv(6000, "Other", 100));
    // The web server's connection: a 200 ms busy timeout, after which a save would answer 503.
    const web = openDatabase(path, { busyTimeoutMs: 200 });
    const child = runChild([path, file, "Bulk", "5"]);
    let running = true;
    void child.then(() => (running = false));
    let version = 0;
    let saves = 0;
    let duringImport = 0;
    const failures: string[] = [];
    while (running) {
      try {
        const importing = raw("select count(*) as n from import_runs") > 0;
        const r = saveDraft(web, { userId: ann.id, caseId, values: sufficient("F32.1", 1), version });
        if (!r.ok) failures.push(r.message);
        else {
          version = r.version;
          saves++;
          if (importing) duringImport++;
        }
      } catch (error) {
        failures.push(String(error));
      }
      await new Promise((r) => setTimeout(r, 2));
    }
    const { out } = await child;
    expect(out).toMatch(/done\n$/);
    expect(failures).toEqual([]);
    expect(duringImport).toBeGreaterThan(0);
    expect(saves).toBeGreaterThan(duringImport - 1);
    expect(readerView(web, "Bulk").cases).toBe(6000);
    web.$client.close();
  });
});

describe("the study counters and a bulk import", () => {
  /** `n` cases from `first`, every other one with reference labels (so "reference" and "unassigned" both occur). */
  const labelled = (n: number, first = 0, bad = false) => {
    const lines = [
      [
        "id",
        "age_group",
        "sex",
        ...SECTION_KINDS,
        "diagnosis_sufficiency",
        "diagnosis_sufficiency_agreement",
        "diagnosis",
        "diagnosis_agreement",
        "earliest_sufficient_section",
      ].join(","),
    ];
    for (let i = first; i < first + n; i++) {
      const labels = i % 2 ? ["1", "1", "F32.1", "1", "2"] : ["", "", "", "", ""];
      lines.push([`c${i}`, "38-47", "F", `Low mood ${i}.`, "None.", "Calm.", "", "", ...labels].join(","));
    }
    if (bad) lines.push(["", "38-47", "F", "No id.", "None.", "Calm.", "", "", "", "", "", "", ""].join(","));
    return new TextEncoder().encode(lines.join("\n") + "\n");
  };
  /** The counters against the visible rows, and each visible case's state against the rule the triggers apply. */
  const expectCountersTrue = (name: string) => {
    const study = requireStudyByName(db, name);
    expect(studyStateCounts(db, study.id)).toEqual(countByState(listCaseProgress(db, study.id)));
    const wrong = db.$client
      .prepare(
        `select count(*) as n from cases c where c.study_id = ? and c.progress_state is not coalesce((select status from case_outcomes where case_id = c.id), case when exists (select 1 from reference_labels where case_id = c.id and diagnosis_sufficiency is not null) then 'reference' when (select count(*) from assignments where case_id = c.id) >= 2 then 'in_annotation' else 'unassigned' end)`,
      )
      .get(study.id) as { n: number };
    expect(wrong.n).toBe(0);
  };
  const totals = () =>
    db.$client.prepare("select study_id, state, n from study_progress_counts where n <> 0 order by 1, 2").all();

  it("count an import's cases once, when it finishes, and none of them while it runs", async () => {
    importCases(db, { studyName: "Counted", bytes: labelled(6), filename: "a.csv", actorId: null });
    const a = await makeUser(db, "a1", ["annotator"]);
    const b = await makeUser(db, "a2", ["annotator"]);
    const study = requireStudyByName(db, "Counted");
    autoAssign(db, { studyId: study.id, annotatorIds: [a.id, b.id], seed: 1, actorId: null });
    expectCountersTrue("Counted");
    const before = totals();
    const during: unknown[] = [];
    importCases(
      db,
      { studyName: "Counted", bytes: labelled(1500, 6), filename: "b.csv", actorId: null },
      { chunkBudgetMs: 1, onChunk: () => during.push(totals()) },
    );
    expect(during.length).toBeGreaterThan(2);
    for (const t of during) expect(t).toEqual(before);
    expectCountersTrue("Counted");
    expect(studyStateCounts(db, study.id).reference).toBe(3 + 750);
    // A new study, written hidden: counted at the end only, too.
    importCases(
      db,
      { studyName: "Fresh", bytes: labelled(1001), filename: "c.csv", actorId: null },
      { chunkBudgetMs: 1 },
    );
    expectCountersTrue("Fresh");
    expect(studyStateCounts(db, requireStudyByName(db, "Fresh").id)).toMatchObject({ reference: 500, unassigned: 501 });
  });

  it("are unchanged by an import that fails after writing chunks, and by its removal", () => {
    importCases(db, { studyName: "Kept", bytes: labelled(10), filename: "a.csv", actorId: null });
    const before = totals();
    const result = importCases(
      db,
      { studyName: "Kept", bytes: labelled(1500, 10, true), filename: "b.csv", actorId: null },
      { chunkBudgetMs: 1 },
    );
    expect(result.written).toBe(false);
    expect(totals()).toEqual(before);
    expectCountersTrue("Kept");
  });
});

describe("a file read as a stream", () => {
  it('is not held to the upload\'s 50 MB limit: it passed its own before it was read (docs/formats.md, "Limits")', () => {
    const bytes = csv(3);
    // A command-line import of a file larger than an upload may be: its size is declared, its bytes streamed.
    const result = importCases(db, {
      studyName: "Streamed",
      bytes: { byteLength: MAX_FILE_BYTES + 1, chunks: () => [bytes] },
      filename: "big.csv",
      actorId: null,
    });
    expect(result.parse.errors).toEqual([]);
    expect(result.written).toBe(true);
    expect(listStudyCases(db, requireStudyByName(db, "Streamed").id).length).toBe(3);
  });

  it("an upload of the same declared size is still refused", () => {
    const result = importCases(db, {
      studyName: "Uploaded",
      bytes: new Uint8Array(MAX_FILE_BYTES + 1),
      filename: "big.csv",
      actorId: null,
    });
    expect(result.written).toBe(false);
    expect(result.parse.errors[0]?.message).toMatch(/the limit is/);
  });
});

describe("one import per study at a time", () => {
  const register = (pid: number, heartbeatAt: number) =>
    db
      .insert(importRuns)
      .values({ id: "other", target: "cases:Pilot", pid, host: hostname(), startedAt: 1, heartbeatAt })
      .run();

  it("refuses, without writing, while another live import of the same study runs", () => {
    register(process.pid, Date.now());
    expect(() =>
      importCases(db, { studyName: "Pilot", bytes: csv(5), filename: "a.csv", actorId: null }, { waitMs: 0 }),
    ).toThrow(/Another import into the same place is still running/);
    expect(raw("select count(*) as n from cases")).toBe(0);
    // Another study is not held up.
    expect(importCases(db, { studyName: "Other", bytes: csv(5), filename: "a.csv", actorId: null }).written).toBe(true);
  });

  it("takes over from a run whose process is gone, or whose heartbeat is older than ten minutes", () => {
    const gone = spawnSync(process.execPath, ["-e", "0"]).pid!;
    register(gone, Date.now());
    expect(
      importCases(db, { studyName: "Pilot", bytes: csv(5), filename: "a.csv", actorId: null }, { waitMs: 0 }).written,
    ).toBe(true);
    register(process.pid, Date.now() - 11 * 60 * 1000);
    expect(
      importCases(
        db,
        { studyName: "Pilot", bytes: csv(5, "Low mood", 5), filename: "b.csv", actorId: null },
        { waitMs: 0 },
      ).written,
    ).toBe(true);
    expect(raw("select count(*) as n from import_runs")).toBe(0);
  });
});

describe("the guard of a bulk import runs in its last transaction", () => {
  async function setUp() {
    importCases(db, { studyName: "Pilot", bytes: csv(3), filename: "a.csv", actorId: null });
    const studyId = requireStudyByName(db, "Pilot").id;
    const ann = await makeUser(db, "annotator1", ["annotator"]);
    const ann2 = await makeUser(db, "annotator2", ["annotator"]);
    autoAssign(db, { studyId, annotatorIds: [ann.id, ann2.id], seed: 1, actorId: null });
    const ids = listStudyCases(db, studyId).map((c) => c.id);
    return { studyId, ann, ids };
  }

  // The file changes the text of c0 (not annotated when the import starts) and adds 2,000 new cases.
  const changed = () => {
    const text = new TextDecoder().decode(csv(2003));
    return new TextEncoder().encode(text.replace("Low mood 0.", "New text for c0."));
  };

  it("refuses the whole import when a first draft lands mid-import on a case it would replace", async () => {
    const { studyId, ann, ids } = await setUp();
    let saved = false;
    const result = importCases(
      db,
      { studyName: "Pilot", bytes: changed(), filename: "b.csv", actorId: null },
      {
        chunkBudgetMs: 1,
        onChunk: () => {
          if (saved) return;
          saved = true;
          const r = saveDraft(db, { userId: ann.id, caseId: ids[0]!, values: sufficient("F32.1", 1), version: 0 });
          expect(r.ok).toBe(true);
        },
      },
    );
    expect(saved).toBe(true);
    expect(result.written).toBe(false);
    expect(result.conflicts.map((c) => c.message).join()).toMatch(/\(id c0\) the case already has annotations/);
    // Nothing of the file: the text is the old one, no new case exists even hidden, and the draft is kept.
    expect(getCaseSections(db, ids[0]!)[0]!.content).toBe("Low mood 0.");
    expect(listStudyCases(db, studyId)).toHaveLength(3);
    expect(raw("select count(*) as n from cases")).toBe(3);
    expect(raw("select count(*) as n from import_runs")).toBe(0);
    expect(raw("select count(*) as n from annotations")).toBe(1);
  });

  it("imports when the draft lands on a case the file leaves unchanged, and keeps the draft", async () => {
    const { studyId, ann, ids } = await setUp();
    let saved = false;
    const result = importCases(
      db,
      { studyName: "Pilot", bytes: changed(), filename: "b.csv", actorId: null },
      {
        chunkBudgetMs: 1,
        onChunk: () => {
          if (saved) return;
          saved = true;
          expect(
            saveDraft(db, { userId: ann.id, caseId: ids[1]!, values: sufficient("F32.1", 1), version: 0 }).ok,
          ).toBe(true);
        },
      },
    );
    expect(result).toMatchObject({ written: true, create: 2000, update: 1 });
    expect(getCaseSections(db, ids[0]!)[0]!.content).toBe("New text for c0.");
    expect(listStudyCases(db, studyId)).toHaveLength(2003);
    expect(raw("select count(*) as n from annotations")).toBe(1);
  });
});
