import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  annotatorKeyCsv,
  annotatorSheetCsv,
  BUCKET_RULE_ORDER,
  BUCKET_SAMPLING_ORDER,
  classifyCode,
  DEFAULT_BUCKET_TARGETS,
  drawValidationSet,
  firstParse,
  firstParseFeatures,
  hasDecline,
  hasHedging,
  type ValidationBucket,
} from "~/judge-validation/domain/validation-set";

// Fixtures (test/fixtures/validation-set/): make_input.py wrote input.jsonl, 161 synthetic flattened step rows built
// to hit every bucket, ties between rules, word boundaries, curly apostrophes and odd values; build.py, an
// independent Python 3.11 reimplementation of docs/judge-validation.md using CPython's own random.Random and csv module,
// wrote expected/<config>/. Regenerate: python3 test/fixtures/validation-set/make_input.py && python3 …/build.py
const dir = new URL("../fixtures/validation-set/", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, dir), "utf8");
const readJsonl = (path: string) =>
  read(path)
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);

const input = readJsonl("input.jsonl");

const configs: { name: string; seed: number | bigint; targets?: Partial<Record<ValidationBucket, number>> }[] = [
  { name: "default", seed: 123 },
  {
    name: "seed-2024-small",
    seed: 2024,
    targets: Object.fromEntries(BUCKET_SAMPLING_ORDER.map((b) => [b, 4])) as Record<ValidationBucket, number>,
  },
  { name: "seed-big", seed: 2n ** 40n + 17n, targets: { differential_with_or_without_specific_asks: 7 } },
];

describe("first parse of every fixture row matches Python", () => {
  const expected = JSON.parse(read("expected/default/buckets.json")) as {
    sample_id: string;
    bucket: ValidationBucket | null;
    derived_action: string;
  }[];

  it("has one expectation per input row", () => expect(expected).toHaveLength(input.length));

  it("every bucket except the unreachable rule 8 is populated, and some rows are ineligible", () => {
    const seen = new Set(expected.map((e) => e.bucket));
    for (const bucket of BUCKET_RULE_ORDER) {
      expect(seen.has(bucket)).toBe(bucket !== "clear_abstain_differential");
    }
    expect(seen.has(null)).toBe(true);
  });

  input.forEach((row, i) => {
    it(`${String(row.sample_id)}: ${JSON.stringify(row.model_output_raw).slice(0, 60)}`, () => {
      const parse = firstParse(row);
      expect({ sample_id: row.sample_id, bucket: parse.bucket, derived_action: parse.derivedAction }).toEqual(
        expected[i],
      );
      // The row was built for this bucket (make_input.py's `intended`), so the Python and the intent agree too.
      expect(parse.bucket).toBe(row.intended ?? null);
    });
  });
});

describe("drawValidationSet replays the reference's selection exactly", () => {
  for (const { name, seed, targets } of configs) {
    describe(name, () => {
      const expectedRows = readJsonl(`expected/${name}/selected.jsonl`);
      const expectedSummary = (JSON.parse(read(`expected/${name}/summary.json`)) as { seed: string; summary: unknown })
        .summary;
      const drawn = drawValidationSet(input, { seed, targets });

      it("selects the same rows in the same order with the same ids", () => {
        expect(drawn.rows.map((r) => [r.annotation_id, r.sample_id])).toEqual(
          expectedRows.map((r) => [r.annotation_id, r.sample_id]),
        );
      });

      it("writes the same rows, keys in the same order", () => {
        expect(drawn.rows).toEqual(expectedRows);
        expect(drawn.rows.map((r) => Object.keys(r))).toEqual(expectedRows.map((r) => Object.keys(r)));
      });

      it("summarises target, available and selected per bucket, in sampling order", () => {
        expect(drawn.summary).toEqual(expectedSummary);
        expect(Object.keys(drawn.summary)).toEqual(Object.keys(expectedSummary as object));
      });

      it("writes the annotator sheet and the admin key byte for byte as Python's csv module", () => {
        expect(Buffer.from(annotatorSheetCsv(drawn.rows), "utf8")).toEqual(
          readFileSync(new URL(`expected/${name}/annotator.csv`, dir)),
        );
        expect(Buffer.from(annotatorKeyCsv(drawn.rows), "utf8")).toEqual(
          readFileSync(new URL(`expected/${name}/key.csv`, dir)),
        );
      });
    });
  }

  it("uses seed 123 and the 200-row targets by default", () => {
    expect(Object.values(DEFAULT_BUCKET_TARGETS).reduce((a, b) => a + b, 0)).toBe(200);
    expect(drawValidationSet(input).rows).toEqual(drawValidationSet(input, { seed: 123 }).rows);
  });

  it("does not modify its input", () => {
    const copy = structuredClone(input);
    drawValidationSet(input);
    expect(input).toEqual(copy);
  });

  it("handles an empty input", () => {
    const drawn = drawValidationSet([]);
    expect(drawn.rows).toEqual([]);
    expect(Object.values(drawn.summary).every((s) => s.available === 0 && s.selected === 0)).toBe(true);
    expect(annotatorSheetCsv([])).toBe(
      "\uFEFFannotation_id,step_index,is_last_section,model_output_raw,annotator_primary_answer,annotator_contingency,annotator_info_request\r\n",
    );
  });

  it("refuses a negative or fractional target", () => {
    expect(() => drawValidationSet(input, { targets: { committed_unspecified: -1 } })).toThrow(/committed_unspecified/);
    expect(() => drawValidationSet(input, { targets: { committed_unspecified: 1.5 } })).toThrow(/non-negative integer/);
  });
});

describe("code classes (docs/judge-validation.md#first-parse-and-buckets)", () => {
  const table: [string, ReturnType<typeof classifyCode>][] = [
    ["F32.9", "unspecified"],
    ["F32.A", "unspecified"],
    ["f32.a", "unspecified"],
    ["F32.-", "placeholder"],
    ["F32-", "placeholder"],
    ["F31.9-", "placeholder"],
    ["F32", "category_only"],
    [" f20 ", "category_only"],
    ["Z63", "category_only"],
    ["F32.1", "specific_subtype"],
    ["F02.80", "specific_subtype"],
    ["F32.90", "specific_subtype"],
    ["F60.31", "specific_subtype"],
    ["F32.A1", "other"],
    ["F3", "other"],
    ["F320", "other"],
    ["ICD10", "other"],
    ["F03-X", "other"],
  ];
  for (const [code, cls] of table) it(`${JSON.stringify(code)} is ${cls}`, () => expect(classifyCode(code)).toBe(cls));
});

describe("hedging and decline are whole-word tests on the lower-cased response", () => {
  it("hedging", () => {
    for (const yes of ["It MAY be", "may.", "(may)", "could be", "most consistent with", "Suggestive of X", "likely"]) {
      expect(hasHedging(yes), yes).toBe(true);
    }
    for (const no of [
      "mayor",
      "dismay",
      "unlikely",
      "impossibly",
      "couldbe",
      "could  be",
      "may_",
      "mayé",
      "2may",
      "appears to bee",
    ]) {
      expect(hasHedging(no), no).toBe(false);
    }
  });

  it("decline, with straight and curly apostrophes", () => {
    for (const yes of [
      "I can't diagnose",
      "I can’t diagnose",
      "I CANNOT DETERMINE",
      "can’t confirm",
      "need more information.",
    ]) {
      expect(hasDecline(yes), yes).toBe(true);
    }
    for (const no of ["I cant diagnose", "I can`t diagnose", "I cannot diagnosed", "insufficient informational"]) {
      expect(hasDecline(no), no).toBe(false);
    }
  });
});

describe("bucket rules on crafted rows", () => {
  const row = (out: Record<string, unknown> | null, text = "", isLast = false) => ({
    new_judge_output: out,
    model_output_raw: text,
    is_last_section: isLast,
  });

  it("reads missing features as none and codes from strings or lists", () => {
    expect(firstParseFeatures(null)).toEqual({
      primaryAnswer: "none",
      contingency: "none",
      infoRequest: "none",
      icdCodes: [],
      diagnosisNames: [],
    });
    expect(
      firstParseFeatures({ primary_answer: " Committed ", icd_codes: "F32.1, ,F33", diagnosis_names: [" a ", null] }),
    ).toEqual({
      primaryAnswer: "committed",
      contingency: "none",
      infoRequest: "none",
      icdCodes: ["F32.1", "F33"],
      diagnosisNames: ["a", "None"],
    });
  });

  it("ignores the info request of a committed answer in the derived action (unlike the judge's rule)", () => {
    const p = firstParse(
      row({ primary_answer: "committed", info_request: "specific", icd_codes: ["F32.1"], diagnosis_names: ["x"] }),
    );
    expect(p.derivedAction).toBe("DIAGNOSE");
    expect(p.bucket).toBeNull();
  });

  it("ties: refinement beats hedging, a conditional beats hedging, unspecified beats hedging", () => {
    const base = { primary_answer: "committed", icd_codes: ["F32.1"], diagnosis_names: ["x"] };
    expect(
      firstParse(row({ ...base, contingency: "refinement_only", info_request: "specific" }, "it may be")).bucket,
    ).toBe("committed_specific_refinement_only_specific_info");
    expect(firstParse(row({ ...base, contingency: "explicit_conditional" }, "it may be")).bucket).toBe(
      "committed_specific_explicit_conditional",
    );
    expect(firstParse(row({ ...base, icd_codes: ["F32.9"] }, "it may be")).bucket).toBe("committed_unspecified");
  });

  it("rule 8 is unreachable: a differential without a request goes to rule 5", () => {
    const p = firstParse(row({ primary_answer: "differential", info_request: "none" }, "F20 or F23"));
    expect(p.derivedAction).toBe("ABSTAIN");
    expect(p.bucket).toBe("differential_with_or_without_specific_asks");
  });

  it("CLARIFY on the last section becomes ABSTAIN, which leaves a specific request without a bucket", () => {
    const out = { primary_answer: "none", info_request: "specific" };
    expect(firstParse(row(out, "duration?", false))).toMatchObject({
      derivedAction: "CLARIFY",
      bucket: "clear_clarify_specific",
    });
    expect(firstParse(row(out, "duration?", true))).toMatchObject({ derivedAction: "ABSTAIN", bucket: null });
  });
});
