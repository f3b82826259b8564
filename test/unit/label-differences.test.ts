/** Field-by-field differences shown to the adjudicator after the reveal (docs/safe-psych.md). */
import { describe, expect, it } from "vitest";
import { compareLabels } from "../../app/adjudication/domain/label-differences";
import type { CaseLabel } from "../../app/labels/labels";

const suff = (icd10: string, earliestSection: number): CaseLabel => ({
  sufficiency: "sufficient",
  icd10,
  earliestSection,
});

describe("compareLabels", () => {
  it("marks the fields on which the labels differ, and only those", () => {
    const rows = compareLabels([suff("F32.1", 2), suff("F33.1", 2), suff("F33.1", 2)]);
    expect(rows.map((r) => [r.field, r.differs])).toEqual([
      ["sufficiency", false],
      ["icd10", true],
      ["earliestSection", false],
    ]);
    expect(rows[1]!.values).toEqual(["F32.1", "F33.1", "F33.1"]);
  });

  it("shows — where a field does not apply, and counts that as a difference", () => {
    const insufficient: CaseLabel = {
      sufficiency: "insufficient",
      missingInfo: ["imaging", "other"],
      missingInfoOther: "EEG",
    };
    const rows = compareLabels([suff("F20.0", 4), insufficient]);
    expect(rows.every((r) => r.differs)).toBe(true);
    expect(rows.find((r) => r.field === "icd10")!.values).toEqual(["F20.0", "—"]);
    expect(rows.find((r) => r.field === "missingInfo")!.values[0]).toBe("—");
    expect(rows.find((r) => r.field === "missingInfo")!.values[1]).toMatch(/\(EEG\)$/);
  });

  it("leaves out a field that applies to none of the labels", () => {
    const a: CaseLabel = { sufficiency: "insufficient", missingInfo: ["imaging"], missingInfoOther: null };
    expect(compareLabels([a, a]).map((r) => r.field)).toEqual(["sufficiency", "missingInfo"]);
    expect(compareLabels([a, a]).some((r) => r.differs)).toBe(false);
  });
});
