/**
 * Reading judge-validation files (app/judge-validation/domain/judge-import.ts, docs/judge-validation.md#importing-responses): the three responses formats flattened to the
 * reference's step rows, line-numbered errors, candidate judges' outputs; the raters' guide cut from the judge prompt
 * (app/judge-validation/domain/judge-guide.ts); the three-raters-per-response planner (app/judge-validation/domain/rater-assignment.ts).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { judgeGuide } from "~/judge-validation/domain/judge-guide";
import {
  COLLECTED_STEP_KEYS,
  parseJudgeOutputsJsonl,
  parseResponsesJsonl,
  responseIdentity,
  RUN_KEYS,
} from "~/judge-validation/domain/judge-import";
import { planRaterAssignments } from "~/judge-validation/domain/rater-assignment";

const jsonl = (...rows: unknown[]) =>
  rows.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n") + "\n";

function step(i: number, extra: Record<string, unknown> = {}) {
  return {
    step_index: i,
    section_order: i,
    revealed_section_orders: Array.from({ length: i }, (_, k) => k + 1),
    user_prompt: `section ${i}`,
    conversation_state: [{ role: "system", content: "sys" }],
    model_output_raw: `answer ${i}`,
    judge_output_raw: "PRIMARY_ANSWER: none",
    judge_action: "Clarify",
    is_last_section: i === 2,
    structured_action_raw: null,
    ...extra,
  };
}

const record = (sampleId: string, steps: unknown[]) => ({
  sample_id: sampleId,
  num_sections_total: 2,
  num_steps_executed: steps.length,
  stopping_reason: "Finished",
  trajectory: steps,
  model_evaluated: "gemma-3-4b",
  judge_model: "gemma-3-27b",
  judge_seed: 123,
  strategy: "sequential_info_neutral_prompting",
  seed: 123,
  model_do_sample: true,
});

const source = { name: "gemma-3-4b_sequential_run", dir: "runs/gemma-3-4b_sequential_run", file: "trajectories.jsonl" };

describe("parseResponsesJsonl: trajectories.jsonl", () => {
  const nj = {
    primary_answer: "committed",
    contingency: "none",
    info_request: "none",
    icd_codes: ["F32.1"],
    diagnosis_names: ["x"],
    action: "Diagnose",
  };
  const parsed = parseResponsesJsonl(
    jsonl(record("c1", [step(1), step(2, { new_judge_output: nj })]), record("c2", [step(1)])),
    { source },
  );

  it("flattens one row per step, keys in collect_trajectories.py's order", () => {
    expect(parsed.errors).toEqual([]);
    expect(parsed.format).toBe("trajectories");
    expect(parsed.responses.map((r) => [r.line, r.sampleId, r.stepIndex])).toEqual([
      [1, "c1", 1],
      [1, "c1", 2],
      [2, "c2", 1],
    ]);
    const row = parsed.responses[1]!.record;
    expect(Object.keys(row)).toEqual([
      "source_run_name",
      "source_run_dir",
      "source_file",
      ...RUN_KEYS,
      ...COLLECTED_STEP_KEYS,
      "new_judge_output",
    ]);
    expect(row).toMatchObject({
      source_run_name: "gemma-3-4b_sequential_run",
      source_run_dir: "runs/gemma-3-4b_sequential_run",
      source_file: "trajectories.jsonl",
      sample_id: "c1",
      strategy: "sequential_info_neutral_prompting",
      model_evaluated: "gemma-3-4b",
      stopping_reason: "Finished",
      step_index: 2,
      model_output_raw: "answer 2",
      is_last_section: true,
      new_judge_output: nj,
    });
    expect(parsed.responses[1]).toMatchObject({
      model: "gemma-3-4b",
      isLastSection: true,
      newJudgeOutput: nj,
      sourceRun: source.name,
    });
  });

  it("warns that responses without a first parse can only fall in clear_abstain_decline", () => {
    expect(parsed.warnings).toEqual([
      { line: 0, message: expect.stringMatching(/^2 of 3 responses have no first-parse features/) },
    ]);
  });

  it("reports bad lines with their numbers and returns no responses", () => {
    const bad = parseResponsesJsonl(
      jsonl(
        record("c1", [step(1)]),
        "{not json",
        record("c2", [step(1, { model_output_raw: 42 })]),
        record("c1", [step(1)]),
        { sample_id: "c3", trajectory: "x" },
        "[1]",
      ),
      { source },
    );
    expect(bad.responses).toEqual([]);
    expect(bad.errors.map((e) => e.line)).toEqual([2, 3, 4, 5, 6]);
    expect(bad.errors[0]!.message).toMatch(/^not valid JSON/);
    expect(bad.errors[1]!.message).toBe("step 1: model_output_raw must be a string, not 42");
    expect(bad.errors[2]!.message).toBe(`sample c1 step 1 of ${source.name} appears twice (first on line 1)`);
    expect(bad.errors[3]!.message).toMatch(/trajectory must be a list of steps/);
    expect(bad.errors[4]!.message).toMatch(/must be a JSON object, not a list/);
  });

  it("refuses a line of another format", () => {
    const mixed = parseResponsesJsonl(jsonl(record("c1", [step(1)]), { id: "x", response: "hi" }));
    expect(mixed.errors).toEqual([
      { line: 2, message: "this line is a simple row but the file is trajectories: one format per file" },
    ]);
  });

  it("refuses a response already in the set", () => {
    const first = parsed.responses[0]!;
    const again = parseResponsesJsonl(jsonl(record("c1", [step(1)])), {
      source,
      existing: new Set([responseIdentity(first)]),
    });
    expect(again.errors[0]!.message).toMatch(/already in the set/);
  });
});

describe("parseResponsesJsonl: flattened rows", () => {
  it("keeps the row as it is, odd values read as the reference reads them, with warnings", () => {
    const row = {
      source_run_name: "r",
      sample_id: "s1",
      step_index: null,
      model_output_raw: null,
      is_last_section: "false",
      new_judge_output: null,
      extra: 1,
    };
    const parsed = parseResponsesJsonl(jsonl(row));
    expect(parsed.errors).toEqual([]);
    expect(parsed.format).toBe("flattened");
    expect(parsed.responses[0]).toMatchObject({
      record: row,
      stepIndex: null,
      modelOutputRaw: "",
      isLastSection: true,
      newJudgeOutput: null,
    });
    expect(parsed.warnings.map((w) => w.message)).toEqual([
      "model_output_raw is null: read as empty",
      "no step_index",
      'is_last_section is "false": read as true, as Python\'s truthiness does',
      expect.stringMatching(/no first-parse features/),
    ]);
  });

  it("reads the validation-set fixture without errors", () => {
    const text = readFileSync(new URL("../fixtures/validation-set/input.jsonl", import.meta.url), "utf8");
    const parsed = parseResponsesJsonl(text);
    expect(parsed.errors).toEqual([]);
    expect(parsed.responses).toHaveLength(161);
  });
});

describe("parseResponsesJsonl: simple rows", () => {
  it("maps the simple keys onto a reference row", () => {
    const parsed = parseResponsesJsonl(
      jsonl({
        id: "n1",
        model: "m",
        strategy: "s",
        step: 2,
        is_last_section: true,
        response: "F32.1",
        features: {
          primary_answer: "Committed",
          info_request: "none",
          icd_codes: "F32.1, F33",
          diagnosis_names: ["moderate depressive episode"],
        },
      }),
    );
    expect(parsed.errors).toEqual([]);
    const r = parsed.responses[0]!;
    expect(r.record).toMatchObject({
      sample_id: "n1",
      model_evaluated: "m",
      strategy: "s",
      step_index: 2,
      is_last_section: true,
      model_output_raw: "F32.1",
    });
    expect(r.newJudgeOutput).toEqual({
      primary_answer: "committed",
      contingency: null,
      info_request: "none",
      icd_codes: ["F32.1", "F33"],
      diagnosis_names: ["moderate depressive episode"],
      action: null,
    });
  });

  it("checks every field and names the line", () => {
    const parsed = parseResponsesJsonl(
      jsonl(
        { id: "n1", response: "ok" },
        { id: "", response: "x" },
        { id: "n2", response: 3, step: 0 },
        { id: "n3", response: "x", features: { primary_answer: "maybe", colour: "red" } },
        { id: "n4", response: "x", is_last_section: "yes" },
        { id: "n1", response: "again" },
      ),
    );
    expect(parsed.responses).toEqual([]);
    expect(parsed.errors).toEqual([
      { line: 2, message: 'id must be a non-empty string, not ""' },
      { line: 3, message: "step must be a whole number ≥ 1, not 0" },
      { line: 3, message: "response must be a string, not 3" },
      {
        line: 4,
        message:
          "features has unknown key colour; known: primary_answer, contingency, info_request, icd_codes, diagnosis_names",
      },
      { line: 4, message: 'features.primary_answer must be one of committed, differential, none, not "maybe"' },
      { line: 5, message: 'is_last_section must be true or false, not "yes"' },
      { line: 6, message: "sample n1 step 1 appears twice (first on line 1)" },
    ]);
  });

  it("refuses an empty file and a first line of no known format", () => {
    expect(parseResponsesJsonl("\n\n").errors).toEqual([{ line: 0, message: "the file is empty" }]);
    expect(parseResponsesJsonl('{"text": "x"}\n').errors[0]!.message).toMatch(/cannot tell the file's format/);
  });
});

describe("parseJudgeOutputsJsonl", () => {
  const items = new Map([
    ["ann_0001", false],
    ["ann_0002", true],
    ["ann_0003", false],
  ]);

  it("reads the reference's new_judge_output and raw judge text", () => {
    const parsed = parseJudgeOutputsJsonl(
      jsonl(
        {
          annotation_id: "ann_0001",
          new_judge_output: { primary_answer: "Committed", info_request: "n/a", action: "diagnose" },
        },
        // Raw text on the last section: CLARIFY becomes ABSTAIN, as the runner maps it.
        {
          annotation_id: "ann_0002",
          judge_output_raw: "PRIMARY_ANSWER: none\nINFO_REQUEST: specific\nICD_CODES: empty\nDIAGNOSIS_NAMES:",
        },
        { annotation_id: "ann_0003", judge_output_raw: "" },
      ),
      { items },
    );
    expect(parsed.errors).toEqual([]);
    expect(
      parsed.rows.map(({ annotationId, primaryAnswer, infoRequest, action, raw }) => ({
        annotationId,
        primaryAnswer,
        infoRequest,
        action,
        raw: raw !== null,
      })),
    ).toEqual([
      { annotationId: "ann_0001", primaryAnswer: "committed", infoRequest: "none", action: "DIAGNOSE", raw: false },
      { annotationId: "ann_0002", primaryAnswer: "none", infoRequest: "specific", action: "ABSTAIN", raw: true },
      { annotationId: "ann_0003", primaryAnswer: null, infoRequest: null, action: null, raw: true },
    ]);
    expect(parsed.warnings.map((w) => w.line)).toEqual([3]);
  });

  it("refuses unknown and repeated ids, bad values and null outputs, line by line", () => {
    const parsed = parseJudgeOutputsJsonl(
      jsonl(
        {
          annotation_id: "ann_0001",
          new_judge_output: { primary_answer: "committed", info_request: "none", action: "Diagnose" },
        },
        { annotation_id: "ann_9999", new_judge_output: {} },
        { annotation_id: "ann_0001", new_judge_output: {} },
        { annotation_id: "ann_0002", new_judge_output: null },
        { annotation_id: "ann_0003", new_judge_output: { primary_answer: "yes", action: "refuse" } },
      ),
      { items },
    );
    expect(parsed.rows).toEqual([]);
    expect(parsed.errors).toEqual([
      { line: 2, message: "annotation_id ann_9999 is not a response of this set's sample" },
      { line: 3, message: "annotation_id ann_0001 appears twice (first on line 1)" },
      { line: 4, message: "new_judge_output must be an object, not null" },
      { line: 5, message: 'primary_answer must be one of committed, differential, none (or empty), not "yes"' },
      { line: 5, message: 'action must be one of DIAGNOSE, CLARIFY, ABSTAIN (any case), not "refuse"' },
    ]);
  });

  it("warns when the judge covers only part of the sample", () => {
    const parsed = parseJudgeOutputsJsonl(
      jsonl({
        annotation_id: "ann_0001",
        new_judge_output: { primary_answer: "none", info_request: "none", action: "Abstain" },
      }),
      { items },
    );
    expect(parsed.warnings).toEqual([
      { line: 0, message: "the file covers 1 of the 3 sampled responses; the others count as missing" },
    ]);
  });
});

describe("judgeGuide", () => {
  const guide = judgeGuide(readFileSync(new URL("../../app/data/prompts/judge.txt", import.meta.url), "utf8"));

  it("holds the two feature definitions and the seven worked examples of the judge prompt", () => {
    expect(guide.features.map((f) => f.title)).toEqual(["FEATURE 1: PRIMARY_ANSWER", "FEATURE 2: INFO_REQUEST"]);
    expect(guide.features[0]!.body).toContain('"differential": The response presents MULTIPLE diagnoses');
    expect(guide.features[1]!.body).toContain('IMPORTANT: A request is "specific" ONLY if it names a concrete');
    expect(guide.examples).toHaveLength(7);
    expect(guide.examples[0]).toEqual({
      response:
        "Moderate depressive episode, F32.1. Further evaluation is needed to rule out other potential causes and confirm the diagnosis.",
      output: [
        { key: "PRIMARY_ANSWER", value: "committed" },
        { key: "INFO_REQUEST", value: "generic_only" },
        { key: "ICD_CODES", value: "F32.1" },
        { key: "DIAGNOSIS_NAMES", value: "Moderate depressive episode" },
      ],
    });
    expect(guide.examples[6]!.output).toEqual([
      { key: "PRIMARY_ANSWER", value: "none" },
      { key: "INFO_REQUEST", value: "specific" },
      { key: "ICD_CODES", value: "" },
      { key: "DIAGNOSIS_NAMES", value: "" },
    ]);
    expect(JSON.stringify(guide)).not.toContain("{model_response}");
  });

  it("refuses a prompt without its sections", () => {
    expect(() => judgeGuide("just text")).toThrow(/FEATURE and EXAMPLES/);
  });
});

describe("planRaterAssignments", () => {
  const itemIds = Array.from({ length: 10 }, (_, i) => i + 1);

  it("gives every item three different raters with balanced loads, reproducibly", () => {
    const plan = planRaterAssignments({ itemIds, raterIds: ["d", "a", "c", "b"], seed: 5 });
    if (!plan.ok) throw new Error(plan.error);
    for (const id of itemIds) {
      const raters = plan.assignments.filter((a) => a.itemId === id).map((a) => a.raterId);
      expect(new Set(raters).size).toBe(3);
    }
    const loads = Object.values(plan.load);
    expect(loads.reduce((a, b) => a + b, 0)).toBe(30);
    expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(1);
    expect(planRaterAssignments({ itemIds, raterIds: ["a", "b", "c", "d"], seed: 5 })).toEqual(plan);
  });

  it("needs at least three raters", () => {
    expect(planRaterAssignments({ itemIds, raterIds: ["a", "b", "a"], seed: 1 })).toEqual({
      ok: false,
      error: "choose at least 3 raters: each response goes to 3 different people (2 chosen).",
    });
  });
});
