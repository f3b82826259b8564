/**
 * The bootstrap intervals of mc-report depend only on the answers, not on the order of responses.jsonl (written as
 * answers arrive, so its order changes from run to run under concurrency): each condition's answers are resampled
 * in item-id order (docs/mc-evaluation.md, "Demographic drift"). The records are the fixture's MENTAT items and
 * answers (test/fixtures/mc-evaluation/reference_mentat.py), read in the file's order and in shuffled orders.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ageBands, demographicDrift } from "../../app/mc-evaluation/domain/drift";
import { parseItems } from "../../app/mc-evaluation/domain/items";
import { responseRecord, type ResponseRecord } from "../../app/mc-evaluation/domain/records";
import { mentatRows, mentatScores } from "../../app/mc-evaluation/domain/scores";
import { PyRandom } from "../../app/python-compat/random";

const dir = "test/fixtures/mc-evaluation";
const read = (name: string) => readFileSync(`${dir}/${name}`, "utf8");

function records(): ResponseRecord[] {
  const parsed = parseItems(read("mentat-items.jsonl"), { csv: false });
  const raw = new Map(
    read("mentat-answers.jsonl")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { id: string; raw: string })
      .map((a) => [a.id, a.raw]),
  );
  return parsed.items.map((item) => responseRecord(item, [], raw.get(item.id)!, 1, 0));
}

function shuffled<T>(xs: readonly T[], seed: number): T[] {
  const out = [...xs];
  const rng = new PyRandom(seed);
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.randbelow(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe("mc-report's intervals do not depend on the order of responses.jsonl", () => {
  const options = { reps: 1000, seed: 0, alpha: 0.05 };
  const inOrder = records();
  const drift = demographicDrift(mentatRows(inOrder), options);
  const bands = ageBands(mentatRows(inOrder), options);
  const scores = mentatScores(inOrder);

  for (const seed of [1, 2, 3]) {
    it(`gives identical intervals, tests and scores with the responses shuffled (seed ${seed})`, () => {
      // The lines of responses.jsonl in another order …
      const lines = shuffled(inOrder, seed);
      expect(lines.map((r) => r.item_id)).not.toEqual(inOrder.map((r) => r.item_id));
      expect(demographicDrift(mentatRows(lines), options)).toEqual(drift);
      expect(ageBands(mentatRows(lines), options)).toEqual(bands);
      expect(mentatScores(lines)).toEqual(scores);
      // … and the scored rows themselves in another order: the drift statistics sort them again.
      const rows = shuffled(mentatRows(inOrder), seed);
      expect(demographicDrift(rows, options)).toEqual(drift);
      expect(ageBands(rows, options)).toEqual(bands);
    });
  }

  it("has intervals to compare (every condition of the fixture has one)", () => {
    const intervals = drift.flatMap((d) => d.conditions.map((c) => c.ci95));
    expect(intervals.length).toBe(14);
    for (const ci of intervals) expect(ci).not.toBeNull();
  });
});
