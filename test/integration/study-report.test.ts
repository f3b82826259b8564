/**
 * The study report service (docs/statistics.md#the-study-agreement-report) on a temporary database: cases imported, assigned to two annotators
 * and annotated through the real services; the report reads the locked primary annotations as Annotator A/B in
 * case_outcomes.annotator_order, gold labels from the outcomes, and an imported dataset's reference labels; the
 * dashboard's downloads; and `stats` end to end.
 */
import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { caseOutcomes } from "../../db/schema";
import { runCli } from "../../app/cli/index";
import type { CliIO } from "../../app/cli/command";
import type { Db } from "../../app/platform/db.server";
import { autoAssign } from "../../app/annotation/assignments.server";
import { EMPTY_VALUES, submitAnnotation, type AnnotationValues } from "../../app/annotation/annotations.server";
import { importCases, listStudyCases, requireStudyByName } from "../../app/annotation/studies.server";
import {
  getStudyReport,
  getStudyReportFile,
  requireStudyReportByName,
} from "../../app/study-report/study-report.server";
import { ServiceError } from "../../app/platform/service-error";
import { getTimeOnTask } from "../../app/study-report/time-on-task.server";
import { freshDb, makeUser } from "../support/db";

let db: Db;
let cleanup: () => void;

beforeEach(() => {
  ({ db, cleanup } = freshDb());
});
afterEach(() => cleanup());

const SECTIONS = [
  "presenting_symptoms",
  "psychiatric_history",
  "psychiatric_exam",
  "psychological_exam",
  "secondary_diagnoses",
];

/** A JSONL file of cases with `t` non-empty sections each. */
function notes(cases: { id: string; t: number; age: string }[]): Uint8Array {
  const lines = cases.map((c) =>
    JSON.stringify({
      id: c.id,
      age_group: c.age,
      sex: "F",
      ...Object.fromEntries(SECTIONS.map((kind, i) => [kind, i < c.t ? `Text of ${kind} for ${c.id}.` : ""])),
    }),
  );
  return new TextEncoder().encode(lines.join("\n") + "\n");
}

const suff = (icd10: string, earliestSection: number): AnnotationValues => ({
  ...EMPTY_VALUES,
  sufficiency: "sufficient",
  icd10,
  earliestSection,
});
const insuff = (...missingInfo: string[]): AnnotationValues => ({
  ...EMPTY_VALUES,
  sufficiency: "insufficient",
  missingInfo,
});

async function annotatedStudy() {
  const one = await makeUser(db, "annotator1", ["annotator"]);
  const two = await makeUser(db, "annotator2", ["annotator"]);
  const cases = [
    { id: "n1", t: 5, age: "48-57" },
    { id: "n2", t: 4, age: "28-37" },
    { id: "n3", t: 3, age: "28-37" },
    { id: "n4", t: 5, age: "78+" },
    { id: "n5", t: 4, age: "" },
    { id: "n6", t: 3, age: "18-27" },
  ];
  const imported = importCases(db, { studyName: "Pilot", bytes: notes(cases), filename: "pilot.jsonl", actorId: null });
  expect(imported.written).toBe(true);
  const study = requireStudyByName(db, "Pilot");
  // Two annotators for two places per case: both annotate every case.
  autoAssign(db, { studyId: study.id, annotatorIds: [one.id, two.id], seed: 3, actorId: null });
  const id = new Map(listStudyCases(db, study.id).map((c) => [c.externalId, c.id]));
  const submit = (userId: string, externalId: string, values: AnnotationValues) => {
    const result = submitAnnotation(db, { userId, caseId: id.get(externalId)!, values, version: 0, now: 1_000 });
    expect(result.ok).toBe(true);
  };
  // n1 agreed (sections 2 and 3 → gold 2); n2 disputed on diagnosis (same category); n3 disputed on sufficiency;
  // n4 agreed insufficient; n5 only one annotation; n6 none.
  submit(one.id, "n1", suff("F32.1", 2));
  submit(two.id, "n1", suff("F32.1", 3));
  submit(one.id, "n2", suff("F32.1", 1));
  submit(two.id, "n2", suff("F32.2", 2));
  submit(one.id, "n3", suff("F20.0", 3));
  submit(two.id, "n3", insuff("substance_use"));
  submit(one.id, "n4", insuff("imaging"));
  submit(two.id, "n4", insuff("onset_duration", "imaging"));
  submit(one.id, "n5", suff("F41.1", 1));
  return { study, id, one, two };
}

describe("getStudyReport", () => {
  it("computes agreement from the locked primary annotations and gold from the outcomes", async () => {
    const { study } = await annotatedStudy();
    const report = getStudyReport(db, study.id)!;
    expect(report.study).toEqual({ id: study.id, name: "Pilot" });
    expect(report.case_counts).toEqual({
      n_cases: 6,
      annotations_in: { none: 1, one: 1, both: 4 },
      outcomes: { agreed: 2, disputed: 2, adjudicated: 0 },
      disputes_by_reason: { sufficiency: 1, diagnosis: 1 },
      with_gold: 2,
    });

    // Rows are annotator1 (the first username), whatever order the adjudicator saw: n3's sufficient label is theirs.
    const s = report.sufficiency;
    expect(report.raters.rule).toBe("rater_identity");
    expect(s.n).toBe(4);
    expect(s.matrix).toEqual([
      [2, 1],
      [0, 1],
    ]);
    expect(s.percent_agreement).toBeCloseTo(3 / 4, 12);
    expect(s.gwet_ac1.value).not.toBeNull();

    // Both sufficient: n1 (2, 3) and n2 (1, 2) — no exact agreement, two differences of one section.
    const e = report.earliest_section;
    expect(e.n).toBe(2);
    expect(e.exact_agreement).toBe(0);
    expect(e.differences.slice(0, 2).map((d) => d.n)).toEqual([0, 2]);
    expect(e.sections).toEqual([1, 2, 3, 4, 5]);

    expect(report.diagnosis.diagnosis_level.n_agreed).toBe(1);
    expect(report.diagnosis.category.n_agreed).toBe(2);
    expect(report.diagnosis.group.n_agreed).toBe(2);

    // Gold: n1 F32.1 τ 2 (T 5) and n4 insufficient (T 5).
    const l = report.label_distributions;
    expect(l.source).toEqual({ agreed: 2, adjudicated: 0, reference: 0 });
    expect(l.icd10_codes).toEqual([{ code: "F32.1", n: 1 }]);
    expect(l.missing_info).toEqual([
      { key: "onset_duration", n: 1 },
      { key: "imaging", n: 1 },
    ]);
    expect(l.action_labels.rows.map((r) => [r.column, r.clarify, r.diagnose, r.abstain])).toEqual([
      ["S1", 2, 0, 0],
      ["S2", 1, 1, 0],
      ["S3", 1, 1, 0],
      ["S4", 1, 1, 0],
      ["Final", 0, 1, 1],
    ]);
    expect(l.age_groups).toEqual([
      { age_group: "18-27", n: 1 },
      { age_group: "28-37", n: 2 },
      { age_group: "48-57", n: 1 },
      { age_group: "78+", n: 1 },
      { age_group: "Unknown", n: 1 },
    ]);
    expect(report.per_diagnosis.rows).toEqual([
      expect.objectContaining({ category: "F32", title: "Depressive episode", n: 1, n_diagnosis_agreed: 1 }),
    ]);
    expect(report.notes).toEqual([expect.stringContaining("2 disputed case(s) await adjudication")]);
  });

  it("takes an adjudicated case's gold label from its outcome", async () => {
    const { study, id } = await annotatedStudy();
    // The adjudication service's end state for n2 (not under test here): status adjudicated, gold = the decision.
    db.update(caseOutcomes)
      .set({
        status: "adjudicated",
        gold: { sufficiency: "sufficient", icd10: "F32.2", earliestSection: 1 },
      })
      .where(eq(caseOutcomes.caseId, id.get("n2")!))
      .run();
    const report = getStudyReport(db, study.id)!;
    expect(report.case_counts.outcomes).toEqual({ agreed: 2, disputed: 1, adjudicated: 1 });
    expect(report.case_counts.disputes_by_reason).toEqual({ sufficiency: 1, diagnosis: 1 });
    expect(report.label_distributions.source).toEqual({ agreed: 2, adjudicated: 1, reference: 0 });
    // F32 now has n1 (agreed) and n2 (adjudicated, the annotators differed at diagnosis level).
    expect(report.per_diagnosis.rows.map((r) => [r.category, r.n, r.n_diagnosis_agreed, r.n_category_agreed])).toEqual([
      ["F32", 2, 1, 2],
    ]);
    // Agreement is still that of the primary annotations (docs/statistics.md#the-study-agreement-report: before adjudication).
    expect(report.diagnosis.diagnosis_level.n_agreed).toBe(1);
  });

  it("uses an imported dataset's reference labels while the study has no gold labels of its own", () => {
    const header = [
      "id",
      "age_group",
      "sex",
      ...SECTIONS,
      "diagnosis_sufficiency",
      "diagnosis_sufficiency_agreement",
      "diagnosis",
      "diagnosis_agreement",
      "earliest_sufficient_section",
    ];
    const rows = [
      ["r1", "58-67", "M", "a", "b", "c", "", "", "1", "1", "F33.1", "1", "2"],
      ["r2", "58-67", "F", "a", "b", "c", "d", "", "1", "0", "F33.2", "0", "4"],
      ["r3", "18-27", "F", "a", "b", "c", "d", "e", "0", "1", "", "1", ""],
    ];
    const csv = [header, ...rows].map((r) => r.join(",")).join("\n") + "\n";
    importCases(db, {
      studyName: "Released",
      bytes: new TextEncoder().encode(csv),
      filename: "data.csv",
      actorId: null,
    });
    const report = requireStudyReportByName(db, "Released");
    expect(report.label_distributions.source).toEqual({ agreed: 0, adjudicated: 0, reference: 3 });
    expect(report.label_distributions.icd10_codes).toEqual([
      { code: "F33.1", n: 1 },
      { code: "F33.2", n: 1 },
    ]);
    expect(report.label_distributions.action_labels.rows.at(-1)).toEqual({
      column: "Final",
      clarify: 0,
      diagnose: 2,
      abstain: 1,
      total: 3,
    });
    expect(report.reference_agreement).toEqual({
      n: 3,
      sufficiency: { n: 3, n_agreed: 2, percent_agreement: 2 / 3 },
      diagnosis: { n: 3, n_agreed: 2, percent_agreement: 2 / 3 },
    });
    expect(report.per_diagnosis).toMatchObject({
      source: "reference_labels",
      n_categories: 1,
      rows: [{ category: "F33", n: 2, n_diagnosis_agreed: 1 }],
    });
    expect(report.sufficiency.n).toBe(0);
    expect(report.reasons["sufficiency.cohen_kappa"]).toMatch(/no case has both primary annotations/);
  });

  it("answers null for an unknown study id and a 404 ServiceError for an unknown name", () => {
    expect(getStudyReport(db, 999)).toBeNull();
    expect(() => requireStudyReportByName(db, "Nope")).toThrow(ServiceError);
  });
});

describe("getStudyReportFile (the dashboard's downloads)", () => {
  it("serves each chart as SVG, PNG and the CSV of its counts, and the report as JSON and Markdown", async () => {
    const { study } = await annotatedStudy();
    const csv = (await getStudyReportFile(db, study.id, "sufficiency-matrix.csv"))!;
    expect(csv.contentType).toMatch(/^text\/csv/);
    expect(csv.filename).toBe("pilot-sufficiency-matrix.csv");
    const counts = String(csv.body).trimEnd().split("\r\n");
    expect(counts[0]).toBe("annotator_a,annotator_b,n");
    expect(counts.slice(1).reduce((sum, line) => sum + Number(line.split(",")[2]), 0)).toBe(4);

    const svg = (await getStudyReportFile(db, study.id, "action-labels.svg"))!;
    expect(svg.contentType).toMatch(/^image\/svg\+xml/);
    expect(String(svg.body)).toMatch(/^<svg[^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(String(svg.body)).toContain("Final");

    const png = (await getStudyReportFile(db, study.id, "age-groups.png"))!;
    expect(png.contentType).toBe("image/png");
    expect(Buffer.from(png.body as Uint8Array).subarray(0, 8)).toEqual(
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    );

    const json = (await getStudyReportFile(db, study.id, "study-report.json"))!;
    expect(JSON.parse(String(json.body))).toEqual(JSON.parse(JSON.stringify(getStudyReport(db, study.id))));
    const md = (await getStudyReportFile(db, study.id, "study-report.md"))!;
    expect(String(md.body)).toMatch(/^# Study report: Pilot\n/);

    for (const bad of ["nope.svg", "action-labels.gif", "../secret.csv", "study-report.png", ""]) {
      expect(await getStudyReportFile(db, study.id, bad)).toBeNull();
    }
    expect(await getStudyReportFile(db, 999, "action-labels.csv")).toBeNull();
  });
});

describe("npm run concord -- stats", () => {
  async function run(argv: string[]) {
    let out = "";
    let err = "";
    const io: CliIO = { out: (t) => (out += t), err: (t) => (err += t), readStdin: async () => "", isTTY: false };
    return { code: await runCli(argv, io), out, err };
  }

  it("prints the service's report for a study in the database", async () => {
    const { study } = await annotatedStudy();
    const json = await run(["stats", "--study", "Pilot", "--json"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.out)).toEqual(
      JSON.parse(JSON.stringify({ ...getStudyReport(db, study.id), time_on_task: getTimeOnTask(db, study.id) })),
    );
    const text = await run(["stats", "--study", "Pilot"]);
    expect(text.out).toMatch(/Percent agreement\s+75\.0% \(3\/4\)/);
    const missing = await run(["stats", "--study", "Nope"]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/No study named "Nope"\. Known studies: "Pilot"/);
  });
});
