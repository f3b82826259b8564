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
  /**
   * Records of a real run's size: each step's prompt carries its section of the note (about 700 characters; the
   * whole note under full information), the answer a paragraph, and `conversation_state` the history up to the
   * reply, as the runner writes them (docs/formats.md, "trajectories.jsonl"). Off: short placeholder texts.
   */
  realistic?: boolean;
}

const WORDS = (
  "patient reports low mood poor sleep appetite reduced since spring work stress family history of depression " +
  "denies suicidal ideation alcohol use two units weekly no psychotic features anxious worry racing thoughts " +
  "concentration impaired energy low guilt hopelessness examination calm cooperative speech normal rate affect " +
  "constricted thought linear insight partial collateral from partner describes withdrawal irritability"
).split(" ");

/** A paragraph of about `chars` characters of clinical-sounding words, the same for the same (seed, chars). */
function paragraph(seed: number, chars: number): string {
  const r = rng(seed);
  const out: string[] = [];
  let n = 0;
  while (n < chars) {
    const w = WORDS[Math.floor(r() * WORDS.length)]!;
    out.push(w);
    n += w.length + 1;
  }
  return out.join(" ") + ".";
}

/** The fields of a step as a real run writes them: the prompt of the turn and the history including the reply. */
function realisticSteps(caseIndex: number, steps: StepSpec[], sequential: boolean, T: number): StepSpec[] {
  const section = (t: number) => `Section ${t}.\n${paragraph(caseIndex * 31 + t, 700)}`;
  const history: { role: string; content: string }[] = [
    { role: "system", content: "You are a psychiatrist assessing a patient from the case notes you are given." },
  ];
  return steps.map((spec, i) => {
    const prompt = sequential
      ? `${i === 0 ? "Here is the first part of the case." : "Additional information:"}\n\n${section(i + 1)}`
      : `Here is the case.\n\n${Array.from({ length: T }, (_, t) => section(t + 1)).join("\n\n")}`;
    const answer =
      spec.model === "" || spec.action === "" ? "" : `${spec.model ?? ""} ${paragraph(caseIndex * 7 + i, 350)}`;
    history.push({ role: "user", content: prompt }, { role: "assistant", content: answer });
    return {
      ...spec,
      model: answer,
      extra: { user_prompt: prompt, conversation_state: history.map((m) => ({ ...m })) },
    };
  });
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
        const lines = cases.map((g, i) => {
          const steps = trajectorySteps(g, strategy, r);
          const written = spec.realistic ? realisticSteps(i, steps, strategy.startsWith("sequential"), g.T) : steps;
          return JSON.stringify(record(g.id, written, { model, strategy, seed, T: g.T })) + "\n";
        });
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
