/**
 * Rater quality on a temporary database, through the real services (docs/rater-quality.md): retests appear only once
 * the wash-out holds and the sample is the seeded one; a retest or calibration item looks like any case in the list
 * and the workspace data (same keys and structure); their labels never reach annotations, gold, adjudication, the
 * inter-rater report or the reference-format export; the training round closes real work until done and shows the
 * reference after each submission; the calibration CSV import reports FILE:LINE; the CLI validates its flags.
 */
import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { annotations, assignments, caseOutcomes, qualityItems } from "../../db/schema";
import type { Db } from "../../app/platform/db.server";
import { runCli } from "../../app/cli/index";
import type { CliIO } from "../../app/cli/command";
import { autoAssign } from "../../app/annotation/assignments.server";
import {
  EMPTY_VALUES,
  getAnnotatorItem,
  listAnnotatorCases,
  resolveAnnotatorItem,
  saveQualityAnnotation,
  submitAnnotation,
  type AnnotationValues,
} from "../../app/annotation/annotations.server";
import { importCases, listStudyCases, requireStudyByName } from "../../app/annotation/studies.server";
import {
  addCalibrationCase,
  getRaterQualityReport,
  importCalibrationCsv,
  raterQualityCsv,
  refreshMyQueue,
  setQualitySettings,
} from "../../app/annotation/rater-quality.server";
import { QUALITY_OFF, type QualitySettings } from "../../app/annotation/domain/rater-quality";
import { retestSample } from "../../app/work-items/domain/rater-quality";
import { getStudyReport } from "../../app/study-report/study-report.server";
import { exportGold } from "../../app/gold/gold-export.server";
import { getAdjudicationCase, listAdjudicationQueue } from "../../app/adjudication/adjudication.server";
import { freshDb, makeUser } from "../support/db";

let db: Db;
let cleanup: () => void;
beforeEach(() => ({ db, cleanup } = freshDb()));
afterEach(() => cleanup());

const SECTIONS = ["presenting_symptoms", "psychiatric_history", "psychiatric_exam"];
function notes(prefix: string, n: number): Uint8Array {
  const lines = Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      id: `${prefix}${i + 1}`,
      age_group: "28-37",
      sex: "F",
      ...Object.fromEntries(SECTIONS.map((k) => [k, `Text of ${k} for ${prefix}${i + 1}.`])),
    }),
  );
  return new TextEncoder().encode(lines.join("\n") + "\n");
}
const suff = (icd10: string, s: number, notes = ""): AnnotationValues => ({
  ...EMPTY_VALUES,
  sufficiency: "sufficient",
  icd10,
  earliestSection: s,
  notes,
});

/** The shape of a value: object keys (sorted) and array structure; every leaf (number, text, null) is just a leaf. */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return v.length ? [shape(v[0])] : [];
  if (v && typeof v === "object")
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, shape((v as Record<string, unknown>)[k])]),
    );
  return "leaf";
}

async function setup(settings: Partial<QualitySettings>) {
  const ann1 = await makeUser(db, "ann1", ["annotator"]);
  const ann2 = await makeUser(db, "ann2", ["annotator"]);
  const judge = await makeUser(db, "judge", ["adjudicator"]);
  importCases(db, { studyName: "Earlier", bytes: notes("e", 3), filename: "e.jsonl", actorId: null });
  importCases(db, { studyName: "Main", bytes: notes("m", 10), filename: "m.jsonl", actorId: null });
  const study = requireStudyByName(db, "Main");
  autoAssign(db, { studyId: study.id, annotatorIds: [ann1.id, ann2.id], seed: 3, actorId: null });
  setQualitySettings(db, { studyId: study.id, settings: { ...QUALITY_OFF, ...settings }, actorId: null });
  return { ann1, ann2, judge, study };
}

/** Submits the annotator's open items in list order through the same calls the workspace's action makes. */
function submitItem(userId: string, key: string, values: AnnotationValues, now: number) {
  const item = resolveAnnotatorItem(db, userId, key)!;
  return item.kind === "assignment"
    ? submitAnnotation(db, { userId, caseId: item.caseId, values, version: 0, now })
    : saveQualityAnnotation(db, { userId, id: item.id, values, version: 0, intent: "submit", now });
}

describe("test–retest", () => {
  it("re-presents the seeded sample only after the wash-out, as ordinary-looking items, and keeps the labels apart", async () => {
    const { ann1, ann2, judge, study } = await setup({ retestFraction: 0.2, washoutCases: 3, seed: 9 });
    const caseIds = listStudyCases(db, study.id).map((c) => c.id);
    // The sample is seeded over ann1's id, which is random: from seed 9 on, take the first seed whose sample has a
    // case with at least three others after it in list order, so that a retest must come back in this run.
    let seed = 9;
    while (retestSample(seed, ann1.id, caseIds, 0.2).every((id) => caseIds.indexOf(id) > caseIds.length - 4)) seed++;
    setQualitySettings(db, {
      studyId: study.id,
      settings: { ...QUALITY_OFF, retestFraction: 0.2, washoutCases: 3, seed },
      actorId: null,
    });
    const sample = retestSample(seed, ann1.id, caseIds, 0.2);
    expect(sample).toHaveLength(2);

    // ann2 labels everything F32.1; ann1 F33.0 on m1 (a dispute), F32.1 elsewhere.
    let t = 1_000;
    for (const key of listAnnotatorCases(db, ann2.id).map((r) => r.key))
      submitItem(ann2.id, key, suff("F32.1", 2), t++);

    const firstOrder: number[] = [];
    let openShape: unknown = null;
    for (;;) {
      refreshMyQueue(db, ann1.id, t);
      const open = listAnnotatorCases(db, ann1.id).find((r) => r.state === "not_started");
      if (!open) break;
      const item = resolveAnnotatorItem(db, ann1.id, open.key)!;
      if (item.kind === "assignment") {
        openShape ??= shape(getAnnotatorItem(db, { userId: ann1.id, key: open.key }));
        firstOrder.push(item.caseId);
        const ext = listStudyCases(db, study.id).find((c) => c.id === item.caseId)!.externalId;
        expect(submitItem(ann1.id, open.key, suff(ext === "m1" ? "F33.0" : "F32.1", 2), t++).ok).toBe(true);
      } else {
        // A retest: its case was submitted, and at least 3 other cases after it.
        const q = db.select().from(qualityItems).where(eq(qualityItems.id, item.id)).get()!;
        expect(q.kind).toBe("retest");
        expect(sample).toContain(q.caseId);
        expect(firstOrder.length - firstOrder.indexOf(q.caseId) - 1).toBeGreaterThanOrEqual(3);
        // The blinded view has exactly the shape of an ordinary case's view, open and submitted.
        expect(shape(getAnnotatorItem(db, { userId: ann1.id, key: open.key }))).toEqual(openShape);
        expect(submitItem(ann1.id, open.key, suff("F41.1", 3, "RETEST-NOTE"), t++).ok).toBe(true);
        const done = listAnnotatorCases(db, ann1.id).find((r) => r.key !== open.key && r.state === "locked")!;
        expect(shape(getAnnotatorItem(db, { userId: ann1.id, key: open.key }))).toEqual(
          shape(getAnnotatorItem(db, { userId: ann1.id, key: done.key })),
        );
      }
    }
    const retests = db.select().from(qualityItems).where(eq(qualityItems.annotatorId, ann1.id)).all();
    // Exactly the sampled cases that had 3 other submissions after them; a sampled case among the last three
    // never passed its wash-out, so it never came back.
    const washedOut = sample.filter((id) => firstOrder.length - firstOrder.indexOf(id) - 1 >= 3);
    expect(retests.map((r) => r.caseId).sort()).toEqual([...washedOut].sort());
    expect(washedOut.length).toBeGreaterThan(0);

    // The list: every row has the same keys, an opaque key and a label that is not a case id.
    const rows = listAnnotatorCases(db, ann1.id);
    expect(rows).toHaveLength(10 + washedOut.length);
    for (const r of rows) {
      expect(Object.keys(r).sort()).toEqual(Object.keys(rows[0]!).sort());
      expect(r.key).toMatch(/^k[0-9a-f]{12}$/);
      expect(r.externalId).not.toMatch(/^m\d+$/);
    }
    expect(rows.map((r) => r.position)).toEqual(rows.map((_, i) => i + 1));

    // Apart: two annotations per case, ten outcomes, the inter-rater report over ten pairs.
    expect(db.select().from(annotations).all()).toHaveLength(20);
    expect(
      db
        .select()
        .from(annotations)
        .all()
        .some((a) => a.notes === "RETEST-NOTE"),
    ).toBe(false);
    expect(db.select().from(caseOutcomes).all()).toHaveLength(10);
    expect(getStudyReport(db, study.id)!.sufficiency.n).toBe(10);
    // The adjudicator sees the dispute on m1 with the two first labels only.
    const queue = listAdjudicationQueue(db, judge.id);
    expect(queue).toHaveLength(1);
    const view = getAdjudicationCase(db, { userId: judge.id, caseId: queue[0]!.caseId });
    expect(JSON.stringify(view)).not.toContain("RETEST-NOTE");
    expect(JSON.stringify(view)).not.toContain("F41.1");

    // The report: ann1's retests, each F32.1 (or F33.0) first and F41.1 second.
    const report = getRaterQualityReport(db, study.id);
    expect(report.retest.pooled.n).toBe(washedOut.length);
    expect(report.retest.pooled.sufficiency.percent_agreement).toBe(1);
    expect(report.retest.pooled.diagnosis.diagnosis_level.percent_agreement).toBe(0);
    expect(raterQualityCsv(db, study.id).split("\r\n").filter(Boolean)).toHaveLength(1 + washedOut.length);
    expect(raterQualityCsv(db, study.id)).toContain(",retest,Main,");
  });

  it("leaves the reference-format export byte-identical", async () => {
    const { ann1, ann2, study } = await setup({ retestFraction: 0.2, washoutCases: 0, seed: 4 });
    let t = 1;
    for (const u of [ann2, ann1])
      for (const r of listAnnotatorCases(db, u.id).filter((x) => x.state === "not_started"))
        submitItem(u.id, r.key, suff("F32.1", 2), t++);
    const before = exportGold(db, { studyId: study.id, now: new Date(0) });
    refreshMyQueue(db, ann1.id, t);
    const open = listAnnotatorCases(db, ann1.id).filter((x) => x.state === "not_started");
    expect(open.length).toBe(2);
    for (const r of open) expect(submitItem(ann1.id, r.key, suff("F20.0", 1), t++).ok).toBe(true);
    const after = exportGold(db, { studyId: study.id, now: new Date(0) });
    expect(after).toEqual(before);
  });

  it("adds nothing to a study that configured nothing", async () => {
    const { ann1, study } = await setup({});
    let t = 1;
    for (const r of listAnnotatorCases(db, ann1.id)) submitItem(ann1.id, r.key, suff("F32.1", 2), t++);
    refreshMyQueue(db, ann1.id, t + 10 * 86_400_000);
    expect(db.select().from(qualityItems).all()).toEqual([]);
    // Without rater quality the list shows the study's own ids and case-id keys, as before.
    expect(listAnnotatorCases(db, ann1.id)[0]!.externalId).toMatch(/^m\d+$/);
    expect(study.id).toBeGreaterThan(0);
  });
});

describe("calibration cases and the training round", () => {
  it("mixes calibration cases in at the rate and reports accuracy, below the threshold marked", async () => {
    const { ann1, study } = await setup({ calibrationRate: 0.2, accuracyThreshold: 0.9 });
    for (const ext of ["e1", "e2"])
      addCalibrationCase(db, {
        studyId: study.id,
        actorId: null,
        entry: {
          sourceStudy: "Earlier",
          externalId: ext,
          purpose: "calibration",
          rationale: "",
          reference: {
            sufficiency: "sufficient",
            icd10: "F32.1",
            earliestSection: 2,
            missingInfo: [],
            missingOther: "",
          },
        },
      });
    refreshMyQueue(db, ann1.id, 1);
    const rows = listAnnotatorCases(db, ann1.id);
    expect(rows).toHaveLength(12); // 10 cases + round(0.2 × 10) calibration cases
    let t = 2;
    let k = 0;
    for (const r of rows) {
      const item = resolveAnnotatorItem(db, ann1.id, r.key)!;
      // The two calibration cases: one right (F32.1), one wrong (F33.0).
      const values = item.kind === "quality" ? suff(k++ === 0 ? "F32.1" : "F33.0", 2) : suff("F32.1", 2);
      expect(submitItem(ann1.id, r.key, values, t++).ok).toBe(true);
    }
    const [acc] = getRaterQualityReport(db, study.id).calibration;
    expect(acc!.annotator).toBe("ann1");
    expect(acc!.sufficiency.accuracy).toBe(1);
    expect(acc!.diagnosis_level.accuracy).toBe(0.5);
    expect(acc!.below).toEqual(["diagnosis_level"]);
    expect(db.select().from(annotations).where(eq(annotations.annotatorId, ann1.id)).all()).toHaveLength(10);
  });

  it("closes real work until the training cases are submitted, and shows the reference after each", async () => {
    const { ann1, study } = await setup({ training: true });
    addCalibrationCase(db, {
      studyId: study.id,
      actorId: null,
      entry: {
        sourceStudy: "Earlier",
        externalId: "e3",
        purpose: "training",
        rationale: "Low mood for two months with anhedonia.",
        reference: { sufficiency: "sufficient", icd10: "F32.1", earliestSection: 1, missingInfo: [], missingOther: "" },
      },
    });
    refreshMyQueue(db, ann1.id, 1);
    const rows = listAnnotatorCases(db, ann1.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.externalId).toBe("training 1 of 1");
    const caseId = listStudyCases(db, study.id)[0]!.id;
    const refused = submitAnnotation(db, { userId: ann1.id, caseId, values: suff("F32.1", 2), version: 0 });
    expect(refused).toMatchObject({ ok: false, status: 409 });
    // Real work is closed: by its opaque key (a case id names nothing in a study with rater quality).
    const key = db
      .select()
      .from(assignments)
      .where(eq(assignments.caseId, caseId))
      .all()
      .find((a) => a.annotatorId === ann1.id)!.itemKey!;
    expect(getAnnotatorItem(db, { userId: ann1.id, key })).toEqual({ gated: true });
    expect(getAnnotatorItem(db, { userId: ann1.id, key: String(caseId) })).toBeNull();

    const before = getAnnotatorItem(db, { userId: ann1.id, key: rows[0]!.key }) as { view: { training: unknown } };
    expect(before.view.training).toEqual({ reveal: null });
    expect(submitItem(ann1.id, rows[0]!.key, suff("F33.0", 1), 2)).toMatchObject({ ok: true, state: "locked" });
    const after = getAnnotatorItem(db, { userId: ann1.id, key: rows[0]!.key }) as {
      view: { training: { reveal: { reference: { icd10: string }; rationale: string } } };
    };
    expect(after.view.training.reveal.reference.icd10).toBe("F32.1");
    expect(after.view.training.reveal.rationale).toContain("anhedonia");
    expect(listAnnotatorCases(db, ann1.id)).toHaveLength(11);
    expect(submitAnnotation(db, { userId: ann1.id, caseId, values: suff("F32.1", 2), version: 0 }).ok).toBe(true);
  });

  it("imports a calibration CSV whole or reports FILE:LINE and writes nothing", async () => {
    const { study } = await setup({});
    const header = "study,case,purpose,sufficiency,icd10,earliest_section,missing_info,missing_other,rationale\n";
    const bad = importCalibrationCsv(db, {
      studyId: study.id,
      filename: "cal.csv",
      text:
        header +
        "Earlier,e1,calibration,sufficient,F32.1,2,,,ok\nEarlier,e9,calibration,sufficient,F32.1,2,,,\nMain,m1,training,insufficient,,,imaging,,\n",
      actorId: null,
    });
    expect(bad).toEqual({
      ok: false,
      errors: [
        'cal.csv:3: study "Earlier" has no case "e9"',
        expect.stringMatching(/^cal\.csv:4: a calibration case comes from another study/),
      ],
      warnings: [],
    });
    const good = importCalibrationCsv(db, {
      studyId: study.id,
      filename: "cal.csv",
      text:
        header +
        'Earlier,e1,calibration,sufficient,F32.1,2,,,"Clear, from section 2"\nEarlier,e2,training,insufficient,,,imaging;laboratory,,\n',
      actorId: null,
    });
    expect(good).toEqual({ ok: true, added: 2, skipped: 0, warnings: [] });
  });
});

describe("the command line", () => {
  async function cli(...argv: string[]) {
    let out = "";
    let err = "";
    const io: CliIO = { out: (t) => (out += t), err: (t) => (err += t), readStdin: async () => "", isTTY: false };
    return { code: await runCli(argv, io), out, err };
  }
  it("sets the settings through assign's flags and refuses bad ones with one line and exit 2", async () => {
    await makeUser(db, "ann1", ["annotator"]);
    await makeUser(db, "ann2", ["annotator"]);
    importCases(db, { studyName: "Main", bytes: notes("m", 4), filename: "m.jsonl", actorId: null });
    const ok = await cli(
      "assign",
      "--study",
      "Main",
      "--annotators",
      "ann1,ann2",
      "--retest-fraction",
      "0.25",
      "--washout-cases",
      "2",
    );
    expect(ok.code).toBe(0);
    expect(ok.out).toContain("retest 0.25 (wash-out 2 cases, 0 days)");
    const bad = await cli("rater-quality", "--study", "Main", "--retest-fraction", "0.9");
    expect(bad.code).toBe(2);
    expect(bad.err.trim().split("\n")).toHaveLength(1);
    expect(bad.err).toContain("--retest-fraction");
    const report = await cli("rater-quality", "--study", "Main", "--json");
    expect(report.code).toBe(0);
    expect(JSON.parse(report.out).settings.retestFraction).toBe(0.25);
  });
});
