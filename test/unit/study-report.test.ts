/**
 * The study report (docs/statistics.md#the-study-agreement-report) on a small study worked out by hand: 14 cases, 12 with both primary
 * annotations (test/fixtures/study-report/study.json). Counts and the simple proportions are computed by hand in the
 * comments; the chance-corrected coefficients, standard errors and intervals come from an independent numpy/scipy
 * transcription of the formulas (test/fixtures/study-report/generate.py → expected.json).
 */
import { readFileSync } from "node:fs";
import { compile } from "vega-lite";
import { describe, expect, it } from "vitest";
import type { CaseLabel } from "../../app/labels/labels";
import { buildStudyReport, referenceLabelOf, type StudyCaseRecord } from "../../app/study-report/domain/study-report";
import { chartCsv, studyReportCharts } from "../../app/study-report/domain/study-report-charts";
import { formatStudyReportMarkdown, formatStudyReportText } from "../../app/study-report/domain/study-report-format";

const fixture = (name: string) => new URL(`../fixtures/study-report/${name}`, import.meta.url);
const records: StudyCaseRecord[] = JSON.parse(readFileSync(fixture("study.json"), "utf8"));
const expected = JSON.parse(readFileSync(fixture("expected.json"), "utf8"));
const STUDY = { id: 7, name: "Hand study" };

const report = buildStudyReport(records, {
  study: STUDY,
  categoryTitle: (c) => (c === "F20" ? "Schizophrenia" : null),
});

function expectInterval(
  actual: { value: number | null; se: number | null; ci95: [number, number] | null },
  wanted: { value: number; se: number; ci95: [number, number] },
) {
  expect(actual.value).toBeCloseTo(wanted.value, 10);
  expect(actual.se).toBeCloseTo(wanted.se, 10);
  expect(actual.ci95![0]).toBeCloseTo(wanted.ci95[0], 8);
  expect(actual.ci95![1]).toBeCloseTo(wanted.ci95[1], 8);
}

describe("buildStudyReport on the hand-worked study", () => {
  it("counts the cases by state", () => {
    // Cases 1-12 have both annotations, 13 one, 14 none. Agreed: 1, 3, 5, 9, 10, 11; disputed: 6 (sufficiency),
    // 12 (diagnosis); adjudicated: 2, 4, 8 (diagnosis), 7 (sufficiency). Gold: the 6 agreed + 4 adjudicated.
    expect(report.case_counts).toEqual({
      n_cases: 14,
      annotations_in: { none: 1, one: 1, both: 12 },
      outcomes: { agreed: 6, disputed: 2, adjudicated: 4 },
      disputes_by_reason: { sufficiency: 2, diagnosis: 4 },
      with_gold: 10,
    });
    expect(report.study).toEqual(STUDY);
  });

  it("reports sufficiency: matrix, percent agreement, Cohen's kappa, AC1 with SE and CI", () => {
    const s = report.sufficiency;
    // A\B: SS = cases 1,2,3,4,8,9,10,11,12 (9); SI = case 6; IS = case 7; II = case 5.
    expect(s.n).toBe(12);
    expect(s.matrix).toEqual([
      [9, 1],
      [1, 1],
    ]);
    expect(s.n_agreed).toBe(10);
    // p_o = 10/12 = 0.8333; p_e = (10/12)² + (2/12)² = 104/144; κ = (120/144 − 104/144) / (40/144) = 0.4.
    expect(s.percent_agreement).toBeCloseTo(10 / 12, 12);
    expect(s.cohen_kappa).toBeCloseTo(0.4, 12);
    // π_S = 20/24; p_e = 2 π_S (1 − π_S) = 0.27778; AC1 = (0.83333 − 0.27778) / 0.72222 = 10/13 = 0.76923.
    expect(s.gwet_ac1.value).toBeCloseTo(10 / 13, 12);
    expect(s.percent_agreement).toBeCloseTo(expected.sufficiency.percent_agreement, 12);
    expect(s.cohen_kappa).toBeCloseTo(expected.sufficiency.cohen_kappa, 12);
    expectInterval(s.gwet_ac1, expected.sufficiency.gwet_ac1);
  });

  it("reports the earliest section among both-sufficient cases, with weighted kappa and AC2", () => {
    const e = report.earliest_section;
    // (A, B): 1 (2,3) 2 (1,1) 3 (2,2) 4 (3,4) 8 (1,2) 9 (4,2) 10 (2,2) 11 (1,1) 12 (3,3): 5 exact of 9;
    // |A − B| = 0 ×5, 1 ×3, 2 ×1; mean 5/9. T_max of these cases is 5, so the scale is 1..5.
    expect(e.n).toBe(9);
    expect(e.sections).toEqual([1, 2, 3, 4, 5]);
    expect(e.n_exact).toBe(5);
    expect(e.exact_agreement).toBeCloseTo(5 / 9, 12);
    expect(e.differences.map((d) => [d.difference, d.n])).toEqual([
      [0, 5],
      [1, 3],
      [2, 1],
      [3, 0],
      [4, 0],
    ]);
    expect(e.differences[1].share).toBeCloseTo(3 / 9, 12);
    expect(e.mean_absolute_difference).toBeCloseTo(5 / 9, 12);
    expect(e.matrix[3][1]).toBe(1); // case 9: A section 4, B section 2
    expect(e.matrix.flat().reduce((a, b) => a + b, 0)).toBe(9);
    for (const w of ["linear", "quadratic"] as const) {
      expect(e.weighted[w].cohen_kappa_weighted).toBeCloseTo(
        expected.earliest_section.weighted[w].cohen_kappa_weighted,
        12,
      );
      expectInterval(e.weighted[w].gwet_ac2, expected.earliest_section.weighted[w].gwet_ac2);
    }
  });

  it("reports diagnosis agreement at diagnosis level, category and group with kappa and AC1", () => {
    const d = report.diagnosis;
    // Diagnosis level agrees on 1, 3, 9, 10, 11 (5/9); category also on 2 (F32.1/F32.2: 6/9); group also on
    // 4 (F20/F25) and 8 (F32/F33), not on 12 (F60.3/F43.1: 8/9).
    expect(d.n).toBe(9);
    expect([d.diagnosis_level.n_agreed, d.category.n_agreed, d.group.n_agreed]).toEqual([5, 6, 8]);
    for (const level of ["diagnosis_level", "category", "group"] as const) {
      const want = expected.diagnosis[level];
      expect(d[level].n).toBe(want.n);
      expect(d[level].n_categories).toBe(want.n_categories);
      expect(d[level].percent_agreement).toBeCloseTo(want.percent_agreement, 12);
      expect(d[level].cohen_kappa).toBeCloseTo(want.cohen_kappa, 12);
      expectInterval(d[level].gwet_ac1, want.gwet_ac1);
    }
  });

  it("reports per-diagnosis agreement for the most frequent gold categories", () => {
    const p = report.per_diagnosis;
    // Gold categories of annotated cases: F20 (3, 4, 11), F32 (1, 2), F03 (9), F31 (10), F33 (8).
    expect(p.source).toBe("primary_annotations");
    expect(p.n_categories).toBe(5);
    expect(p.rows.map((r) => [r.category, r.n, r.n_diagnosis_agreed, r.n_category_agreed])).toEqual([
      ["F20", 3, 2, 2],
      ["F32", 2, 1, 2],
      ["F03", 1, 1, 1],
      ["F31", 1, 1, 1],
      ["F33", 1, 0, 0],
    ]);
    expect(p.rows[0].title).toBe("Schizophrenia");
    expect(p.rows[0].diagnosis_agreement).toBeCloseTo(2 / 3, 12);
    expect(p.rows[1].category_agreement).toBe(1);
    const top2 = buildStudyReport(records, { study: STUDY, topCategories: 2 }).per_diagnosis;
    expect(top2.rows.map((r) => r.category)).toEqual(["F20", "F32"]);
    expect(top2.n_categories).toBe(5);
  });

  it("counts expert action labels by section with the Final alignment", () => {
    // Per gold case (T, τ): 1 (5,2) 2 (4,1) 3 (3,2) 4 (5,3) 5 (4,insuff) 7 (3,insuff) 8 (5,2) 9 (4,2) 10 (5,2)
    // 11 (3,1). Each case's last section goes to Final, its earlier ones to S1..S(T−1).
    const a = report.label_distributions.action_labels;
    expect(a.columns).toEqual(["S1", "S2", "S3", "S4", "Final"]);
    expect(a.rows).toEqual([
      { column: "S1", clarify: 8, diagnose: 2, abstain: 0, total: 10 },
      { column: "S2", clarify: 3, diagnose: 7, abstain: 0, total: 10 },
      { column: "S3", clarify: 1, diagnose: 6, abstain: 0, total: 7 },
      { column: "S4", clarify: 0, diagnose: 4, abstain: 0, total: 4 },
      { column: "Final", clarify: 0, diagnose: 8, abstain: 2, total: 10 },
    ]);
  });

  it("reports gold ICD-10 frequencies, missing information, age groups and section counts", () => {
    const l = report.label_distributions;
    expect(l.source).toEqual({ agreed: 6, adjudicated: 4, reference: 0 });
    expect(l.n_gold).toBe(10);
    expect(l.sufficiency).toEqual({ sufficient: 8, insufficient: 2 });
    expect(l.icd10_codes).toEqual([
      { code: "F20.0", n: 3 },
      { code: "F03", n: 1 },
      { code: "F31.1", n: 1 },
      { code: "F32.1", n: 1 },
      { code: "F32.2", n: 1 },
      { code: "F33.1", n: 1 },
    ]);
    expect(l.icd10_categories.map((c) => [c.category, c.n])).toEqual([
      ["F20", 3],
      ["F32", 2],
      ["F03", 1],
      ["F31", 1],
      ["F33", 1],
    ]);
    expect(l.icd10_groups).toEqual([
      { group: "F00-F09", n: 1 },
      { group: "F20-F29", n: 3 },
      { group: "F30-F39", n: 4 },
    ]);
    // Case 5's gold is the union of both annotations; case 7's the adjudicator's.
    expect(l.missing_info).toEqual([
      { key: "onset_duration", n: 1 },
      { key: "substance_use", n: 1 },
      { key: "psychological_tests", n: 1 },
    ]);
    expect(l.age_groups).toEqual([
      { age_group: "18-27", n: 2 },
      { age_group: "28-37", n: 3 },
      { age_group: "38-47", n: 2 },
      { age_group: "48-57", n: 2 },
      { age_group: "58-67", n: 1 },
      { age_group: "68-77", n: 1 },
      { age_group: "78+", n: 2 },
      { age_group: "Unknown", n: 1 },
    ]);
    expect(l.section_counts).toEqual([
      { sections: 3, n: 4 },
      { sections: 4, n: 4 },
      { sections: 5, n: 6 },
    ]);
  });

  it("notes the disputed cases that have no gold label and leaves nothing undefined", () => {
    expect(report.notes).toEqual([expect.stringContaining("2 disputed case(s) await adjudication")]);
    expect(report.reasons).toEqual({});
    expect(report.reference_agreement).toBeNull();
  });

  it("serialises with snake_case keys only", () => {
    const keys = new Set<string>();
    const walk = (v: unknown) => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === "object") {
        for (const [k, x] of Object.entries(v)) {
          if (v !== report.reasons) keys.add(k);
          walk(x);
        }
      }
    };
    walk(JSON.parse(JSON.stringify(report)));
    const notSnake = [...keys].filter((k) => !/^[a-z0-9]+(_[a-z0-9]+)*$/.test(k));
    expect(notSnake).toEqual([]);
  });
});

describe("buildStudyReport with undefined values", () => {
  const label = (s: CaseLabel) => s;
  const record = (
    i: number,
    annotations: StudyCaseRecord["annotations"],
    extra: Partial<StudyCaseRecord> = {},
  ): StudyCaseRecord => ({
    caseId: i,
    externalId: `x${i}`,
    numSections: 3,
    ageGroup: "",
    annotationsIn: annotations ? 2 : 0,
    annotations,
    outcome: null,
    gold: null,
    goldSource: null,
    referenceAgreement: null,
    ...extra,
  });

  it("gives null with a reason for everything when no case has two annotations", () => {
    const r = buildStudyReport([record(1, null)], { study: STUDY });
    expect(r.sufficiency.n).toBe(0);
    expect(r.sufficiency.percent_agreement).toBeNull();
    expect(r.sufficiency.gwet_ac1).toEqual({ value: null, se: null, ci95: null });
    expect(r.reasons["sufficiency.gwet_ac1"]).toMatch(/no case has both primary annotations/);
    expect(r.reasons["earliest_section.weighted.quadratic.gwet_ac2"]).toMatch(/no case was called sufficient by both/);
    expect(r.reasons["diagnosis.group.cohen_kappa"]).toMatch(/no case was called sufficient by both/);
    expect(r.reasons["per_diagnosis.rows"]).toBeDefined();
    expect(r.earliest_section.exact_agreement).toBeNull();
    expect(r.label_distributions.action_labels).toEqual({ columns: [], rows: [] });
    expect(JSON.stringify(r)).not.toMatch(/NaN/);
  });

  it("keeps AC1 defined when every note is sufficient, and says why kappa is not", () => {
    const both = (code: string, s: number) =>
      [
        label({ sufficiency: "sufficient", icd10: code, earliestSection: s }),
        label({ sufficiency: "sufficient", icd10: code, earliestSection: s }),
      ] as const;
    const r = buildStudyReport([record(1, both("F32.1", 1)), record(2, both("F32.1", 1))], { study: STUDY });
    // Both categories count (q = 2): π_S = 1, p_e = 0, AC1 = p_a = 1. Kappa's chance agreement is 1: 0/0.
    expect(r.sufficiency.gwet_ac1.value).toBe(1);
    expect(r.sufficiency.cohen_kappa).toBeNull();
    expect(r.reasons["sufficiency.cohen_kappa"]).toMatch(/chance agreement is 1/);
    expect(r.diagnosis.diagnosis_level.percent_agreement).toBe(1);
    expect(r.reasons["diagnosis.diagnosis_level.gwet_ac1"]).toMatch(/at least two categories/);
  });

  it("explains a missing standard error for a single case", () => {
    const pair = [
      label({ sufficiency: "sufficient", icd10: "F20.0", earliestSection: 1 }),
      label({ sufficiency: "insufficient", missingInfo: ["imaging"], missingInfoOther: null }),
    ] as const;
    const r = buildStudyReport([record(1, pair)], { study: STUDY });
    expect(r.sufficiency.gwet_ac1.value).not.toBeNull();
    expect(r.sufficiency.gwet_ac1.se).toBeNull();
    expect(r.reasons["sufficiency.gwet_ac1.se"]).toMatch(/at least two items/);
  });
});

describe("reference labels (an imported, already-labelled dataset)", () => {
  it("reads the released CSV's cells as a gold label and agreement flags", () => {
    const cells = {
      diagnosisSufficiency: "1",
      diagnosisSufficiencyAgreement: "1",
      diagnosis: "F33.1",
      diagnosisAgreement: "0",
      earliestSufficientSection: "2",
    };
    expect(referenceLabelOf(cells, 3)).toEqual({
      gold: { sufficiency: "sufficient", icd10: "F33.1", earliestSection: 2 },
      agreement: { sufficiency: true, diagnosis: false },
    });
    expect(
      referenceLabelOf({ ...cells, diagnosisSufficiency: "0", diagnosis: "", earliestSufficientSection: "" }, 3).gold,
    ).toEqual({
      sufficiency: "insufficient",
      missingInfo: [],
      missingInfoOther: null,
    });
    expect(referenceLabelOf({ ...cells, earliestSufficientSection: "4" }, 3).gold).toBeNull();
  });

  it("uses reference labels for the distributions and the flags for per-diagnosis agreement", () => {
    const rows: [string, string, string, string, number][] = [
      // sufficiency, sufficiency agreement, diagnosis, diagnosis agreement, τ
      ["1", "1", "F32.1", "1", 1],
      ["1", "1", "F32.2", "0", 2],
      ["1", "0", "F20.0", "0", 3],
      ["0", "1", "", "1", 0],
    ];
    const recs = rows.map(([suff, sa, code, da, tau], i): StudyCaseRecord => {
      const ref = referenceLabelOf(
        {
          diagnosisSufficiency: suff,
          diagnosisSufficiencyAgreement: sa,
          diagnosis: code,
          diagnosisAgreement: da,
          earliestSufficientSection: tau ? String(tau) : "",
        },
        3,
      );
      return {
        caseId: i + 1,
        externalId: `r${i + 1}`,
        numSections: 3,
        ageGroup: "48-57",
        annotationsIn: 0,
        annotations: null,
        outcome: null,
        gold: ref.gold,
        goldSource: "reference",
        referenceAgreement: ref.agreement,
      };
    });
    const r = buildStudyReport(recs, { study: STUDY });
    expect(r.label_distributions.source).toEqual({ agreed: 0, adjudicated: 0, reference: 4 });
    // Sufficiency flags 3/4 agree, diagnosis flags 2/4 (released CSV: both flags per case).
    expect(r.reference_agreement).toEqual({
      n: 4,
      sufficiency: { n: 4, n_agreed: 3, percent_agreement: 0.75 },
      diagnosis: { n: 4, n_agreed: 2, percent_agreement: 0.5 },
    });
    expect(r.per_diagnosis.source).toBe("reference_labels");
    expect(r.per_diagnosis.rows.map((x) => [x.category, x.n, x.n_diagnosis_agreed, x.n_category_agreed])).toEqual([
      ["F32", 2, 1, null],
      ["F20", 1, 0, null],
    ]);
    // τ = 1, 2, 3 and one insufficient, all T = 3: S1 D C C C, S2 D D C C, Final D D D A.
    expect(r.label_distributions.action_labels.rows).toEqual([
      { column: "S1", clarify: 3, diagnose: 1, abstain: 0, total: 4 },
      { column: "S2", clarify: 2, diagnose: 2, abstain: 0, total: 4 },
      { column: "Final", clarify: 0, diagnose: 3, abstain: 1, total: 4 },
    ]);
    expect(r.sufficiency.n).toBe(0);
  });
});

describe("charts and text forms of the report", () => {
  const charts = studyReportCharts(report);

  it("builds valid Vega-Lite specifications whose data are the CSV rows", () => {
    expect(charts.map((c) => c.id)).toEqual([
      "case-states",
      "sufficiency-matrix",
      "agreement-coefficients",
      "earliest-section-matrix",
      "earliest-section-differences",
      "earliest-section-agreement",
      "per-diagnosis",
      "action-labels",
      "icd10-codes",
      "icd10-groups",
      "age-groups",
    ]);
    for (const c of charts) {
      expect(() => compile(c.spec)).not.toThrow();
      expect((c.spec as { data: { values: unknown[] } }).data.values).toBe(c.rows);
      const csv = chartCsv(c).trimEnd().split("\r\n");
      expect(csv[0]).toBe(c.fields.join(","));
      expect(csv.length).toBe(c.rows.length + 1);
    }
  });

  it("puts the exact counts behind each chart in its CSV", () => {
    const byId = new Map(charts.map((c) => [c.id, c]));
    expect(chartCsv(byId.get("sufficiency-matrix")!)).toBe(
      "annotator_a,annotator_b,n\r\nsufficient,sufficient,9\r\nsufficient,insufficient,1\r\ninsufficient,sufficient,1\r\ninsufficient,insufficient,1\r\n",
    );
    expect(chartCsv(byId.get("action-labels")!).split("\r\n").slice(13, 16)).toEqual([
      "Final,Clarify,0,0",
      "Final,Diagnose,8,0.8",
      "Final,Abstain,2,0.2",
    ]);
    const coefficients = chartCsv(byId.get("agreement-coefficients")!).split("\r\n");
    expect(coefficients[1]).toBe("Sufficiency,Percent agreement,12,10,0.833333,,,");
    expect(coefficients[3]).toMatch(/^Sufficiency,Gwet's AC1,12,10,0\.769231,0\.17824,0\.376928,1$/);
  });

  it("prints text and Markdown with every section", () => {
    const text = formatStudyReportText(report);
    const md = formatStudyReportMarkdown(report);
    for (const heading of [
      "Sufficiency",
      "Earliest sufficient section",
      "Diagnosis",
      "Per diagnosis",
      "Expert action labels by section",
      "Gold labels",
    ]) {
      expect(text).toContain(`\n${heading}\n`);
      expect(md).toContain(`\n## ${heading}\n`);
    }
    expect(text).toMatch(/Percent agreement\s+83\.3% \(10\/12\)/);
    expect(text).toMatch(/Gwet's AC1\s+0\.769\s+0\.178\s+\[0\.377, 1\.000\]/);
    expect(md).toContain("| Gwet's AC2 (quadratic) | 0.855 | 0.089 | [0.649, 1.000] |");
    expect(md).toContain("| Final | 0 | 8 | 2 | 10 |");
  });
});
