/** How the admin's case page reads labels and audit changes (app/audit/ui/readable-values.tsx). */
import { describe, expect, it } from "vitest";
import { codeWithTitle, labelText, readableValue, stringsIn } from "../../app/audit/ui/readable-values";

const names = { users: { "u-123": "annotator2" }, icd10: { "F32.1": "Moderate depressive episode" } };

describe("readable values", () => {
  it("names users instead of their ids and gives ICD-10 titles", () => {
    expect(readableValue("annotator", "u-123", names)).toBe("annotator2");
    expect(readableValue("icd10", "F32.1", names)).toBe("F32.1 — Moderate depressive episode");
    expect(codeWithTitle("F99", names)).toBe("F99");
    expect(readableValue("seed", 1, names)).toBe("1");
    expect(readableValue("icd10", null, names)).toBe("—");
  });

  it("writes labels in one line, missing information by its labels", () => {
    expect(labelText({ sufficiency: "sufficient", icd10: "F32.1", earliestSection: 2 }, names)).toBe(
      "sufficient · F32.1 — Moderate depressive episode · earliest section 2",
    );
    expect(
      labelText(
        { sufficiency: "insufficient", missingInfo: ["substance_use", "other"], missingInfoOther: "family" },
        names,
      ),
    ).toBe("insufficient · missing: Substance use history; Other: family");
    expect(readableValue("missingInfo", ["laboratory", "imaging"], names)).toBe("Laboratory findings, Imaging");
  });

  it("offers every string of a record for resolving", () => {
    expect(stringsIn({ a: ["x", { b: "y" }], c: 3, d: null })).toEqual(["x", "y"]);
  });
});
