/**
 * The grader's request and the reading of its answer. grader-prompt.json and verdict-cases.json were made by
 * reference_grader_prompt.py and verdict_reference.py (test/fixtures/rubric-grading/), which run HealthBench's own
 * grade_sample from a clone of simple-evals (its template checked equal to the stored one) with a stand-in grader.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { graderMessages, graderPrompt, pythonNumber, rubricItemText } from "../../app/rubric-grading/domain/grader";
import { readVerdict, recoverVerdict } from "../../app/rubric-grading/domain/verdict";
import { loadGraderText } from "../../app/rubric-grading/grader-text.server";

const dir = "test/fixtures/rubric-grading";
const prompts = JSON.parse(readFileSync(`${dir}/grader-prompt.json`, "utf8"));
const cases = JSON.parse(readFileSync(`${dir}/verdict-cases.json`, "utf8"));

describe("grader text", () => {
  it("the stored template and system message match their hashes", () => {
    const text = loadGraderText();
    const hashes = JSON.parse(readFileSync("app/data/rubric-grading/hashes.json", "utf8"));
    const h = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");
    expect(h(text.template)).toBe(hashes["grader-template.txt"].sha256);
    expect(h(text.systemMessage)).toBe(hashes["grader-system-message.txt"].sha256);
    expect(text.systemMessage).toBe("You are a helpful assistant.");
    expect(text.template.startsWith("Your job is to look at a conversation")).toBe(true);
    expect(text.template.endsWith("Do not include any other text in the response.")).toBe(true);
  });

  it("builds the reference's grader prompt byte for byte", () => {
    const text = loadGraderText();
    prompts.items.forEach((item: { criterion: string; points: number }, i: number) => {
      const messages = graderMessages(text, prompts.prompt, prompts.response, item);
      expect(messages[0]).toEqual({ role: "system", content: "You are a helpful assistant." });
      expect(messages[1].role).toBe("user");
      expect(messages[1].content).toBe(prompts.grader_prompts[i]);
    });
  });

  it("renders points as Python's str() does", () => {
    expect(rubricItemText({ criterion: "x", points: -5 })).toBe("[-5] x");
    expect(pythonNumber(2.5)).toBe("2.5");
    expect(pythonNumber(1e-7)).toBe("1e-07");
    expect(graderPrompt("<<rubric_item>>|<<rubric_item>>", "c", { criterion: "a", points: 1 })).toBe("[1] a|[1] a");
  });
});

describe("verdicts", () => {
  it("accepts as parsed exactly what the reference's parse accepts, with its value", () => {
    for (const c of cases) {
      const v = readVerdict(c.answer);
      if (c.reference_accepts) {
        expect(v?.status, c.answer).toBe("parsed");
        expect(v?.criteriaMet).toBe(c.criteria_met);
      } else {
        expect(v?.status, c.answer).not.toBe("parsed");
      }
    }
  });

  it("recovers the already-emitted boolean from malformed JSON", () => {
    expect(readVerdict('{"explanation": "cut off because", "criteria_met": true')).toEqual({
      status: "recovered",
      criteriaMet: true,
      explanation: "cut off because",
    });
    expect(readVerdict('Sure! {"explanation": "x", "criteria_met": false} Hope that helps.')?.criteriaMet).toBe(false);
    expect(readVerdict('```\n{"criteria_met": true}\n```')).toMatchObject({ status: "recovered", criteriaMet: true });
    expect(readVerdict("criteria_met: TRUE")).toMatchObject({ status: "recovered", criteriaMet: true });
  });

  it("leaves unreadable or contradictory answers unread", () => {
    expect(readVerdict('{"explanation": "no verdict"}')).toBeNull();
    expect(readVerdict("[true]")).toBeNull();
    expect(readVerdict('```json\n{"criteria_met": "true"}\n```')).toBeNull();
    expect(recoverVerdict('"criteria_met": true … "criteria_met": false')).toBeNull();
  });
});
