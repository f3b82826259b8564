/**
 * screening-import reads its files in two passes (docs/reliability.md, "Memory bounded by the longest line"): the
 * first checks every file and keeps each row's id and hash; the second reads them again through `secondPass`,
 * writes the new rows batch by batch behind the import run, and a file rewritten between the passes is refused and
 * leaves nothing — into a new study (behind its hidden study) or an existing one (behind the run's ids).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { importFileSource } from "../../app/cli/io";
import type { ImportSource } from "../../app/formats/import-source";
import type { Db } from "../../app/platform/db.server";
import { createScreeningStudy } from "../../app/screening/screening.server";
import {
  importIntoNewScreeningStudy,
  importScreeningFiles,
  type ScreeningFile,
} from "../../app/screening/screening-import.server";
import { freshDb } from "../support/db";
import { SETTINGS } from "../support/screening";

let db: Db;
let cleanup: () => void;
beforeEach(() => ({ db, cleanup } = freshDb()));
afterEach(() => cleanup());
const dir = mkdtempSync(join(tmpdir(), "concord-screening-two-pass-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const raw = (sql: string) => db.$client.prepare(sql).pluck().get() as number;
const pad = (i: number) => String(i).padStart(5, "0");

function itemsFile(name: string, from: number, n: number, text = (i: number) => `Item ${i}: low mood for weeks.`) {
  const lines: string[] = [];
  for (let i = from; i < from + n; i++)
    lines.push(JSON.stringify({ prompt_id: `p${pad(i)}`, prompt: [{ role: "user", content: text(i) }] }));
  const path = join(dir, name);
  writeFileSync(path, lines.join("\n") + "\n");
  return path;
}

function labelsFile(name: string, from: number, n: number) {
  const lines = ["id,label,category,rationale"];
  for (let i = from; i < from + n; i++) lines.push(`p${pad(i)},relevant,${SETTINGS.categories[0]},Because ${i}.`);
  const path = join(dir, name);
  writeFileSync(path, lines.join("\n") + "\n");
  return path;
}

/**
 * A streamed file whose passes are counted; `rewrite`, when given, replaces the file's text just before its second
 * pass starts (the first pass has checked it).
 */
function streamed(path: string, counter: { passes: number }, rewrite?: () => void): ScreeningFile {
  const json = path.endsWith(".jsonl");
  const source = importFileSource(path, "screening", { json });
  const before = () => {
    if (++counter.passes === 2) rewrite?.();
  };
  const counted: ImportSource = {
    ...source,
    sha256: () => source.sha256(),
    jsonlLines: () => {
      before();
      return source.jsonlLines();
    },
    csvRecords: (options) => {
      before();
      return source.csvRecords(options);
    },
  };
  return { source: counted, filename: path };
}

function tables() {
  return {
    studies: raw("select count(*) from screening_studies"),
    items: raw("select count(*) from screening_items"),
    labels: raw("select count(*) from screening_labels"),
    events: raw("select count(*) from events"),
    runs: raw("select count(*) from import_runs"),
    changedText: raw("select count(*) from screening_items where content like '%CHANGED%'"),
  };
}

describe("screening-import in two passes", () => {
  it("into a new study: each file read twice, written; a file rewritten between the passes leaves no study", () => {
    const items = { passes: 0 };
    const labels = { passes: 0 };
    const done = importIntoNewScreeningStudy(db, {
      name: "New",
      settings: SETTINGS,
      items: streamed(itemsFile("new-items.jsonl", 0, 1800), items),
      labels: streamed(labelsFile("new-labels.csv", 0, 1800), labels),
      actorId: null,
    });
    expect(done.ok).toBe(true);
    expect([items.passes, labels.passes]).toEqual([2, 2]);
    expect(tables()).toMatchObject({ studies: 1, items: 1800, labels: 1800, runs: 0 });

    // The labels file changes after its first pass, when the items have already been written in the second.
    const before = tables();
    const path = labelsFile("new-labels-2.csv", 0, 1800);
    const counter = { passes: 0 };
    const rewritten = streamed(path, counter, () =>
      writeFileSync(path, labelsFileText(0, 1800).replace("Because 1700.", "Because 17OO.")),
    );
    let chunks = 0;
    expect(() =>
      importIntoNewScreeningStudy(db, {
        name: "New 2",
        settings: SETTINGS,
        items: streamed(itemsFile("new-items-2.jsonl", 0, 1800), { passes: 0 }),
        labels: rewritten,
        actorId: null,
        onChunk: () => chunks++,
      }),
    ).toThrow(/new-labels-2\.csv: the file changed while it was being imported; nothing was imported/);
    expect(counter.passes).toBe(2);
    // Rows were written before the change was found, and removed with the hidden study.
    expect(chunks).toBeGreaterThan(0);
    expect(tables()).toEqual(before);
  });

  it("into an existing study: new rows behind the run, changed rows last; a rewritten file changes nothing", () => {
    const study = createScreeningStudy(db, { name: "Old", settings: SETTINGS, actorId: null });
    const first = importScreeningFiles(db, {
      studyId: study.id,
      items: streamed(itemsFile("old-items.jsonl", 0, 200), { passes: 0 }),
      actorId: null,
    });
    expect(first.written).toBe(true);

    // 200 items kept, 5 changed, 1600 new; read twice, every file.
    const text = (i: number) => (i < 5 ? `Item ${i}: CHANGED.` : `Item ${i}: low mood for weeks.`);
    const counter = { passes: 0 };
    const r = importScreeningFiles(db, {
      studyId: study.id,
      items: streamed(itemsFile("more-items.jsonl", 0, 1800, text), counter),
      labels: streamed(labelsFile("more-labels.csv", 0, 1800), { passes: 0 }),
      actorId: null,
    });
    expect(r.ok).toBe(true);
    expect(counter.passes).toBe(2);
    expect(r.files.map((f) => [f.kind, f.created, f.changed, f.unchanged])).toEqual([
      ["items", 1600, 5, 195],
      ["labels", 1800, 0, 0],
    ]);
    expect(tables()).toMatchObject({ items: 1800, labels: 1800, runs: 0, changedText: 5 });

    // Rewritten between the passes: the items file (one new item's text), then the labels file after the new items
    // were written. Each time nothing changes: no new row, no changed row, no event.
    for (const which of ["items", "labels"] as const) {
      const before = tables();
      const itemsPath = itemsFile(`rewrite-${which}.jsonl`, 0, 3000, (i) =>
        i < 5 ? `Item ${i}: CHANGED AGAIN.` : text(i),
      );
      const labelsPath = labelsFile(`rewrite-${which}.csv`, 0, 3000);
      const items = streamed(itemsPath, { passes: 0 }, () => {
        if (which === "items") writeFileSync(itemsPath, itemsFileText(0, 3000).replace("Item 2500:", "Item 25OO:"));
      });
      const labels = streamed(labelsPath, { passes: 0 }, () => {
        if (which === "labels")
          writeFileSync(labelsPath, labelsFileText(0, 3000).replace("Because 2999.", "Because 2999!"));
      });
      expect(() => importScreeningFiles(db, { studyId: study.id, items, labels, actorId: null })).toThrow(
        new RegExp(`rewrite-${which}\\.(jsonl|csv): the file changed while it was being imported`),
      );
      expect(tables()).toEqual(before);
    }
  });
});

function itemsFileText(from: number, n: number): string {
  const lines: string[] = [];
  for (let i = from; i < from + n; i++)
    lines.push(
      JSON.stringify({
        prompt_id: `p${pad(i)}`,
        prompt: [{ role: "user", content: `Item ${i}: low mood for weeks.` }],
      }),
    );
  return lines.join("\n") + "\n";
}

function labelsFileText(from: number, n: number): string {
  const lines = ["id,label,category,rationale"];
  for (let i = from; i < from + n; i++) lines.push(`p${pad(i)},relevant,${SETTINGS.categories[0]},Because ${i}.`);
  return lines.join("\n") + "\n";
}
