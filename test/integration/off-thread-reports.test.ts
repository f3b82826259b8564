/**
 * The progress page's gold export download and the agreement statistics page (and its downloads) are made on worker
 * threads (docs/architecture.md, "Background jobs"): this thread keeps running while a big study's export is made —
 * a timer on it ticks meanwhile — and the answers are exactly the ones made on this thread: the same bytes of every
 * export file, the same page data, the same PNG of a chart; a refusal is the same refusal and leaves no file behind.
 */
import { readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { importCases, requireStudyByName } from "../../app/annotation/studies.server";
import { exportGold, goldFileOffThread, type GoldFile } from "../../app/gold/gold-export.server";
import type { Db } from "../../app/platform/db.server";
import {
  getStatsPage,
  getStatsPageOffThread,
  getStudyReportFile,
  getStudyReportFileOffThread,
} from "../../app/study-report/study-report.server";
import { freshDb } from "../support/db";

let db: Db;
let cleanup: () => void;
beforeEach(() => ({ db, cleanup } = freshDb()));
afterEach(() => cleanup());

const HEADER =
  "id,age_group,sex,presenting_symptoms,psychiatric_history,psychiatric_exam,psychological_exam,secondary_diagnoses";
const LABELS =
  ",diagnosis_sufficiency,diagnosis_sufficiency_agreement,diagnosis,diagnosis_agreement,earliest_sufficient_section";

/** A study of `n` notes with reference labels (every case final), and `open` more without (not final). */
function study(name: string, n: number, open = 0): number {
  const labelled = [HEADER + LABELS];
  for (let i = 0; i < n; i++)
    labelled.push(`r${i},38-47,F,Low mood for ${i % 50} weeks.,No admissions.,Tearful.,,,1,${i % 3 ? 1 : 0},F32.1,1,2`);
  const files: [string[], string][] = [[labelled, "labelled.csv"]];
  if (open) files.push([[HEADER, ...Array.from({ length: open }, (_, i) => `o${i},18-27,M,A.,B.,C.,,`)], "open.csv"]);
  for (const [lines, filename] of files) {
    const r = importCases(db, {
      studyName: name,
      bytes: new TextEncoder().encode(lines.join("\n") + "\n"),
      filename,
      actorId: null,
    });
    expect(r.ok).toBe(true);
  }
  return requireStudyByName(db, name).id;
}

const goldFolders = () => readdirSync(tmpdir()).filter((f) => f.startsWith("concord-gold-")).length;

async function text(body: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(body).text();
}

describe("the gold export download", () => {
  it("is made on a worker thread, with every file's bytes those of the export made here", async () => {
    const studyId = study("Big", 20_000);
    const now = new Date("2030-01-02T03:04:05Z");
    const here = exportGold(db, { studyId, now });
    if (!here.ok) throw new Error(here.message);
    const folders = goldFolders();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    let first;
    try {
      first = await goldFileOffThread(db, { studyId, now, file: "data_gt.json" });
    } finally {
      clearInterval(timer);
    }
    if (!first.ok) throw new Error(first.message);
    // This thread ran its timer while the worker exported (an export here would have held it for the whole time).
    expect(ticks).toBeGreaterThan(0);
    expect(await text(first.body)).toBe(here.files["data_gt.json"]);
    for (const file of ["samples.json", "data.csv", "manifest.json"] as GoldFile[]) {
      const r = await goldFileOffThread(db, { studyId, now, file });
      if (!r.ok) throw new Error(r.message);
      expect(await text(r.body)).toBe(here.files[file]);
    }
    // The file is opened and its folder removed before the answer streams: nothing is left on disk.
    expect(goldFolders()).toBe(folders);
  }, 60_000);

  it("refuses as the export here does when cases are not final, and leaves nothing behind", async () => {
    const studyId = study("Open", 5, 2);
    const here = exportGold(db, { studyId });
    expect(here.ok).toBe(false);
    const folders = goldFolders();
    const off = await goldFileOffThread(db, { studyId, file: "data.csv" });
    expect(off).toEqual({ ok: false, counts: here.counts, message: !here.ok && here.message });
    expect(goldFolders()).toBe(folders);
    const partial = await goldFileOffThread(db, { studyId, file: "data.csv", allowPartial: true });
    if (!partial.ok) throw new Error(partial.message);
    const expected = exportGold(db, { studyId, allowPartial: true });
    expect(await text(partial.body)).toBe(expected.ok && expected.files["data.csv"]);
  });
});

/** A page's data with the charts' clip-path ids (a counter of the thread that drew them) left out. */
const figures = (page: unknown) => JSON.parse(JSON.stringify(page).replace(/clip\d+/g, "clip")) as unknown;

describe("the agreement statistics page", () => {
  it("is built on a worker thread, as it is built here, and so are its downloads", async () => {
    const studyId = study("Stats", 300);
    const here = await getStatsPage(db, studyId);
    expect(here).not.toBeNull();
    expect(await getStatsPageOffThread(db, studyId)).toEqual(here);
    expect(await getStatsPageOffThread(db, studyId + 99)).toBeNull();
    const chart = here!.charts[0]!.id;
    const png = await getStudyReportFileOffThread(db, studyId, `${chart}.png`);
    expect(png?.contentType).toBe("image/png");
    // The PNG signature: the chart was rasterised on the worker thread (a native addon there too).
    expect([...(png!.body as Uint8Array).slice(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    expect(png).toEqual(await getStudyReportFile(db, studyId, `${chart}.png`));
    expect(await getStudyReportFileOffThread(db, studyId, "study-report.md")).toEqual(
      await getStudyReportFile(db, studyId, "study-report.md"),
    );
    expect(await getStudyReportFileOffThread(db, studyId, "nope.exe")).toBeNull();
  }, 60_000);

  it("is kept until the study's figures change: the next request costs one row, a change makes it again", async () => {
    const studyId = study("Kept", 60);
    const first = await getStatsPageOffThread(db, studyId);
    // The same object: the worker was not asked again.
    expect(await getStatsPageOffThread(db, studyId)).toBe(first);
    // Another batch size is another page.
    const eight = await getStatsPageOffThread(db, studyId, { batchSize: 8 });
    expect(eight).not.toBe(first);
    expect(eight!.agreement.over_time.batch_size).toBe(8);
    // A renamed study, a changed reference label: each makes the page again, with what changed.
    db.$client.prepare("UPDATE studies SET name = 'Renamed' WHERE id = ?").run(studyId);
    const renamed = await getStatsPageOffThread(db, studyId);
    expect(renamed).not.toBe(first);
    expect(renamed!.report.study.name).toBe("Renamed");
    db.$client
      .prepare(
        "UPDATE reference_labels SET diagnosis_sufficiency = NULL WHERE case_id IN (SELECT id FROM cases WHERE study_id = ?)",
      )
      .run(studyId);
    const relabelled = await getStatsPageOffThread(db, studyId);
    expect(relabelled).not.toBe(renamed);
    expect(figures(relabelled)).toEqual(figures(await getStatsPage(db, studyId)));
    expect(await getStatsPageOffThread(db, studyId)).toBe(relabelled);
  }, 60_000);

  it("comes from a worker that stays, which follows the database asked for and answers requests side by side", async () => {
    const first = study("One", 40);
    const other = freshDb();
    try {
      const here = db;
      db = other.db;
      const second = study("Two", 70);
      db = here;
      // Requests for two files at once, then one after the other: each answer is its own database's.
      const [a, b] = await Promise.all([getStatsPageOffThread(db, first), getStatsPageOffThread(other.db, second)]);
      expect(figures(a)).toEqual(figures(await getStatsPage(db, first)));
      expect(figures(b)).toEqual(figures(await getStatsPage(other.db, second)));
      expect(a!.report.study.name).toBe("One");
      expect(b!.report.study.name).toBe("Two");
      expect((await getStatsPageOffThread(db, first))!.report.study.name).toBe("One");
    } finally {
      other.cleanup();
    }
  }, 60_000);
});
