/**
 * Synthetic Safe-Psych runs for the evaluation pages' tests and bench (docs/evaluation.md, "Runs in the app"): a
 * data_gt.json and a folder of run folders (model × strategy × seed) in the reference's formats, drawn from a
 * seeded generator so that every run of the tests sees the same files.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gold, record, type Act, type StepSpec } from "../fixtures/runner/builders";

export interface EvalRunsSpec {
  cases: number;
  models: string[];
  strategies: string[];
  seeds: number[];
  /** Case ids: `case-0001` … unless given. */
  ids?: string[];
  /** Write run.json and timing.json beside each trajectories.jsonl (as Concord's runner does). */
  sideFiles?: boolean;
}

const CODES = ["F32.1", "F20.0", "F41.1", "F10.2", "F31.4", "F43.1"];

/** mulberry32: a small seeded generator. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface GoldCaseSpec {
  id: string;
  sufficient: boolean;
  code?: string;
  tau?: number;
  T: number;
}

export function goldCases(spec: Pick<EvalRunsSpec, "cases" | "ids">): GoldCaseSpec[] {
  const r = rng(7);
  return Array.from({ length: spec.cases }, (_, i) => {
    const T = 3 + Math.floor(r() * 3);
    const sufficient = r() < 0.7;
    const id = spec.ids?.[i] ?? `case-${String(i + 1).padStart(4, "0")}`;
    return sufficient
      ? { id, sufficient, code: CODES[Math.floor(r() * CODES.length)]!, tau: 1 + Math.floor(r() * T), T }
      : { id, sufficient, T };
  });
}

/** One trajectory: clarify a few steps, then diagnose (right or wrong code) or abstain; now and then an empty output. */
function trajectorySteps(g: GoldCaseSpec, strategy: string, r: () => number): StepSpec[] {
  const sequential = strategy.startsWith("sequential");
  const act = (): StepSpec => {
    const x = r();
    if (x < 0.03) return { action: "", codes: [] };
    if (x < 0.6) return { action: "Diagnose", codes: [r() < 0.7 && g.code ? g.code : CODES[Math.floor(r() * 6)]!] };
    if (x < 0.8) return { action: "Abstain", codes: [] };
    return { action: "Clarify", codes: [] };
  };
  if (!sequential) {
    const a = act();
    return [a.action === "Clarify" ? { action: "Abstain" as Act } : a];
  }
  const steps: StepSpec[] = [];
  for (let t = 1; t <= g.T; t++) {
    const a = t < 2 && r() < 0.5 ? { action: "Clarify" as Act } : act();
    const last = t === g.T;
    const step = a.action === "Clarify" && last ? { action: "Abstain" as Act } : a;
    steps.push({ ...step, model: step.action === "" ? "" : `The model's answer at step ${t} for ${g.id}.` });
    if (step.action === "Diagnose" || step.action === "Abstain") break;
  }
  return steps;
}

/** Writes `dir/data_gt.json` and `dir/runs/<model>_<strategy>_judge-j_seed-<seed>_20260101_000000/…`; returns the paths. */
export function writeEvalRuns(dir: string, spec: EvalRunsSpec): { goldPath: string; runsDir: string } {
  const cases = goldCases(spec);
  mkdirSync(dir, { recursive: true });
  const goldPath = join(dir, "data_gt.json");
  writeFileSync(
    goldPath,
    JSON.stringify(
      cases.map((c) => gold(c)),
      null,
      2,
    ),
  );
  const runsDir = join(dir, "runs");
  let n = 0;
  for (const model of spec.models)
    for (const strategy of spec.strategies)
      for (const seed of spec.seeds) {
        const r = rng(1000 + n++);
        const folder = join(runsDir, `${model}_${strategy}_judge-j_seed-${seed}_20260101_000000`);
        mkdirSync(folder, { recursive: true });
        const lines = cases.map(
          (g) =>
            JSON.stringify(record(g.id, trajectorySteps(g, strategy, r), { model, strategy, seed, T: g.T })) + "\n",
        );
        writeFileSync(join(folder, "trajectories.jsonl"), lines.join(""));
        if (spec.sideFiles !== false) {
          writeFileSync(
            join(folder, "run.json"),
            JSON.stringify({
              format: "concord-run/1",
              status: "complete",
              judge: { name: "j", key: "j", base_url: "http://stub" },
              sessions: [{ calls: cases.length * 2, retries: seed % 3 }],
            }),
          );
          writeFileSync(
            join(folder, "timing.json"),
            JSON.stringify({ total_time_seconds: 12.5 + seed / 100, num_samples: cases.length }),
          );
        }
      }
  return { goldPath, runsDir };
}
