import { describe, expect, it } from "vitest";
import {
  buildJudgeMessages,
  buildUserPrompt,
  fillPlaceholder,
  orderCases,
  parseSamples,
  promptFilesOf,
  STRATEGIES,
  Trajectory,
  type ChatMessage,
  type RunSettings,
  type Strategy,
} from "../../app/evaluation/domain/runner-protocol";
import { loadPrompts } from "../../app/evaluation/prompts";
import hashes from "../../app/data/prompts/hashes.json";

const { prompts, hashes: loadedHashes } = loadPrompts();

const SYSTEM =
  "You are a licensed psychiatrist evaluating a patient in a clinical setting. You will be given a task based on the " +
  "patient information provided. Use standard psychiatric diagnostic criteria and current clinical practice " +
  "guidelines. Do not repeat or restate the patient information. Keep your response to one paragraph only.";

describe("prompt texts", () => {
  it("are the reference's files, hashed as pinned in hashes.json", () => {
    for (const [file, { sha256 }] of Object.entries(hashes as Record<string, { sha256: string }>)) {
      expect(loadedHashes[file]).toBe(sha256);
    }
    expect(prompts.system).toBe(SYSTEM);
  });

  it("lists the files each strategy uses", () => {
    expect(promptFilesOf("full_info_no_abstention")).toEqual([
      "system_instruction.txt",
      "judge.txt",
      "full_info_no_abstention.txt",
    ]);
    expect(promptFilesOf("sequential_info_abstention_aware")).toEqual([
      "system_instruction.txt",
      "judge.txt",
      "sequential_info_abstention_aware/initial_instruction.txt",
      "sequential_info_abstention_aware/additional_info_prefix.txt",
      "sequential_info_abstention_aware/final_step_abstention_notice.txt",
    ]);
  });
});

describe("user prompts (docs/evaluation.md#prompt-assembly), byte for byte", () => {
  const sections = ["Low mood for 3 weeks.", "Two prior episodes.", "MADRS 32."];

  it("full information: the template with every section, joined by a blank line", () => {
    expect(buildUserPrompt(prompts, "full_info_no_abstention", sections, 1)).toBe(
      "Task: Provide a psychiatric diagnosis and the corresponding ICD-10 code.\n\n" +
        "The available clinical information is provided below.\n\n" +
        "Patient information:\n" +
        "Low mood for 3 weeks.\n\nTwo prior episodes.\n\nMADRS 32.",
    );
    expect(buildUserPrompt(prompts, "full_info_abstention_aware", sections, 1)).toBe(
      "Task: Provide a psychiatric diagnosis and the corresponding ICD-10 code only if the available information is " +
        "sufficient to support a reliable diagnosis. If the available evidence is insufficient, ambiguous, or " +
        "consistent with multiple plausible diagnoses, explicitly state that you abstain.\n\n" +
        "The available clinical information is provided below.\n\n" +
        "Patient information:\n" +
        "Low mood for 3 weeks.\n\nTwo prior episodes.\n\nMADRS 32.",
    );
  });

  it("sequential, neutral: initial instruction, then the prefix with the new section only, the final notice at T", () => {
    const s = "sequential_info_neutral_prompting";
    expect(buildUserPrompt(prompts, s, sections, 1)).toBe(
      "Task: Provide a psychiatric diagnosis and the corresponding ICD-10 code.\n\n" +
        "This is the patient information currently available. More clinical information may still become available.\n\n" +
        "Patient information:\nLow mood for 3 weeks.",
    );
    const prefix =
      "The following additional clinical information has become available based on further assessment. Additional " +
      "clinical information may still be provided.\n\n" +
      "Task: Provide a psychiatric diagnosis and the corresponding ICD-10 code.\n\n" +
      "Patient information:\n";
    expect(buildUserPrompt(prompts, s, sections, 2)).toBe(prefix + "Two prior episodes.");
    expect(buildUserPrompt(prompts, s, sections, 3)).toBe(
      prefix +
        "MADRS 32.\n\n" +
        "No further patient information is available.\n\n" +
        "Task: Provide a psychiatric diagnosis and the corresponding ICD-10 code based on all the information provided.",
    );
  });

  it("sequential, abstention-aware: the final message holds both Task lines", () => {
    const s = "sequential_info_abstention_aware";
    const last = buildUserPrompt(prompts, s, sections, 3);
    expect(last).toBe(
      "The following additional clinical information has become available based on further assessment. Additional " +
        "clinical information may still be provided.\n\n" +
        "Task: If the available evidence is now sufficient, provide a psychiatric diagnosis and the corresponding " +
        "ICD-10 code. Otherwise, request the specific additional clinical information still needed.\n\n" +
        "Patient information:\nMADRS 32.\n\n" +
        "No further patient information is available.\n\n" +
        "Task: Provide a psychiatric diagnosis and the corresponding ICD-10 code only if the available information is " +
        "sufficient to support a reliable diagnosis. If the available evidence is insufficient, ambiguous, or " +
        "consistent with multiple plausible diagnoses, explicitly state that you abstain.",
    );
    expect(last.match(/Task:/g)).toHaveLength(2);
    // A one-section case: the initial instruction and the final notice in the same message.
    expect(buildUserPrompt(prompts, s, ["Only section."], 1)).toMatch(
      /^Task: Provide a diagnosis only if[\s\S]*Only section\.\n\nNo further patient/,
    );
  });

  it("inserts $-patterns literally (a function replacer)", () => {
    expect(fillPlaceholder("a {x} b {x}", "{x}", "$& $1 $$ $'")).toBe("a $& $1 $$ $' b $& $1 $$ $'");
    expect(buildUserPrompt(prompts, "sequential_info_neutral_prompting", ["cost $& $1 $$", "b", "c"], 1)).toMatch(
      /Patient information:\ncost \$& \$1 \$\$$/,
    );
  });

  it("the judge gets one user message: judge.txt with {model_response} replaced", () => {
    const messages = buildJudgeMessages(prompts, "Major depressive episode $1 (F32.1).");
    expect(messages).toHaveLength(1);
    expect(messages[0].role).toBe("user");
    expect(messages[0].content.startsWith("You are analyzing a psychiatric diagnostic response. Do NOT judge\n")).toBe(
      true,
    );
    expect(messages[0].content.endsWith("MODEL RESPONSE:\nMajor depressive episode $1 (F32.1).")).toBe(true);
    expect(messages[0].content).toBe(
      prompts.judge.replace("{model_response}", () => "Major depressive episode $1 (F32.1)."),
    );
  });

  it("refuses a step outside 1..T", () => {
    expect(() => buildUserPrompt(prompts, "sequential_info_neutral_prompting", sections, 4)).toThrow(RangeError);
  });
});

// ---------------------------------------------------------------------------------------------------------------

const JUDGE = {
  Diagnose: "PRIMARY_ANSWER: committed\nINFO_REQUEST: none\nICD_CODES: F32.1\nDIAGNOSIS_NAMES: depressive episode",
  Clarify: "PRIMARY_ANSWER: none\nINFO_REQUEST: specific\nICD_CODES: empty\nDIAGNOSIS_NAMES: empty",
  Abstain: "PRIMARY_ANSWER: differential\nINFO_REQUEST: none\nICD_CODES: F32.1, F33\nDIAGNOSIS_NAMES: a, b",
} as const;

/** What happens at one step: a judged action, an empty model answer, a failed judge call, or an unparsable judge. */
type Move = "Diagnose" | "Clarify" | "Abstain" | "empty" | "judge-fail" | "unparsed";

const settings = (strategy: Strategy): RunSettings => ({
  modelKey: "m",
  judgeKey: "j",
  strategy,
  seed: 123,
  temperature: 0.7,
  topP: 0.95,
  maxTokens: 512,
});

/** Drives a trajectory with one move per step (the last move repeats); returns it and the calls it asked for. */
function drive(strategy: Strategy, T: number, moves: Move[]) {
  const sections = Array.from({ length: T }, (_, i) => `section ${i + 1}`);
  const t = new Trajectory({ sampleId: "c1", sections }, strategy, prompts);
  const calls: { kind: string; step: number; messages: ChatMessage[] }[] = [];
  for (let guard = 0; guard < 100; guard++) {
    const call = t.nextCall();
    if (!call) break;
    expect(t.nextCall()).toEqual(call); // asking twice changes nothing
    calls.push(call);
    const move = moves[Math.min(call.step - 1, moves.length - 1)];
    if (call.kind === "model") t.applyModelOutput(move === "empty" ? "   " : `  answer ${call.step}: ${move}  `);
    else if (move === "judge-fail") t.applyJudgeOutcome({ ok: false });
    else if (move === "unparsed") t.applyJudgeOutcome({ ok: true, raw: "I cannot tell." });
    else t.applyJudgeOutcome({ ok: true, raw: `\n${JUDGE[move as keyof typeof JUDGE]}\n` });
  }
  expect(t.finished).toBe(true);
  return { t, calls, record: t.toRecord(settings(strategy)) };
}

describe("sequential transitions for every action at every step (docs/evaluation.md#the-sequential-protocol, docs/evaluation.md#judge-parse-and-mapping)", () => {
  for (const strategy of ["sequential_info_neutral_prompting", "sequential_info_abstention_aware"] as const) {
    for (const T of [3, 4, 5]) {
      for (let step = 1; step <= T; step++) {
        const last = step === T;
        // Steps before `step` ask for clarification; `step` makes the move; later steps clarify again.
        const scenario = (move: Move): Move[] => [...Array(step - 1).fill("Clarify"), move, "Clarify"];

        it(`${strategy}, T=${T}, step ${step}: Diagnose stops with Diagnose`, () => {
          const { record, calls } = drive(strategy, T, scenario("Diagnose"));
          expect(record.stopping_reason).toBe("Diagnose");
          expect(record.num_steps_executed).toBe(step);
          expect(record.trajectory.map((s) => s.judge_action)).toEqual([
            ...Array(step - 1).fill("Clarify"),
            "Diagnose",
          ]);
          expect(calls).toHaveLength(2 * step);
        });

        it(`${strategy}, T=${T}, step ${step}: Abstain stops${last ? "" : " early (premature abstention)"}`, () => {
          const { record } = drive(strategy, T, scenario("Abstain"));
          expect(record.stopping_reason).toBe("Abstain");
          expect(record.num_steps_executed).toBe(step);
          expect(record.trajectory[step - 1].judge_action).toBe("Abstain");
        });

        it(`${strategy}, T=${T}, step ${step}: Clarify ${
          last ? "at T becomes Abstain" : "reveals the next section"
        }`, () => {
          const { record } = drive(strategy, T, scenario("Clarify"));
          // Clarify everywhere: the trajectory reaches T, where the judge rule turns Clarify into Abstain.
          expect(record.num_steps_executed).toBe(T);
          expect(record.stopping_reason).toBe("Abstain");
          expect(record.trajectory.map((s) => s.judge_action)).toEqual([...Array(T - 1).fill("Clarify"), "Abstain"]);
          expect(record.trajectory[T - 1].structured_action_raw?.action).toBe("Abstain");
          expect(record.trajectory.map((s) => s.section_order)).toEqual(Array.from({ length: T }, (_, i) => i + 1));
        });

        it(`${strategy}, T=${T}, step ${step}: an empty answer is not judged and the case ${
          last ? "finishes" : "goes on"
        }`, () => {
          const { record, calls } = drive(strategy, T, [...Array(step - 1).fill("Clarify"), "empty", "Diagnose"]);
          const s = record.trajectory[step - 1];
          expect(s.model_output_raw).toBe("");
          expect(s.judge_output_raw).toBe("");
          expect(s.judge_action).toBe("");
          expect(s.structured_action_raw).toBeNull();
          expect(calls.filter((c) => c.step === step).map((c) => c.kind)).toEqual(["model"]);
          if (last) {
            expect(record.stopping_reason).toBe("Finished");
            expect(record.num_steps_executed).toBe(T);
          } else {
            expect(record.stopping_reason).toBe("Diagnose");
            expect(record.num_steps_executed).toBe(step + 1);
          }
        });

        it(`${strategy}, T=${T}, step ${step}: a judge failure records null and the case ${
          last ? "finishes" : "goes on"
        }`, () => {
          const { record } = drive(strategy, T, [...Array(step - 1).fill("Clarify"), "judge-fail", "Abstain"]);
          const s = record.trajectory[step - 1];
          expect(s.judge_action).toBeNull();
          expect(s.judge_output_raw).toBe("");
          expect(s.structured_action_raw).toBeNull();
          expect(s.model_output_raw).toBe(`answer ${step}: judge-fail`);
          expect(record.stopping_reason).toBe(last ? "Finished" : "Abstain");
        });

        it(`${strategy}, T=${T}, step ${step}: an unparsable judge output is an Abstain (the reference's rule)`, () => {
          const { record } = drive(strategy, T, scenario("unparsed"));
          expect(record.stopping_reason).toBe("Abstain");
          expect(record.trajectory[step - 1].structured_action_raw).toEqual({
            primary_answer: null,
            info_request: null,
            icd_codes: [],
            diagnosis_names: [],
            action: "Abstain",
          });
        });
      }
    }
  }

  it("never goes past T: empty answers at every step finish at T", () => {
    const { record, calls } = drive("sequential_info_neutral_prompting", 4, ["empty"]);
    expect(record.stopping_reason).toBe("Finished");
    expect(record.num_steps_executed).toBe(4);
    expect(calls.map((c) => c.kind)).toEqual(["model", "model", "model", "model"]);
  });
});

describe("full-information transitions", () => {
  for (const strategy of ["full_info_no_abstention", "full_info_abstention_aware"] as const) {
    const cases: [Move, string, string | null][] = [
      ["Diagnose", "Diagnose", "Diagnose"],
      ["Abstain", "Abstain", "Abstain"],
      ["Clarify", "Abstain", "Abstain"], // the last-section rule, then the runner's re-mapping
      ["empty", "", ""],
      ["judge-fail", "Finished", null], // the reference's None stopping reason becomes Finished
    ];
    for (const [move, reason, action] of cases) {
      it(`${strategy}: ${move} → stopping_reason ${JSON.stringify(reason)}`, () => {
        const { record, calls } = drive(strategy, 5, [move]);
        expect(record.stopping_reason).toBe(reason);
        expect(record.num_steps_executed).toBe(1);
        expect(record.trajectory[0].judge_action).toBe(action);
        expect(record.trajectory[0].section_order).toBe(1);
        expect(record.trajectory[0].revealed_section_orders).toEqual([1, 2, 3, 4, 5]);
        expect(record.trajectory[0].is_last_section).toBe(true);
        expect(calls).toHaveLength(move === "empty" ? 1 : 2);
      });
    }
  }
});

describe("the messages sent at each step", () => {
  it("each model call sends system, u1, a1, …, u_t; conversation_state holds the reply too", () => {
    const { calls, record } = drive("sequential_info_abstention_aware", 3, ["Clarify", "Clarify", "Diagnose"]);
    const sections = ["section 1", "section 2", "section 3"];
    const u = (t: number) => buildUserPrompt(prompts, "sequential_info_abstention_aware", sections, t);
    const a = (t: number, move: string) => `answer ${t}: ${move}`;
    const model = calls.filter((c) => c.kind === "model").map((c) => c.messages);
    expect(model[0]).toEqual([
      { role: "system", content: SYSTEM },
      { role: "user", content: u(1) },
    ]);
    expect(model[1]).toEqual([
      { role: "system", content: SYSTEM },
      { role: "user", content: u(1) },
      { role: "assistant", content: a(1, "Clarify") },
      { role: "user", content: u(2) },
    ]);
    expect(model[2]).toEqual([
      ...model[1],
      { role: "assistant", content: a(2, "Clarify") },
      { role: "user", content: u(3) },
    ]);
    const judge = calls.filter((c) => c.kind === "judge").map((c) => c.messages);
    expect(judge[2]).toEqual(buildJudgeMessages(prompts, a(3, "Diagnose")));
    expect(record.trajectory[2].conversation_state).toEqual([
      ...model[2],
      { role: "assistant", content: a(3, "Diagnose") },
    ]);
    expect(record.trajectory[1].user_prompt).toBe(u(2));
    expect(record.trajectory[1].revealed_section_orders).toEqual([1, 2]);
  });

  it("a failed model call leaves an empty assistant turn in the history, as the reference does", () => {
    const { calls } = drive("sequential_info_neutral_prompting", 3, ["empty", "Diagnose"]);
    const second = calls.filter((c) => c.kind === "model")[1].messages;
    expect(second[2]).toEqual({ role: "assistant", content: "" });
  });
});

describe("trajectory records (docs/formats.md#trajectoriesjsonl)", () => {
  it("have every field in the reference's order and types", () => {
    const { record } = drive("sequential_info_neutral_prompting", 3, ["Clarify", "Diagnose"]);
    expect(Object.keys(record)).toEqual([
      "sample_id",
      "num_sections_total",
      "num_steps_executed",
      "stopping_reason",
      "trajectory",
      "model_evaluated",
      "judge_model",
      "judge_seed",
      "strategy",
      "seed",
      "model_do_sample",
      "model_temperature",
      "model_top_p",
      "model_max_tokens",
      "judge_do_sample",
      "judge_max_tokens",
    ]);
    expect(Object.keys(record.trajectory[0])).toEqual([
      "step_index",
      "section_order",
      "revealed_section_orders",
      "user_prompt",
      "conversation_state",
      "model_output_raw",
      "judge_output_raw",
      "judge_action",
      "is_last_section",
      "structured_action_raw",
    ]);
    expect(Object.keys(record.trajectory[1].structured_action_raw!)).toEqual([
      "primary_answer",
      "info_request",
      "icd_codes",
      "diagnosis_names",
      "action",
    ]);
    expect(record).toMatchObject({
      sample_id: "c1",
      num_sections_total: 3,
      num_steps_executed: 2,
      judge_seed: 123,
      seed: 123,
      model_do_sample: true,
      model_temperature: 0.7,
      model_top_p: 0.95,
      model_max_tokens: 512,
      judge_do_sample: false,
      judge_max_tokens: 128,
    });
    // Outputs are trimmed; the judge output is kept as the judge wrote it, trimmed.
    expect(record.trajectory[1].model_output_raw).toBe("answer 2: Diagnose");
    expect(record.trajectory[1].judge_output_raw).toBe(JUDGE.Diagnose);
    expect(record.trajectory[1].structured_action_raw).toEqual({
      primary_answer: "committed",
      info_request: "none",
      icd_codes: ["F32.1"],
      diagnosis_names: ["depressive episode"],
      action: "Diagnose",
    });
  });

  it("refuses a record before the end", () => {
    const t = new Trajectory(
      { sampleId: "x", sections: ["a", "b", "c"] },
      "sequential_info_neutral_prompting",
      prompts,
    );
    expect(() => t.toRecord(settings("sequential_info_neutral_prompting"))).toThrow(/not finished/);
    expect(() => t.applyJudgeOutcome({ ok: false })).toThrow(/no judge call/);
  });
});

describe("cases", () => {
  it("are ordered by Python's random.seed(seed) + shuffle, then limited", () => {
    // python3 -c "import random; r=random.Random(123); l=list(range(10)); r.shuffle(l); print(l)"
    const ten = Array.from({ length: 10 }, (_, i) => i);
    expect(orderCases(ten, 123)).toEqual([8, 7, 5, 9, 2, 3, 6, 1, 4, 0]);
    expect(orderCases(ten, 42)).toEqual([7, 3, 2, 8, 5, 6, 9, 4, 0, 1]);
    expect(orderCases(ten, 123, 3)).toEqual([8, 7, 5]);
    expect(ten).toEqual(Array.from({ length: 10 }, (_, i) => i));
  });

  it("are read from samples.json with sections sorted by order and trimmed", () => {
    const parsed = parseSamples([
      {
        sample_id: "a",
        sections: [
          { order: 2, content: " second \n" },
          { order: 1, content: "first" },
        ],
      },
      { sample_id: 7, sections: [{ order: 1, content: "x" }] },
    ]);
    expect(parsed).toEqual({
      ok: true,
      cases: [
        { sampleId: "a", sections: ["first", "second"] },
        { sampleId: "7", sections: ["x"] },
      ],
    });
  });

  it("reports bad samples", () => {
    const parsed = parseSamples([
      { sample_id: "a", sections: [] },
      { sample_id: "b", sections: [{ order: 1, content: "  " }] },
      { id: "c", sections: [{ order: 1, content: "x" }] },
      {
        sample_id: "d",
        sections: [
          { order: 1, content: "x" },
          { order: 1, content: "y" },
        ],
      },
      { sample_id: "e", sections: [{ order: 1, content: "x" }] },
      { sample_id: "e", sections: [{ order: 1, content: "x" }] },
    ]);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.errors).toEqual([
        "element 1 (a): sections must be a non-empty array",
        "element 2 (b): section 1 is empty",
        "element 3: sample_id must be a string, got nothing",
        "element 4 (d): two sections have the same order",
        'element 6: duplicate sample_id "e"',
      ]);
    }
    expect(parseSamples({})).toEqual({ ok: false, errors: ["samples.json must be one JSON array"] });
  });

  it("knows the four strategies", () => {
    expect(STRATEGIES).toHaveLength(4);
  });
});
