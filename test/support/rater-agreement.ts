/**
 * The fixture of agreement per pair and over time (test/fixtures/study-report/rater_agreement.py →
 * rater-agreement.json) and the comparison of a result with it, shared by the unit and integration tests.
 */
import { readFileSync } from "node:fs";
import { expect } from "vitest";
import type { CaseLabel } from "../../app/labels/labels";
import { assignments } from "../../db/schema";
import type { Db } from "../../app/platform/db.server";
import { EMPTY_VALUES, submitAnnotation, type AnnotationValues } from "../../app/annotation/annotations.server";
import { importCases, listStudyCases, requireStudyByName } from "../../app/annotation/studies.server";
import type { MeasureAgreement, RaterAgreementRecord } from "../../app/study-report/domain/rater-agreement";

export interface FixtureCoefficient {
  value: number | null;
  se: number | null;
  ci95: [number, number] | null;
}
type FixtureMeasure = { n: number; n_agreed: number } & Record<
  "percent_agreement" | "cohen_kappa" | "gwet_ac1",
  FixtureCoefficient
>;
export interface FixtureBucket {
  n_cases: number;
  sufficiency: FixtureMeasure;
  diagnosis: FixtureMeasure;
}
export interface FixtureDataset {
  batch_size: number;
  records: { case: number; annotators: [string, string]; labels: [CaseLabel, CaseLabel]; submitted_at: number[] }[];
  expected: {
    annotators: string[];
    pairs: ({ annotators: [string, string] } & Omit<FixtureBucket, "n_cases">)[];
    by_week: ({ week: string; start: string } & FixtureBucket)[];
    by_batch: ({ batch: number; first: number; last: number; from: string; to: string } & FixtureBucket)[];
  };
}

export const raterFixture = JSON.parse(
  readFileSync(new URL("../fixtures/study-report/rater-agreement.json", import.meta.url), "utf8"),
) as Record<"four" | "two", FixtureDataset>;

export function recordsOf(d: FixtureDataset): RaterAgreementRecord[] {
  return d.records.map((r) => ({
    caseId: r.case,
    annotations: r.labels,
    annotators: r.annotators,
    completedAt: Math.max(...r.submitted_at),
  }));
}

export const COEFFICIENTS = ["percent_agreement", "cohen_kappa", "gwet_ac1"] as const;

/** Every value, SE and interval bound to 12 digits; a null in the fixture is a null with a reason here. */
export function expectMeasure(
  got: MeasureAgreement,
  want: FixtureMeasure,
  path: string,
  reasons: Record<string, string>,
): void {
  expect({ n: got.n, n_agreed: got.n_agreed }, path).toEqual({ n: want.n, n_agreed: want.n_agreed });
  for (const k of COEFFICIENTS) {
    const [g, w] = [got[k], want[k]];
    const at = `${path}.${k}`;
    if (w.value === null) {
      expect(g, at).toEqual({ value: null, se: null, ci95: null });
      expect(reasons[at], at).toBeTruthy();
      continue;
    }
    expect(g.value, at).toBeCloseTo(w.value, 12);
    if (w.se === null) expect(g.se, at).toBeNull();
    // A variance that is 0 in exact arithmetic (perfect agreement) comes out as ±1e-17 in either implementation, and
    // its square root as up to 1e-8: such SEs and their intervals are compared to 7 digits, the others to 12.
    const digits = w.se !== null && w.se < 1e-6 ? 7 : 12;
    if (w.se !== null) expect(g.se, at).toBeCloseTo(w.se, digits);
    if (w.ci95 === null) expect(g.ci95, at).toBeNull();
    else {
      expect(g.ci95![0], at).toBeCloseTo(w.ci95[0], digits);
      expect(g.ci95![1], at).toBeCloseTo(w.ci95[1], digits);
    }
  }
}

/** Pairs, weeks and batches of a result against a dataset's expected values (`parts` limits what is compared). */
export function expectAgreement(
  got: {
    annotators?: string[];
    pairwise?: {
      pairs: { annotators: [string, string]; sufficiency: MeasureAgreement; diagnosis: MeasureAgreement }[];
    };
    over_time?: {
      by_week: ({ week: string; start: string; n_cases: number } & Record<Measure, MeasureAgreement>)[];
      by_batch: ({ batch: number; first: number; last: number; from: string; to: string; n_cases: number } & Record<
        Measure,
        MeasureAgreement
      >)[];
    };
    reasons: Record<string, string>;
  },
  d: FixtureDataset,
): void {
  if (got.pairwise) {
    expect(got.annotators).toEqual(d.expected.annotators);
    expect(got.pairwise.pairs.map((p) => p.annotators)).toEqual(d.expected.pairs.map((p) => p.annotators));
    got.pairwise.pairs.forEach((p, i) => {
      for (const m of MEASURES) expectMeasure(p[m], d.expected.pairs[i]![m], `pairwise.pairs.${i}.${m}`, got.reasons);
    });
  }
  if (got.over_time) {
    expect(got.over_time.by_week.map((w) => [w.week, w.start, w.n_cases])).toEqual(
      d.expected.by_week.map((w) => [w.week, w.start, w.n_cases]),
    );
    expect(got.over_time.by_batch.map((b) => [b.batch, b.first, b.last, b.from, b.to, b.n_cases])).toEqual(
      d.expected.by_batch.map((b) => [b.batch, b.first, b.last, b.from, b.to, b.n_cases]),
    );
    for (const kind of ["by_week", "by_batch"] as const)
      got.over_time[kind].forEach((b, i) => {
        for (const m of MEASURES)
          expectMeasure(b[m], d.expected[kind][i]![m], `over_time.${kind}.${i}.${m}`, got.reasons);
      });
  }
}

type Measure = "sufficiency" | "diagnosis";
const MEASURES: Measure[] = ["sufficiency", "diagnosis"];

function casesJsonl(n: number): Uint8Array {
  const lines = Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      id: `ra-${String(i + 1).padStart(3, "0")}`,
      presenting_symptoms: `Case ${i + 1}: low mood.`,
      psychiatric_history: "None.",
      psychiatric_exam: "Flat affect.",
      psychological_exam: "BDI 20.",
      secondary_diagnoses: "None known.",
    }),
  );
  return new TextEncoder().encode(lines.join("\n") + "\n");
}

const valuesOf = (label: CaseLabel): AnnotationValues =>
  label.sufficiency === "sufficient"
    ? { ...EMPTY_VALUES, sufficiency: "sufficient", icd10: label.icd10, earliestSection: label.earliestSection }
    : { ...EMPTY_VALUES, sufficiency: "insufficient", missingInfo: [...label.missingInfo] };

/**
 * The fixture's study: its cases, each assigned to the two annotators the fixture names (written directly: the
 * assignment rule is not under test) and annotated through the service in submission order at the fixture's times.
 */
export function seedStudy(db: Db, name: string, d: FixtureDataset, users: Map<string, string>): number {
  expect(
    importCases(db, { studyName: name, bytes: casesJsonl(d.records.length), filename: "ra.jsonl", actorId: null })
      .written,
  ).toBe(true);
  const study = requireStudyByName(db, name);
  const cases = listStudyCases(db, study.id);
  d.records.forEach((r, i) => {
    const caseId = cases[i]!.id;
    for (const u of r.annotators)
      db.insert(assignments)
        .values({ caseId, annotatorId: users.get(u)!, assignedAt: 0, assignedBy: null })
        .run();
    r.annotators.forEach((u, k) => {
      const result = submitAnnotation(db, {
        userId: users.get(u)!,
        caseId,
        values: valuesOf(r.labels[k]!),
        version: 0,
        now: r.submitted_at[k]!,
      });
      expect(result.ok, JSON.stringify(result)).toBe(true);
    });
  });
  return study.id;
}
