import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  actionFromFeatures,
  INFO_REQUESTS,
  judgeResponse,
  normaliseLabel,
  parseAction,
  parseJudgeOutput,
  PRIMARY_ANSWERS,
  raterAction,
  toStructuredActionRaw,
  type Action,
  type InfoRequest,
  type JudgeParseProblem,
  type PrimaryAnswer,
  type StructuredActionRaw,
} from "~/evaluation/domain/judge";
import { pySplitLines } from "~/python-compat/text";

const kinds = (problems: JudgeParseProblem[]) => problems.map((p) => `${p.kind}:${p.key ?? ""}:${p.line ?? ""}`);

describe("worked examples of the judge prompt (prompts/judge.txt)", () => {
  const prompt = readFileSync(new URL("../../app/data/prompts/judge.txt", import.meta.url), "utf8");
  const examples = [...prompt.matchAll(/Response:\n"([\s\S]*?)"\nOutput:\n([\s\S]*?)\n\n/g)].map((m) => ({
    response: m[1],
    output: m[2],
  }));

  // Feature values copied from each example's Output block; the action follows from the table in docs/judge-validation.md#response-features-and-the-action-rule.
  const expected: { starts: string; features: Omit<StructuredActionRaw, "action">; action: Action }[] = [
    {
      starts: "Moderate depressive episode, F32.1.",
      features: {
        primary_answer: "committed",
        info_request: "generic_only",
        icd_codes: ["F32.1"],
        diagnosis_names: ["Moderate depressive episode"],
      },
      action: "DIAGNOSE",
    },
    {
      starts: "F32.1 moderate depressive episode.",
      features: {
        primary_answer: "committed",
        info_request: "specific",
        icd_codes: ["F32.1", "F33"],
        diagnosis_names: ["moderate depressive episode", "recurrent depressive disorder"],
      },
      action: "CLARIFY",
    },
    {
      starts: "Unspecified depressive disorder (F32.9).",
      features: {
        primary_answer: "committed",
        info_request: "none",
        icd_codes: ["F32.9"],
        diagnosis_names: ["unspecified depressive disorder"],
      },
      action: "DIAGNOSE",
    },
    {
      starts: "F02.80 dementia with behavioral disturbance.",
      features: {
        primary_answer: "committed",
        info_request: "generic_only",
        icd_codes: ["F02.80", "F02.81"],
        diagnosis_names: ["dementia with behavioral disturbance"],
      },
      action: "DIAGNOSE",
    },
    {
      starts: "The presentation could represent brief psychotic disorder (F23),",
      features: {
        primary_answer: "differential",
        info_request: "specific",
        icd_codes: ["F23", "F20"],
        diagnosis_names: ["brief psychotic disorder", "schizophrenia", "substance-induced psychosis"],
      },
      action: "CLARIFY",
    },
    {
      starts: "Differential includes brief psychotic disorder,",
      features: {
        primary_answer: "differential",
        info_request: "generic_only",
        icd_codes: [],
        diagnosis_names: ["brief psychotic disorder", "schizophrenia", "substance-induced psychosis"],
      },
      action: "ABSTAIN",
    },
    {
      starts: "I cannot make a diagnosis without duration of symptoms,",
      features: { primary_answer: "none", info_request: "specific", icd_codes: [], diagnosis_names: [] },
      action: "CLARIFY",
    },
  ];

  it("finds all seven worked examples", () => expect(examples).toHaveLength(expected.length));

  expected.forEach((want, i) => {
    it(`example ${i + 1} (${want.starts}) parses and maps to ${want.action}`, () => {
      const example = examples[i];
      expect(example.response.startsWith(want.starts)).toBe(true);
      const judged = judgeResponse(example.output, { isLastSection: false });
      expect(judged.problems).toEqual([]);
      expect(judged.action).toBe(want.action);
      expect(judged.structuredActionRaw).toEqual({
        ...want.features,
        action: { DIAGNOSE: "Diagnose", CLARIFY: "Clarify", ABSTAIN: "Abstain" }[want.action],
      });
      // On the last section nothing is left to reveal: CLARIFY becomes ABSTAIN, the rest is unchanged.
      const last = judgeResponse(example.output, { isLastSection: true });
      expect(last.action).toBe(want.action === "CLARIFY" ? "ABSTAIN" : want.action);
    });
  });
});

describe("the action rule (docs/judge-validation.md#response-features-and-the-action-rule, docs/evaluation.md#judge-parse-and-mapping)", () => {
  const table: [PrimaryAnswer, InfoRequest, Action][] = [
    ["committed", "specific", "CLARIFY"],
    ["committed", "generic_only", "DIAGNOSE"],
    ["committed", "none", "DIAGNOSE"],
    ["differential", "specific", "CLARIFY"],
    ["differential", "generic_only", "ABSTAIN"],
    ["differential", "none", "ABSTAIN"],
    ["none", "specific", "CLARIFY"],
    ["none", "generic_only", "ABSTAIN"],
    ["none", "none", "ABSTAIN"],
  ];

  it("covers all nine combinations", () =>
    expect(new Set(table.map(([p, i]) => `${p}/${i}`)).size).toBe(PRIMARY_ANSWERS.length * INFO_REQUESTS.length));

  for (const [primaryAnswer, infoRequest, action] of table) {
    it(`${primaryAnswer} + ${infoRequest} → ${action}; on the last section → ${
      action === "CLARIFY" ? "ABSTAIN" : action
    }`, () => {
      expect(actionFromFeatures({ primaryAnswer, infoRequest })).toBe(action);
      expect(actionFromFeatures({ primaryAnswer, infoRequest }, { isLastSection: false })).toBe(action);
      expect(actionFromFeatures({ primaryAnswer, infoRequest }, { isLastSection: true })).toBe(
        action === "CLARIFY" ? "ABSTAIN" : action,
      );
      expect(raterAction(primaryAnswer, infoRequest)).toBe(action);
    });
  }

  it("treats a missing feature as none, as the reference's derive_action", () => {
    expect(actionFromFeatures({ primaryAnswer: null, infoRequest: null })).toBe("ABSTAIN");
    expect(actionFromFeatures({ primaryAnswer: null, infoRequest: "specific" })).toBe("CLARIFY");
    expect(actionFromFeatures({ primaryAnswer: "committed", infoRequest: null })).toBe("DIAGNOSE");
  });

  it("raters never get the last-section rule, and a blank feature casts no vote", () => {
    expect(raterAction("committed", "specific")).toBe("CLARIFY");
    expect(raterAction(null, "specific")).toBeNull();
    expect(raterAction("committed", null)).toBeNull();
  });
});

describe("parseJudgeOutput: the reference's parsing rules", () => {
  it("skips lines without a colon and reports them", () => {
    const { features, problems } = parseJudgeOutput(
      "Here is my analysis\nPRIMARY_ANSWER: committed\nINFO_REQUEST - specific\nINFO_REQUEST: none\nICD_CODES: F20\nDIAGNOSIS_NAMES: schizophrenia",
    );
    expect(features).toEqual({
      primaryAnswer: "committed",
      infoRequest: "none",
      icdCodes: ["F20"],
      diagnosisNames: ["schizophrenia"],
    });
    expect(kinds(problems)).toEqual(["skipped_line::1", "skipped_line::3"]);
    expect(problems[1].text).toBe("INFO_REQUEST - specific");
  });

  it("later lines win", () => {
    const { features, problems } = parseJudgeOutput(
      "PRIMARY_ANSWER: differential\nINFO_REQUEST: none\nICD_CODES: F20\nDIAGNOSIS_NAMES: a\nPRIMARY_ANSWER: committed\nICD_CODES: F32.1, F33",
    );
    expect(features.primaryAnswer).toBe("committed");
    expect(features.icdCodes).toEqual(["F32.1", "F33"]);
    expect(kinds(problems)).toEqual(["repeated_key:PRIMARY_ANSWER:5", "repeated_key:ICD_CODES:6"]);
  });

  it("but a later unusable value does not erase an earlier accepted one (the reference assigns only accepted values)", () => {
    const { features, problems } = parseJudgeOutput(
      "PRIMARY_ANSWER: committed\nPRIMARY_ANSWER: maybe\nINFO_REQUEST: specific\nINFO_REQUEST:\nICD_CODES: F32.1\nICD_CODES: Empty\nDIAGNOSIS_NAMES: x\nDIAGNOSIS_NAMES: ,",
    );
    expect(features).toEqual({
      primaryAnswer: "committed",
      infoRequest: "specific",
      icdCodes: ["F32.1"],
      diagnosisNames: [],
    });
    expect(kinds(problems)).toEqual([
      "unknown_value:PRIMARY_ANSWER:2",
      "unknown_value:INFO_REQUEST:4",
      "repeated_key:PRIMARY_ANSWER:2",
      "repeated_key:INFO_REQUEST:4",
      "repeated_key:ICD_CODES:6",
      "repeated_key:DIAGNOSIS_NAMES:8",
    ]);
  });

  it("reads 'empty' in any case, and an empty value, as no codes or names", () => {
    for (const empty of ["empty", "Empty", "EMPTY", ""]) {
      const { features, problems } = parseJudgeOutput(
        `PRIMARY_ANSWER: none\nINFO_REQUEST: none\nICD_CODES: ${empty}\nDIAGNOSIS_NAMES: ${empty}`,
      );
      expect(features.icdCodes).toEqual([]);
      expect(features.diagnosisNames).toEqual([]);
      expect(problems).toEqual([]);
    }
  });

  it("upper-cases keys and lower-cases feature values, trimming both", () => {
    const { features, problems } = parseJudgeOutput(
      "  primary_answer :  Committed  \nInfo_Request:GENERIC_ONLY\nicd_codes: f32.1 ,  , F33 \ndiagnosis_names: Depression: severe, Anxiety",
    );
    expect(features).toEqual({
      primaryAnswer: "committed",
      infoRequest: "generic_only",
      icdCodes: ["f32.1", "F33"],
      diagnosisNames: ["Depression: severe", "Anxiety"],
    });
    expect(problems).toEqual([]);
  });

  it("reports junk values, unknown keys and missing keys, and keeps null features", () => {
    const { features, problems } = parseJudgeOutput(
      "PRIMARY_ANSWER: <committed | differential | none>\n**INFO_REQUEST**: specific\nINFO_REQUEST: yes",
    );
    expect(features).toEqual({ primaryAnswer: null, infoRequest: null, icdCodes: [], diagnosisNames: [] });
    expect(kinds(problems)).toEqual([
      "unknown_value:PRIMARY_ANSWER:1",
      "unknown_key:**INFO_REQUEST**:2",
      "unknown_value:INFO_REQUEST:3",
      "missing_key:ICD_CODES:",
      "missing_key:DIAGNOSIS_NAMES:",
    ]);
    expect(problems[0].message).toContain("committed, differential, none");
  });

  it("reports an empty output once", () => {
    expect(kinds(parseJudgeOutput("").problems)).toEqual(["empty_output::"]);
    expect(kinds(parseJudgeOutput(" \n\t").problems)).toEqual(["empty_output::"]);
    expect(judgeResponse("", { isLastSection: false }).structuredActionRaw).toEqual({
      primary_answer: null,
      info_request: null,
      icd_codes: [],
      diagnosis_names: [],
      action: "Abstain",
    });
  });

  it("CLARIFY on the last section becomes ABSTAIN in the structured record too", () => {
    const raw = "PRIMARY_ANSWER: none\nINFO_REQUEST: specific\nICD_CODES: empty\nDIAGNOSIS_NAMES: empty";
    expect(judgeResponse(raw, { isLastSection: false }).structuredActionRaw.action).toBe("Clarify");
    expect(judgeResponse(raw, { isLastSection: true }).structuredActionRaw.action).toBe("Abstain");
  });

  it("splits lines as Python's str.splitlines", () => {
    expect(pySplitLines("")).toEqual([]);
    expect(pySplitLines("a\n")).toEqual(["a"]);
    expect(pySplitLines("a\n\nb\r\nc\rd")).toEqual(["a", "", "b", "c", "d"]);
    expect(pySplitLines("\n")).toEqual([""]);
    expect(pySplitLines("a\x1cb\x85c\u2028d\x1fe")).toEqual(["a", "b", "c", "d\x1fe"]);
  });
});

describe("parseJudgeOutput against Python (test/fixtures/judge)", () => {
  // expected.json: `python3 test/fixtures/judge/generate.py > test/fixtures/judge/expected.json`, an independent
  // Python reading of docs/evaluation.md#judge-parse-and-mapping run on the edge cases in cases.py (Python line breaks and whitespace).
  const cases = JSON.parse(readFileSync(new URL("../fixtures/judge/expected.json", import.meta.url), "utf8")) as {
    name: string;
    raw: string;
    is_last_section: boolean;
    lines: string[];
    structured_action_raw: StructuredActionRaw;
  }[];

  it("has the cases", () => expect(cases.length).toBeGreaterThan(10));

  for (const c of cases) {
    it(c.name, () => {
      expect(pySplitLines(c.raw)).toEqual(c.lines);
      const judged = judgeResponse(c.raw, { isLastSection: c.is_last_section });
      expect(judged.structuredActionRaw).toEqual(c.structured_action_raw);
      expect(toStructuredActionRaw(judged.features, judged.action)).toEqual(c.structured_action_raw);
    });
  }
});

describe("labels of judge validation (docs/judge-validation.md#label-normalisation)", () => {
  it("normalises labels", () => {
    for (const missing of ["", "  ", "nan", "NaN", "null", "NULL", "none/null", " None/Null ", null, undefined]) {
      expect(normaliseLabel(missing)).toBeNull();
    }
    for (const none of ["no", "No", "n/a", "N/A", "na", "not_applicable", "Not Applicable", "none", " NONE "]) {
      expect(normaliseLabel(none)).toBe("none");
    }
    expect(normaliseLabel(" Committed ")).toBe("committed");
    expect(normaliseLabel("Diagnose")).toBe("diagnose");
    expect(normaliseLabel("generic only")).toBe("generic only");
  });

  it("reads actions in any casing", () => {
    expect(parseAction(" diagnose ")).toBe("DIAGNOSE");
    expect(parseAction("Clarify")).toBe("CLARIFY");
    expect(parseAction("ABSTAIN")).toBe("ABSTAIN");
    expect(parseAction("")).toBeNull();
    expect(parseAction("Unparsed")).toBeNull();
    expect(parseAction(null)).toBeNull();
  });
});
