/**
 * Cohen's κ between the two psychiatrists, not between the adjudicator's random A/B slots (docs/statistics.md,
 * "Study report: which annotator is which"), on temporary databases annotated through the real services and
 * reported through `stats --json`.
 *
 * Expected values: test/fixtures/study-report/paper_table.py computes κ over rater identity, Gwet's AC1 and Fleiss'
 * κ by hand with numpy from the Safe-Psych paper's table (854 / 35 / 66 / 93 over 1,048 cases) → paper-table.json;
 * annotator_order.py replays the seeded A/B draw with Python's random → annotator-order.json.
 */
import { readFileSync } from "node:fs";
import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { caseOutcomes, studies } from "../../db/schema";
import { runCli } from "../../app/cli/index";
import type { CliIO } from "../../app/cli/command";
import { annotatorOrder } from "../../app/adjudication/domain/annotator-order";
import type { Db } from "../../app/platform/db.server";
import { autoAssign } from "../../app/annotation/assignments.server";
import { EMPTY_VALUES, submitAnnotation, type AnnotationValues } from "../../app/annotation/annotations.server";
import { importCases, listStudyCases, requireStudyByName } from "../../app/annotation/studies.server";
import { freshDb, makeUser } from "../support/db";

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../fixtures/study-report/${name}`, import.meta.url), "utf8"));
const paper = fixture("paper-table.json");

let db: Db;
let cleanup: () => void;
beforeEach(() => {
  ({ db, cleanup } = freshDb());
});
afterEach(() => cleanup());

const SUFF: AnnotationValues = { ...EMPTY_VALUES, sufficiency: "sufficient", icd10: "F32.1", earliestSection: 2 };
const INSUFF: AnnotationValues = { ...EMPTY_VALUES, sufficiency: "insufficient", missingInfo: ["imaging"] };

function notes(n: number): Uint8Array {
  const lines = Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      id: `case-${String(i + 1).padStart(4, "0")}`,
      presenting_symptoms: "Low mood.",
      psychiatric_history: "None.",
      psychiatric_exam: "Flat affect.",
      psychological_exam: "",
      secondary_diagnoses: "",
    }),
  );
  return new TextEncoder().encode(lines.join("\n") + "\n");
}

/** A study whose every case is annotated by two of `annotators`; `labels(i)` gives case i's two labels by name. */
async function study(
  name: string,
  n: number,
  annotators: string[],
  labels: (i: number, pair: [string, string]) => [AnnotationValues, AnnotationValues],
) {
  const users = new Map<string, string>();
  for (const u of annotators) users.set(u, (await makeUser(db, u, ["annotator"])).id);
  expect(importCases(db, { studyName: name, bytes: notes(n), filename: "n.jsonl", actorId: null }).written).toBe(true);
  const s = requireStudyByName(db, name);
  autoAssign(db, { studyId: s.id, annotatorIds: [...users.values()], seed: 5, actorId: null });
  const byId = new Map([...users].map(([u, id]) => [id, u]));
  const cases = listStudyCases(db, s.id);
  const assigned = db.$client
    .prepare(
      "SELECT case_id AS caseId, annotator_id AS annotatorId FROM assignments WHERE case_id IN (SELECT id FROM cases WHERE study_id = ?) ORDER BY case_id, annotator_id",
    )
    .all(s.id) as { caseId: number; annotatorId: string }[];
  cases.forEach((c, i) => {
    const pair = assigned
      .filter((a) => a.caseId === c.id)
      .map((a) => byId.get(a.annotatorId)!)
      .sort() as [string, string];
    const values = labels(i, pair);
    // The second-named annotator submits first on odd cases, so submission order says nothing about identity.
    const order = i % 2 ? [1, 0] : [0, 1];
    for (const k of order) {
      const r = submitAnnotation(db, {
        userId: users.get(pair[k])!,
        caseId: c.id,
        values: values[k],
        version: 0,
        now: 1,
      });
      expect(r.ok).toBe(true);
    }
  });
  return s;
}

async function stats(name: string) {
  let out = "";
  let err = "";
  const io: CliIO = { out: (t) => (out += t), err: (t) => (err += t), readStdin: async () => "", isTTY: false };
  const code = await runCli(["stats", "--study", name, "--json"], io);
  expect({ code, err }).toEqual({ code: 0, err: "" });
  return JSON.parse(out);
}

/** The paper's table: case i's labels for (first psychiatrist, second psychiatrist). */
function paperLabels(i: number): [AnnotationValues, AnnotationValues] {
  if (i < 854) return [SUFF, SUFF];
  if (i < 854 + 35) return [SUFF, INSUFF];
  if (i < 854 + 35 + 66) return [INSUFF, SUFF];
  return [INSUFF, INSUFF];
}

describe("stats over rater identity", () => {
  it("gives the Safe-Psych paper's κ 0.593, AC1 0.874 and 90.4% for its 854 / 35 / 66 / 93 table", async () => {
    await study("Paper", 1048, ["psychiatrist1", "psychiatrist2"], (i) => paperLabels(i));
    const report = await stats("Paper");
    const s = report.sufficiency;
    expect(s.n).toBe(paper.n);
    expect(s.matrix).toEqual(paper.matrix);
    expect(s.cohen_kappa).toBeCloseTo(paper.cohen_kappa, 12);
    expect(s.gwet_ac1.value).toBeCloseTo(paper.gwet_ac1, 12);
    expect(s.percent_agreement).toBeCloseTo(paper.percent_agreement, 12);
    expect([s.cohen_kappa.toFixed(3), s.gwet_ac1.value.toFixed(3), (100 * s.percent_agreement).toFixed(1)]).toEqual([
      "0.593",
      "0.874",
      "90.4",
    ]);
    expect(report.raters).toMatchObject({
      rule: "rater_identity",
      annotators: ["psychiatrist1", "psychiatrist2"],
      pairs: [{ annotators: ["psychiatrist1", "psychiatrist2"], n: 1048 }],
    });
    expect(report.raters.pairs[0].sufficiency.cohen_kappa).toBeCloseTo(paper.cohen_kappa, 12);
    // The order-free pooled figure under its own name: Scott's π, which is what a random A/B order tends to.
    expect(report.raters.order_free.sufficiency.fleiss_kappa).toBeCloseTo(paper.fleiss_kappa, 12);
    expect(report.raters.order_free.sufficiency.gwet_ac1).toBeCloseTo(paper.gwet_ac1, 12);
  }, 60_000);

  it("reports a study of three annotators per pair, with pooled order-free coefficients and no pooled Cohen's κ", async () => {
    // lenient calls everything sufficient; strict calls every third case insufficient; middle agrees with strict.
    await study(
      "Three",
      60,
      ["lenient", "middle", "strict"],
      (i, pair) =>
        pair.map((u) => (u === "lenient" || i % 3 !== 0 ? SUFF : INSUFF)) as [AnnotationValues, AnnotationValues],
    );
    const report = await stats("Three");
    expect(report.raters.rule).toBe("pair_order");
    expect(report.sufficiency.cohen_kappa).toBeNull();
    expect(report.reasons["sufficiency.cohen_kappa"]).toMatch(/more than two annotators/);
    expect(report.raters.pairs.map((p: { annotators: string[] }) => p.annotators)).toEqual([
      ["lenient", "middle"],
      ["lenient", "strict"],
      ["middle", "strict"],
    ]);
    for (const p of report.raters.pairs) {
      // Rows are the first name: the lenient row never says insufficient, so its off-diagonal cell is [0][1].
      if (p.annotators[0] === "lenient") expect(p.sufficiency.matrix[1]).toEqual([0, 0]);
      else expect(p.sufficiency.percent_agreement).toBe(1);
    }
    expect(report.raters.order_free.sufficiency.n).toBe(60);
    expect(report.raters.order_free.sufficiency.fleiss_kappa).not.toBeNull();
  }, 60_000);

  it("draws the adjudicator's A/B order from the study's recorded seed, as Python replays it", async () => {
    for (const d of fixture("annotator-order.json") as { seed: number; case_id: string; swap: number }[]) {
      expect(annotatorOrder(d.seed, d.case_id, [1, 2])).toEqual(d.swap ? [2, 1] : [1, 2]);
    }
    const s = await study("Seeded", 12, ["a1", "a2"], () => [SUFF, INSUFF]);
    const seed = db.select().from(studies).where(eq(studies.id, s.id)).get()!.annotatorOrderSeed;
    expect(seed).toBeGreaterThan(0);
    for (const c of listStudyCases(db, s.id)) {
      const outcome = db.select().from(caseOutcomes).where(eq(caseOutcomes.caseId, c.id)).get()!;
      const ids = db.$client
        .prepare("SELECT id FROM annotations WHERE case_id = ? ORDER BY id")
        .all(c.id)
        .map((r) => (r as { id: number }).id) as [number, number];
      expect(outcome.annotatorOrder).toEqual(annotatorOrder(seed!, c.externalId, ids));
    }
  });
});
