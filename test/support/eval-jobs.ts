/**
 * The evaluation jobs' test set-up (docs/evaluation.md, "Running from the browser"): a providers file naming the
 * OpenAI-compatible stub three ways (a candidate, a judge, a multiple-choice model), the key in an environment
 * variable, the input folder with a samples.json and a MentalBench items file, and fresh run and report folders —
 * all through the environment variables a deployment sets, which worker threads inherit when they start.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { importRunFolders } from "../../app/evaluation/evaluations.server";
import type { Db } from "../../app/platform/db.server";
import { gold } from "../fixtures/runner/builders";
import { writeEvalRuns } from "./eval-runs";
import { judgeOutputFor, scriptedTag, type StubHandler } from "./openai-stub";

/** The key the providers' variable holds: no page, loader, log line, audit event or job row may contain it. */
export const SECRET_KEY = "sk-concord-test-7c1e5d0f-NEVER-SHOWN";
export const KEY_ENV = "CONCORD_TEST_PROVIDER_KEY";

const ENV = ["CONCORD_PROVIDERS", "CONCORD_EVAL_INPUTS", "CONCORD_EVAL_RUNS", "CONCORD_MC_REPORTS", KEY_ENV] as const;

export interface EvalJobsEnv {
  dir: string;
  inputs: string;
  restore(): void;
}

/** Safe-Psych cases whose sections script the model's action (test/support/openai-stub.ts, scriptedHandler). */
export const SAMPLES = [
  { sample_id: "a", sections: ["[[clarify]]", "[[diagnose:F32.1]]"] },
  { sample_id: "b", sections: ["[[abstain]]", "[[clarify]]", "[[diagnose:F20.0]]"] },
].map((c) => ({
  sample_id: c.sample_id,
  sections: c.sections.map((tag, i) => ({ order: i + 1, content: `case-${c.sample_id} s${i + 1}: finding ${tag}` })),
}));

export function setUpEvalJobs(baseURL: string): EvalJobsEnv {
  const saved = Object.fromEntries(ENV.map((k) => [k, process.env[k]]));
  const dir = mkdtempSync(join(tmpdir(), "concord-evaljobs-"));
  const inputs = join(dir, "inputs");
  mkdirSync(inputs);
  writeFileSync(
    join(dir, "providers.json"),
    JSON.stringify({
      providers: [
        { name: "stub-candidate", baseUrl: baseURL, model: "cand-model", apiKeyEnv: KEY_ENV },
        { name: "stub-judge", baseUrl: baseURL, model: "judge-model", apiKeyEnv: KEY_ENV },
        { name: "stub-mc", baseUrl: baseURL, model: "mc-model", apiKeyEnv: KEY_ENV },
      ],
    }),
  );
  writeFileSync(join(inputs, "samples.json"), JSON.stringify(SAMPLES));
  copyFileSync("test/fixtures/mc-evaluation/mentalbench-items.jsonl", join(inputs, "mentalbench-items.jsonl"));
  Object.assign(process.env, {
    CONCORD_PROVIDERS: join(dir, "providers.json"),
    CONCORD_EVAL_INPUTS: inputs,
    CONCORD_EVAL_RUNS: join(dir, "runs"),
    CONCORD_MC_REPORTS: join(dir, "mc-reports"),
    [KEY_ENV]: SECRET_KEY,
  });
  return {
    dir,
    inputs,
    restore() {
      for (const k of ENV) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The stub's answers for every job: the grading judge says every criterion is met, the multiple-choice model answers
 * "A", the Safe-Psych judge reads the scripted action back, the candidate answers plainly. `delayMs` slows each call.
 */
export function evalJobsHandler(delayMs = 0): StubHandler {
  return (call) => {
    if (call.model === "judge-model" && call.last.includes("criteria_met"))
      return { content: '```json\n{"explanation": "it does", "criteria_met": true}\n```', delayMs };
    if (call.model === "judge-model") {
      const m = /ACTION=([a-z-]+)(?: CODE=(\S+))?/.exec(call.last);
      const action = (m?.[1] ?? "abstain") as "diagnose" | "clarify" | "abstain";
      return { content: judgeOutputFor(action, m?.[2]) + "\n", delayMs };
    }
    if (call.model === "mc-model") return { content: "A", delayMs };
    const tag = scriptedTag(call.last);
    if (tag) return { content: `ACTION=${tag.action}${tag.code ? ` CODE=${tag.code}` : ""}`, delayMs };
    return { content: "Please see a clinician; sleep hygiene helps.", delayMs };
  };
}

/**
 * An evaluation for a Safe-Psych job to import into, created as `eval-import` creates one (with one run of another
 * model, "other"), whose gold labels hold the given cases of SAMPLES: "a" is sufficient at its second section
 * (F32.1), "b" is not. Returns its id.
 */
export function createJobEvaluation(db: Db, dir: string, name: string, ids: string[]): number {
  const strategy = "sequential_info_abstention_aware";
  const { goldPath, runsDir } = writeEvalRuns(join(dir, `evaluation-${name}`), {
    cases: ids.length,
    ids,
    models: ["other"],
    strategies: [strategy],
    seeds: [1],
  });
  const labels = [
    gold({ id: "a", sufficient: true, code: "F32.1", tau: 2, T: 2 }),
    gold({ id: "b", sufficient: false, T: 3 }),
  ].filter((g) => ids.includes(g.id as string));
  writeFileSync(goldPath, JSON.stringify(labels));
  const r = importRunFolders(db, { evaluation: name, create: { goldFile: goldPath, studyId: null }, dirs: [runsDir] });
  if (r.problems.length > 0 || r.evaluationId === null) throw new Error(r.problems.join("\n"));
  return r.evaluationId;
}
