import { describe, expect, it } from "vitest";
import {
  agreementFlags,
  expertActionLabels,
  expertStoppingStep,
  resolvePair,
  sameDiagnosis,
  stage1Label,
} from "../../app/gold/domain/gold";
import {
  checkCaseLabel,
  MISSING_INFO,
  MISSING_INFO_KEYS,
  type CaseLabel,
  type InsufficientLabel,
  type MissingInfoKey,
  type SufficientLabel,
} from "../../app/labels/labels";

const sufficient = (icd10: string, earliestSection: number): SufficientLabel => ({
  sufficiency: "sufficient",
  icd10,
  earliestSection,
});
const insufficient = (missingInfo: MissingInfoKey[], missingInfoOther: string | null = null): InsufficientLabel => ({
  sufficiency: "insufficient",
  missingInfo,
  missingInfoOther,
});

describe("the controlled list of missing information (docs/safe-psych.md#annotation)", () => {
  it("has the ten kinds in the order of docs/safe-psych.md#annotation, `other` last", () => {
    expect(MISSING_INFO.map((m) => m.label)).toEqual([
      "Duration of symptoms / onset timeline",
      "Prior episodes, manic/hypomanic episodes or hospitalisations",
      "Substance use history",
      "Medication and treatment-response history",
      "Psychological test scores",
      "Collateral history",
      "Laboratory findings",
      "Imaging",
      "Neurological examination",
      "Other",
    ]);
    expect(MISSING_INFO_KEYS.at(-1)).toBe("other");
    expect(new Set(MISSING_INFO_KEYS).size).toBe(10);
  });
});

describe("disagreement and gold labels (the table in docs/safe-psych.md#disagreement-and-adjudication)", () => {
  it("row 1: sufficiency differs → dispute (reason: sufficiency)", () => {
    const outcome = resolvePair(sufficient("F32.1", 2), insufficient(["imaging"]));
    expect(outcome).toEqual({
      status: "disputed",
      reason: "sufficiency",
      agreement: { sufficiency: false, diagnosis: false, agreementCase: false },
    });
    expect(resolvePair(insufficient(["imaging"]), sufficient("F32.1", 2))).toEqual(outcome);
  });

  it("row 2: both sufficient, diagnosis differs at diagnosis level → dispute (reason: diagnosis)", () => {
    for (const [a, b] of [
      ["F32.1", "F32.2"],
      ["F32.1", "F33.1"],
      ["F20.0", "F25.0"],
    ]) {
      expect(resolvePair(sufficient(a, 1), sufficient(b, 1))).toEqual({
        status: "disputed",
        reason: "diagnosis",
        agreement: { sufficiency: true, diagnosis: false, agreementCase: false },
      });
    }
  });

  it("row 3: both sufficient, same diagnosis → gold = that diagnosis, earliest section = the earlier", () => {
    const expected = {
      status: "agreed",
      gold: { sufficiency: "sufficient", icd10: "F32.1", earliestSection: 2 },
      agreement: { sufficiency: true, diagnosis: true, agreementCase: true },
    };
    expect(resolvePair(sufficient("F32.1", 2), sufficient("F32.1", 4))).toEqual(expected);
    expect(resolvePair(sufficient("F32.1", 4), sufficient("F32.1", 2))).toEqual(expected);
    expect(resolvePair(sufficient("F03", 3), sufficient("F03", 3))).toMatchObject({
      gold: { icd10: "F03", earliestSection: 3 },
    });
  });

  it("row 4: both insufficient → gold insufficient, missing information = union in list order", () => {
    const outcome = resolvePair(
      insufficient(["substance_use", "other"], "Family history"),
      insufficient(["onset_duration", "substance_use"]),
    );
    expect(outcome).toEqual({
      status: "agreed",
      gold: {
        sufficiency: "insufficient",
        missingInfo: ["onset_duration", "substance_use", "other"],
        missingInfoOther: "Family history",
      },
      agreement: { sufficiency: true, diagnosis: true, agreementCase: true },
    });
  });

  it("combines both `other` texts, distinct and sorted, whatever the order of the annotations", () => {
    const a = insufficient(["other"], "thyroid panel");
    const b = insufficient(["other", "imaging"], " EEG ");
    const ab = resolvePair(a, b);
    expect(ab).toMatchObject({ gold: { missingInfo: ["imaging", "other"], missingInfoOther: "EEG; thyroid panel" } });
    expect(resolvePair(b, a)).toEqual(ab);
    expect(resolvePair(a, insufficient(["other"], "thyroid panel"))).toMatchObject({
      gold: { missingInfoOther: "thyroid panel" },
    });
    // Text left over on a label without `other` is not carried into the gold label.
    expect(resolvePair(insufficient(["imaging"], "stale"), insufficient(["laboratory"]))).toMatchObject({
      gold: { missingInfo: ["laboratory", "imaging"], missingInfoOther: null },
    });
  });

  describe("comparing two annotators' codes (symmetric: equal diagnosis-level forms)", () => {
    it.each([
      ["F32.1", "F32.1", true],
      ["F32.1", "f321", true],
      ["F31.1", "F31.11", true],
      ["F31.11", "F31.1", true],
      ["F29", "F29", true],
      ["F29", "F29.1", false],
      ["F29.1", "F29", false],
      ["F32.1", "F32", false],
      ["F32.9", "F32.A", false],
      ["junk", "junk", false],
    ])("%s and %s agree: %s", (a, b, expected) => {
      expect(sameDiagnosis(a, b)).toBe(expected);
      expect(sameDiagnosis(b, a)).toBe(expected);
    });

    it("a category against one of its subcategories is a dispute for the adjudicator", () => {
      expect(resolvePair(sufficient("F29", 1), sufficient("F29.1", 1))).toMatchObject({
        status: "disputed",
        reason: "diagnosis",
      });
    });

    it("agreeing codes beyond the WHO level give the shared diagnosis-level code", () => {
      expect(resolvePair(sufficient("F31.11", 2), sufficient("F31.1", 3))).toMatchObject({
        status: "agreed",
        gold: { icd10: "F31.1", earliestSection: 2 },
      });
    });
  });

  it("flags agreement on sufficiency and on diagnosis; an agreement case is exactly an undisputed one", () => {
    expect(agreementFlags(sufficient("F32.1", 1), sufficient("F32.1", 3))).toEqual({
      sufficiency: true,
      diagnosis: true,
      agreementCase: true,
    });
    expect(agreementFlags(sufficient("F32.1", 1), sufficient("F33.1", 1))).toEqual({
      sufficiency: true,
      diagnosis: false,
      agreementCase: false,
    });
    expect(agreementFlags(insufficient(["imaging"]), insufficient(["laboratory"]))).toEqual({
      sufficiency: true,
      diagnosis: true,
      agreementCase: true,
    });
    expect(agreementFlags(insufficient(["imaging"]), sufficient("F32.1", 1))).toEqual({
      sufficiency: false,
      diagnosis: false,
      agreementCase: false,
    });
  });
});

describe("expert stopping step and action labels (docs/safe-psych.md#gold-labels-and-expert-action-labels, docs/evaluation.md#expert-labels-script)", () => {
  it.each([
    [3, 1, ["Diagnose", "Diagnose", "Diagnose"]],
    [3, 2, ["Clarify", "Diagnose", "Diagnose"]],
    [3, 3, ["Clarify", "Clarify", "Diagnose"]],
    [4, 1, ["Diagnose", "Diagnose", "Diagnose", "Diagnose"]],
    [4, 3, ["Clarify", "Clarify", "Diagnose", "Diagnose"]],
    [4, 4, ["Clarify", "Clarify", "Clarify", "Diagnose"]],
    [5, 1, ["Diagnose", "Diagnose", "Diagnose", "Diagnose", "Diagnose"]],
    [5, 2, ["Clarify", "Diagnose", "Diagnose", "Diagnose", "Diagnose"]],
    [5, 5, ["Clarify", "Clarify", "Clarify", "Clarify", "Diagnose"]],
  ])("sufficient, T = %i, τ = %i", (T, tau, labels) => {
    const gold = sufficient("F32.1", tau);
    expect(expertStoppingStep(gold, T)).toBe(tau);
    expect(expertActionLabels(gold, T)).toEqual(labels);
  });

  it.each([
    [3, ["Clarify", "Clarify", "Abstain"]],
    [4, ["Clarify", "Clarify", "Clarify", "Abstain"]],
    [5, ["Clarify", "Clarify", "Clarify", "Clarify", "Abstain"]],
  ])("insufficient, T = %i: τ = T", (T, labels) => {
    const gold = insufficient(["imaging"]);
    expect(expertStoppingStep(gold, T)).toBe(T);
    expect(expertActionLabels(gold, T)).toEqual(labels);
  });

  it("refuses an earliest section outside 1..T and a bad T", () => {
    expect(() => expertActionLabels(sufficient("F32.1", 4), 3)).toThrow(
      "the earliest sufficient section must be in 1..3, got 4",
    );
    expect(() => expertStoppingStep(sufficient("F32.1", 0), 3)).toThrow(RangeError);
    expect(() => expertStoppingStep(sufficient("F32.1", 1.5), 3)).toThrow(RangeError);
    expect(() => expertActionLabels(insufficient([]), 0)).toThrow("positive integer");
  });

  it("stage-1 label: Diagnose iff sufficient and τ = 1 (docs/evaluation.md#stage-1-clarification-script)", () => {
    expect(stage1Label(sufficient("F32.1", 1))).toBe("Diagnose");
    expect(stage1Label(sufficient("F32.1", 2))).toBe("Clarify");
    expect(stage1Label(insufficient(["imaging"]))).toBe("Clarify");
  });
});

describe("checking a submitted label", () => {
  const T = 4;

  it("canonicalises a sufficient label", () => {
    expect(
      checkCaseLabel({ sufficiency: "sufficient", icd10: " f321 ", earliestSection: 2 }, { sectionCount: T }),
    ).toEqual({
      ok: true,
      label: { sufficiency: "sufficient", icd10: "F32.1", earliestSection: 2 },
    });
  });

  it("reports each faulty field", () => {
    const result = checkCaseLabel(
      { sufficiency: "sufficient", icd10: "296.2", earliestSection: 5 },
      { sectionCount: T },
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.icd10).toMatch(/^not an ICD-10 chapter V code/);
    expect(result.errors.earliestSection).toBe("the earliest sufficient section must be a section number from 1 to 4");
  });

  it("asks for a code when a sufficient label has none, instead of calling the empty code malformed", () => {
    for (const icd10 of ["", "   ", undefined]) {
      const result = checkCaseLabel({ sufficiency: "sufficient", icd10, earliestSection: 2 }, { sectionCount: T });
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.errors.icd10).toBe("Choose an ICD-10 code.");
    }
  });

  it("checks the code against the WHO table when given", () => {
    const isValidCode = (code: string) => code === "F32.1";
    expect(
      checkCaseLabel(
        { sufficiency: "sufficient", icd10: "F32.A", earliestSection: 1 },
        { sectionCount: T, isValidCode },
      ),
    ).toEqual({ ok: false, errors: { icd10: "F32.A is not a code of WHO ICD-10 chapter V" } });
  });

  it("orders and deduplicates missing information, and requires text for `other`", () => {
    expect(
      checkCaseLabel(
        { sufficiency: "insufficient", missingInfo: ["other", "imaging", "imaging"], missingInfoOther: " EEG " },
        { sectionCount: T },
      ),
    ).toEqual({
      ok: true,
      label: { sufficiency: "insufficient", missingInfo: ["imaging", "other"], missingInfoOther: "EEG" },
    });
    expect(checkCaseLabel({ sufficiency: "insufficient", missingInfo: ["other"] }, { sectionCount: T })).toEqual({
      ok: false,
      errors: { missingInfoOther: "describe the other missing information" },
    });
    expect(
      checkCaseLabel(
        { sufficiency: "insufficient", missingInfo: ["imaging"], missingInfoOther: "ignored" },
        { sectionCount: T },
      ),
    ).toMatchObject({ ok: true, label: { missingInfoOther: null } });
  });

  it("requires at least one missing-information label unless told otherwise", () => {
    expect(checkCaseLabel({ sufficiency: "insufficient", missingInfo: [] }, { sectionCount: T })).toEqual({
      ok: false,
      errors: { missingInfo: "choose at least one kind of missing information" },
    });
    expect(checkCaseLabel({ sufficiency: "insufficient" }, { sectionCount: T, requireMissingInfo: false })).toEqual({
      ok: true,
      label: { sufficiency: "insufficient", missingInfo: [], missingInfoOther: null },
    });
    expect(checkCaseLabel({ sufficiency: "insufficient", missingInfo: ["x-ray"] }, { sectionCount: T })).toEqual({
      ok: false,
      errors: { missingInfo: "unknown missing-information labels: x-ray" },
    });
  });

  it("requires a sufficiency", () => {
    expect(checkCaseLabel({}, { sectionCount: T })).toEqual({
      ok: false,
      errors: { sufficiency: "choose sufficient or insufficient" },
    });
  });

  it("labels are plain data (a CaseLabel round-trips through JSON)", () => {
    const label: CaseLabel = insufficient(["imaging"]);
    expect(JSON.parse(JSON.stringify(label))).toEqual(label);
  });
});
