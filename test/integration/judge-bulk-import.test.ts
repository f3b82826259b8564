/**
 * A big responses import into a new validation set (judge-import, the admin page's upload) leaves room for other
 * writers and stays all-or-nothing for readers (docs/reliability.md, "Bulk imports"): the set is created hidden, its
 * responses are written in short transactions, and the last transaction makes it visible. A reader on another
 * connection, through the services' own queries, sees no set until then; a failed import leaves nothing; a killed
 * one leaves a hidden set that the next start or import removes.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { importFileSource } from "../../app/cli/io";
import type { ImportSource } from "../../app/formats/import-source";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { importResponses, JUDGE_SET_PARENT } from "../../app/judge-validation/judge-responses.server";
import { cleanHiddenParents } from "../../app/platform/hidden-parents.server";
import { getJudgeSetByName, listJudgeSets } from "../../app/judge-validation/judge-sets.server";
import { cleanAbandonedRuns } from "../../app/platform/import-runs.server";
import { openDatabase, type Db } from "../../app/platform/db.server";
import { freshDb } from "../support/db";
import { runImportChild } from "../support/spawn-import";

let db: Db;
let path: string;
let cleanup: () => void;
beforeEach(() => ({ db, path, cleanup } = freshDb()));
afterEach(() => cleanup());

/** `n` responses in the simple format: 4 steps of n/4 samples from 3 models. */
function responses(n: number): Uint8Array {
  const lines = Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      id: `s${Math.floor(i / 4)}`,
      model: `model-${i % 3}`,
      strategy: "sequential_info_neutral_prompting",
      step: (i % 4) + 1,
      is_last_section: i % 4 === 3,
      response: `Moderate depressive episode (F32.1), response ${i}.`,
      features: {
        primary_answer: "committed",
        contingency: "none",
        info_request: "none",
        icd_codes: ["F32.1"],
        diagnosis_names: ["moderate depressive episode"],
      },
    }),
  );
  return new TextEncoder().encode(lines.join("\n") + "\n");
}

const raw = (sql: string) => db.$client.prepare(sql).pluck().get() as number;

/** What a reader on another connection sees of set `name`. */
function readerView(reader: Db, name: string) {
  return {
    sets: listJudgeSets(reader).map((s) => `${s.name}:${s.responses}`),
    named: getJudgeSetByName(reader, name)?.responses ?? null,
  };
}

describe("a big responses import into a new set", () => {
  it("writes in many short transactions and shows readers nothing until it is complete, then all of it", () => {
    importResponses(db, { setName: "Old", files: [{ bytes: responses(8), filename: "old.jsonl" }], actorId: null });
    const reader = openDatabase(path);
    const seen: ReturnType<typeof readerView>[] = [];
    let hidden = 0;
    const result = importResponses(
      db,
      { setName: "Bulk", files: [{ bytes: responses(3000), filename: "bulk.jsonl" }], actorId: null },
      {
        chunkBudgetMs: 1,
        onChunk: () => {
          seen.push(readerView(reader, "Bulk"));
          hidden = reader.$client.prepare("select count(*) from judge_responses").pluck().get() as number;
        },
      },
    );
    expect(result).toMatchObject({ ok: true, written: 3000 });
    expect(seen.length).toBeGreaterThan(2);
    // Between chunks the rows were in the file but no reader saw the set.
    expect(hidden).toBeGreaterThan(8);
    for (const view of seen) expect(view).toEqual({ sets: ["Old:8"], named: null });
    expect(readerView(reader, "Bulk")).toEqual({ sets: ["Bulk:3000", "Old:8"], named: 3000 });
    expect(raw("select count(*) from import_runs")).toBe(0);
    expect(raw("select count(*) from events where action = 'import_responses'")).toBe(2);
    reader.$client.close();
  });

  it("that fails half way leaves nothing", () => {
    const before = raw("select count(*) from events");
    let chunks = 0;
    expect(() =>
      importResponses(
        db,
        { setName: "Bulk", files: [{ bytes: responses(2000), filename: "bulk.jsonl" }], actorId: null },
        {
          chunkBudgetMs: 1,
          onChunk: () => {
            if (++chunks === 3) throw new Error("disk gone");
          },
        },
      ),
    ).toThrow("disk gone");
    for (const table of ["judge_sets", "judge_responses", "judge_response_imports", "import_runs"])
      expect(raw(`select count(*) from ${table}`), table).toBe(0);
    expect(raw("select count(*) from events")).toBe(before);
  });

  it("that is killed leaves nothing visible; the next start or import removes its rows, then imports", async () => {
    const file = join(path, "..", "bulk.jsonl");
    writeFileSync(file, responses(3000));
    const killed = await runImportChild(["judge", path, file, "Bulk", "1", "kill-after-chunk"]);
    expect(killed.signal).toBe("SIGKILL");
    expect(killed.out).toMatch(/^chunk \d+\nchunk \d+\n$/);
    expect(raw("select count(*) from judge_responses")).toBeGreaterThan(0);
    expect(readerView(db, "Bulk")).toEqual({ sets: [], named: null });
    // The server's start cleans the same way (startup.server.ts).
    expect(cleanAbandonedRuns(db)).toBe(1);
    expect(cleanHiddenParents(db, [JUDGE_SET_PARENT])).toBe(1);
    for (const table of ["judge_sets", "judge_responses", "judge_response_imports", "import_runs"])
      expect(raw(`select count(*) from ${table}`), table).toBe(0);
    // Killed again, then the next import (which cleans first) imports the whole file.
    await runImportChild(["judge", path, file, "Bulk", "1", "kill-after-chunk"]);
    const again = await runImportChild(["judge", path, file, "Bulk", "1"]);
    expect(again.out).toMatch(/done\n$/);
    expect(readerView(db, "Bulk")).toEqual({ sets: ["Bulk:3000"], named: 3000 });
    expect(raw("select count(*) from judge_sets")).toBe(1);
  });

  it("refuses a second import of the same new set while the first is still writing", () => {
    let second: ReturnType<typeof importResponses> | undefined;
    const other = openDatabase(path);
    importResponses(
      db,
      { setName: "Bulk", files: [{ bytes: responses(2000), filename: "a.jsonl" }], actorId: null },
      {
        chunkBudgetMs: 1,
        onChunk: () => {
          second ??= importResponses(other, {
            setName: "Bulk",
            files: [{ bytes: responses(4), filename: "b.jsonl" }],
            actorId: null,
          });
        },
      },
    );
    expect(second).toMatchObject({ ok: false, written: 0 });
    expect(second!.refusal).toMatch(/Another import is still writing the new set "Bulk"/);
    expect(getJudgeSetByName(db, "Bulk")?.responses).toBe(2000);
    other.$client.close();
  });
});

describe("a streamed responses file (the command line's)", () => {
  it("is read in two passes, keeping keys only, and a file changed between them leaves nothing", () => {
    // docs/reliability.md, "Memory bounded by the longest line": the first pass keeps each response's identity and
    // hash; the second reads the file again through secondPass and writes it batch by batch.
    const dir = mkdtempSync(join(tmpdir(), "concord-judge-two-pass-"));
    try {
      for (const [setName, existing] of [
        ["New", false],
        ["Existing", true],
      ] as const) {
        if (existing)
          importResponses(db, { setName, files: [{ bytes: responses(8), filename: "old.jsonl" }], actorId: null });
        const file = join(dir, `${setName}.jsonl`);
        const text = Buffer.from(responses(3000))
          .toString("utf8")
          .replace(/"s(\d+)"/g, `"${setName}-s$1"`);
        writeFileSync(file, text);
        const source = importFileSource(file, "judge", { json: true });
        let passes = 0;
        const counted: ImportSource = {
          ...source,
          sha256: () => source.sha256(),
          jsonlLines: () => {
            passes++;
            return source.jsonlLines();
          },
        };
        const ok = importResponses(db, { setName, files: [{ stream: counted, filename: file }], actorId: null });
        expect(ok.ok).toBe(true);
        expect(ok.written).toBe(3000);
        expect(passes).toBe(2);
        expect(getJudgeSetByName(db, setName)?.responses).toBe(existing ? 3008 : 3000);

        // Rewritten after the first pass (one response's text changed): refused, nothing of it kept.
        const changing = join(dir, `${setName}-changing.jsonl`);
        const next = text.replace(/"s(\d+)"/g, '"t$1"').replace(/"[A-Za-z]+-s(\d+)"/g, `"${setName}-t$1"`);
        writeFileSync(changing, next);
        const second = importFileSource(changing, "judge", { json: true });
        let pass = 0;
        const rewritten: ImportSource = {
          ...second,
          sha256: () => second.sha256(),
          jsonlLines: () => {
            if (++pass === 2) writeFileSync(changing, next.replace("response 1700.", "response 17OO."));
            return second.jsonlLines();
          },
        };
        const target = existing ? setName : `${setName}-2`;
        const before = raw("select count(*) from judge_responses");
        expect(() =>
          importResponses(db, { setName: target, files: [{ stream: rewritten, filename: changing }], actorId: null }),
        ).toThrow(/the file changed while it was being imported/);
        expect(raw("select count(*) from judge_responses")).toBe(before);
        expect(raw("select count(*) from import_runs")).toBe(0);
        if (!existing) expect(getJudgeSetByName(db, target)).toBeNull();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
