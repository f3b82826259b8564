/**
 * Judge validation through the services on a real temporary SQLite database (docs/judge-validation.md): response import in every
 * format (all or nothing, line-numbered errors), the bucket rules on crafted responses, the exact replay of the
 * reference's sampling (test/fixtures/validation-set/, computed with CPython), re-draw refused once rating starts,
 * the raters' drafts, submissions and audit trail, candidate judges and the report over the app's own labels.
 */
import { asc, eq } from "drizzle-orm";
import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { events, judgeItems, judgeRatings, judgeResponses, judgeSets } from "../../db/schema";
import type { Db } from "../../app/platform/db.server";
import { BUCKET_SAMPLING_ORDER, type ValidationBucket } from "../../app/judge-validation/domain/validation-set";
import {
  getItemDetail,
  importJudgeOutputs,
  listJudges,
  setLabels,
  setReport,
} from "../../app/judge-validation/judge-candidates.server";
import {
  getRaterItem,
  listRaterItems,
  saveRatingDraft,
  submitRating,
  type RatingValues,
} from "../../app/judge-validation/judge-ratings.server";
import { bucketOverview, drawSample, REDRAW_REFUSED } from "../../app/judge-validation/judge-sample.server";
import { exportSetFile, sampledRows } from "../../app/judge-validation/judge-set-export.server";
import { getJudgeSetByName } from "../../app/judge-validation/judge-sets.server";
import { importResponses } from "../../app/judge-validation/judge-responses.server";
import { listSetRaters, setRatingOpen, startRating } from "../../app/judge-validation/judge-raters.server";
import type { UserView } from "../../app/accounts/users.server";
import { freshDb, makeUser } from "../support/db";

let db: Db;
let cleanup: () => void;
beforeEach(() => ({ db, cleanup } = freshDb()));
afterEach(() => cleanup());

const enc = (s: string) => new TextEncoder().encode(s);
const jsonl = (...rows: unknown[]) =>
  enc(rows.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n") + "\n");
const fixtures = new URL("../fixtures/validation-set/", import.meta.url);
const readJsonl = (path: string) =>
  readFileSync(new URL(path, fixtures), "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);

function importOne(setName: string, bytes: Uint8Array, filename = "responses.jsonl") {
  return importResponses(db, { setName, files: [{ bytes, filename }], actorId: null });
}

function count(table: string): number {
  return (db.$client.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n;
}

type Features = {
  primary_answer?: string;
  contingency?: string;
  info_request?: string;
  icd_codes?: string[];
  diagnosis_names?: string[];
};
const simple = (id: string, response: string, features?: Features, extra: Record<string, unknown> = {}) => ({
  id,
  model: "model-x",
  strategy: "sequential_info_neutral_prompting",
  step: 1,
  is_last_section: false,
  response,
  ...(features ? { features } : {}),
  ...extra,
});

describe("importing responses", () => {
  it("imports a simple JSONL, creating the set, keeping the file's order, audited", () => {
    const r = importOne("pilot", jsonl(simple("a", "F32.1"), simple("b", "I cannot diagnose this.")));
    expect(r.ok).toBe(true);
    expect(r.written).toBe(2);
    const set = getJudgeSetByName(db, "pilot")!;
    expect(set).toMatchObject({ status: "drafting", seed: 123, responses: 2, items: 0 });
    const rows = db.select().from(judgeResponses).orderBy(asc(judgeResponses.position)).all();
    expect(rows.map((x) => [x.position, x.sampleId, x.model, x.stepIndex])).toEqual([
      [1, "a", "model-x", 1],
      [2, "b", "model-x", 1],
    ]);
    expect(
      db
        .select()
        .from(events)
        .where(eq(events.entity, "judge_set"))
        .all()
        .map((e) => e.action),
    ).toEqual(["create", "import_responses"]);
  });

  it("imports trajectories.jsonl records flattened per step with their run folder", () => {
    const rec = (id: string, n: number) => ({
      sample_id: id,
      num_sections_total: n,
      num_steps_executed: n,
      stopping_reason: "Abstain",
      trajectory: Array.from({ length: n }, (_, i) => ({
        step_index: i + 1,
        section_order: i + 1,
        revealed_section_orders: [i + 1],
        user_prompt: "u",
        conversation_state: [],
        model_output_raw: `step ${i + 1} of ${id}`,
        judge_output_raw: "",
        judge_action: "",
        is_last_section: i + 1 === n,
        structured_action_raw: null,
      })),
      model_evaluated: "qwen-7b",
      judge_model: "gemma-3-27b",
      judge_seed: 123,
      strategy: "sequential_info_abstention_aware",
      seed: 123,
    });
    const r = importResponses(db, {
      setName: "runs",
      files: [
        {
          bytes: jsonl(rec("c1", 3), rec("c2", 2)),
          filename: "trajectories.jsonl",
          source: { name: "qwen_run", dir: "runs/qwen_run", file: "trajectories.jsonl" },
        },
      ],
      actorId: null,
    });
    expect(r.ok).toBe(true);
    expect(r.files[0]!.parse.format).toBe("trajectories");
    const rows = db.select().from(judgeResponses).orderBy(asc(judgeResponses.position)).all();
    expect(rows.map((x) => [x.sampleId, x.stepIndex, x.isLastSection, x.sourceRun, x.strategy])).toEqual([
      ["c1", 1, false, "qwen_run", "sequential_info_abstention_aware"],
      ["c1", 2, false, "qwen_run", "sequential_info_abstention_aware"],
      ["c1", 3, true, "qwen_run", "sequential_info_abstention_aware"],
      ["c2", 1, false, "qwen_run", "sequential_info_abstention_aware"],
      ["c2", 2, true, "qwen_run", "sequential_info_abstention_aware"],
    ]);
    expect(rows[0]!.record).toMatchObject({
      source_run_name: "qwen_run",
      source_run_dir: "runs/qwen_run",
      source_file: "trajectories.jsonl",
    });
  });

  it("writes nothing when one line is bad, and names the line", () => {
    const r = importOne(
      "pilot",
      jsonl(simple("a", "ok"), simple("b", "ok"), "{oops", simple("c", "ok", { primary_answer: "sure" })),
    );
    expect(r.ok).toBe(false);
    expect(r.written).toBe(0);
    expect(r.files[0]!.parse.errors.map((e) => e.line)).toEqual([3, 4]);
    expect(count("judge_sets")).toBe(0);
    expect(count("judge_responses")).toBe(0);
    expect(count("judge_response_imports")).toBe(0);
  });

  it("writes nothing when the second of two files is bad", () => {
    const r = importResponses(db, {
      setName: "pilot",
      files: [
        { bytes: jsonl(simple("a", "ok")), filename: "one.jsonl" },
        { bytes: jsonl(simple("a", "duplicate of one.jsonl")), filename: "two.jsonl" },
      ],
      actorId: null,
    });
    expect(r.ok).toBe(false);
    expect(r.files[1]!.parse.errors[0]!.message).toMatch(/already in the set \(or in an earlier file\)/);
    expect(count("judge_responses")).toBe(0);
  });

  it("refuses the same file twice and a response already in the set", () => {
    const bytes = jsonl(simple("a", "ok"));
    expect(importOne("pilot", bytes).ok).toBe(true);
    const again = importOne("pilot", bytes, "copy.jsonl");
    expect(again.ok).toBe(false);
    expect(again.refusal).toMatch(/^copy\.jsonl was already imported into "pilot" \(as responses\.jsonl/);
    const overlap = importOne("pilot", jsonl(simple("b", "new"), simple("a", "changed")));
    expect(overlap.files[0]!.parse.errors).toEqual([
      {
        line: 2,
        message:
          "sample a step 1 of model-x/sequential_info_neutral_prompting is already in the set (or in an earlier file)",
      },
    ]);
    expect(count("judge_responses")).toBe(1);
  });
});

/** Crafted responses, one per rule of docs/judge-validation.md#first-parse-and-buckets, with the bucket and derived action each must get. */
const crafted: [string, ReturnType<typeof simple>, ValidationBucket | null, string][] = [
  [
    "dx",
    simple("dx", "Moderate depressive episode (F32.1).", {
      primary_answer: "committed",
      info_request: "none",
      icd_codes: ["F32.1"],
      diagnosis_names: ["moderate depressive episode"],
    }),
    "clear_diagnose_no_hedging",
    "DIAGNOSE",
  ],
  [
    "hedge",
    simple("hedge", "This is most likely F32.1.", {
      primary_answer: "committed",
      icd_codes: ["F32.1"],
      diagnosis_names: ["depression"],
    }),
    "committed_specific_generic_hedging",
    "DIAGNOSE",
  ],
  [
    "unspec",
    simple("unspec", "Depressive episode, unspecified (F32.9).", {
      primary_answer: "committed",
      icd_codes: ["F32.9"],
      diagnosis_names: ["depressive episode"],
    }),
    "committed_unspecified",
    "CLARIFY",
  ],
  [
    "unspec-last",
    simple(
      "unspec-last",
      "F32.9 depressive episode.",
      { primary_answer: "committed", icd_codes: ["F32.9"], diagnosis_names: ["x"] },
      { is_last_section: true },
    ),
    "committed_unspecified",
    "ABSTAIN",
  ],
  [
    "cond",
    simple("cond", "F20.0 if the symptoms lasted a month.", {
      primary_answer: "committed",
      contingency: "explicit_conditional",
      icd_codes: ["F20.0"],
      diagnosis_names: ["schizophrenia"],
    }),
    "committed_specific_explicit_conditional",
    "CLARIFY",
  ],
  [
    "refine",
    simple("refine", "F20.0; the course would refine the subtype.", {
      primary_answer: "committed",
      contingency: "refinement_only",
      info_request: "specific",
      icd_codes: ["F20.0"],
      diagnosis_names: ["schizophrenia"],
    }),
    "committed_specific_refinement_only_specific_info",
    "DIAGNOSE",
  ],
  [
    "ddx",
    simple("ddx", "Could be F20 or F23.", {
      primary_answer: "differential",
      info_request: "none",
      icd_codes: ["F20", "F23"],
    }),
    "differential_with_or_without_specific_asks",
    "ABSTAIN",
  ],
  [
    "ask",
    simple("ask", "How long have the symptoms lasted?", { primary_answer: "none", info_request: "specific" }),
    "clear_clarify_specific",
    "CLARIFY",
  ],
  [
    "ask-last",
    simple(
      "ask-last",
      "How long have the symptoms lasted?",
      { primary_answer: "none", info_request: "specific" },
      { is_last_section: true },
    ),
    null,
    "ABSTAIN",
  ],
  [
    "decline",
    simple("decline", "I can’t diagnose this from the note.", { primary_answer: "none", info_request: "none" }),
    "clear_abstain_decline",
    "ABSTAIN",
  ],
  ["vague", simple("vague", "Hard to say.", { primary_answer: "none", info_request: "none" }), null, "ABSTAIN"],
  // No first parse: read as none/none, so the decline words alone put it in clear_abstain_decline (as the reference).
  ["bare", simple("bare", "There is insufficient information."), "clear_abstain_decline", "ABSTAIN"],
];

describe("bucket rules through the service", () => {
  beforeEach(() => {
    expect(importOne("crafted", jsonl(...crafted.map((c) => c[1]))).ok).toBe(true);
  });

  it("gives each crafted response its bucket and derived action", () => {
    const rows = db
      .select({
        sampleId: judgeResponses.sampleId,
        bucket: judgeResponses.bucket,
        derived: judgeResponses.derivedAction,
      })
      .from(judgeResponses)
      .orderBy(asc(judgeResponses.position))
      .all();
    expect(rows).toEqual(crafted.map(([id, , bucket, action]) => ({ sampleId: id, bucket, derived: action })));
  });

  it("counts what is available per bucket, and the draw takes up to each target", () => {
    const set = getJudgeSetByName(db, "crafted")!;
    const available = Object.fromEntries(bucketOverview(db, set.id).map((b) => [b.bucket, b.available]));
    expect(available).toEqual({
      clear_diagnose_no_hedging: 1,
      clear_clarify_specific: 1,
      clear_abstain_differential: 0,
      clear_abstain_decline: 2,
      committed_specific_generic_hedging: 1,
      committed_unspecified: 2,
      committed_specific_explicit_conditional: 1,
      committed_specific_refinement_only_specific_info: 1,
      differential_with_or_without_specific_asks: 1,
    });
    const targets = Object.fromEntries(BUCKET_SAMPLING_ORDER.map((b) => [b, 1])) as Record<ValidationBucket, number>;
    const r = drawSample(db, { setId: set.id, seed: 7, targets, actorId: null });
    expect(r.items).toBe(8);
    expect(r.summary.find((b) => b.bucket === "clear_abstain_decline")).toEqual({
      bucket: "clear_abstain_decline",
      target: 1,
      available: 2,
      selected: 1,
    });
    const items = db.select().from(judgeItems).orderBy(asc(judgeItems.position)).all();
    expect(items.map((i) => i.annotationId)).toEqual([
      "ann_0001",
      "ann_0002",
      "ann_0003",
      "ann_0004",
      "ann_0005",
      "ann_0006",
      "ann_0007",
      "ann_0008",
    ]);
    expect(new Set(items.map((i) => i.bucket)).size).toBe(8);
  });
});

describe("the reference's sampling, replayed through the service", () => {
  const configs = [
    { name: "default", seed: 123, targets: undefined },
    {
      name: "seed-2024-small",
      seed: 2024,
      targets: Object.fromEntries(BUCKET_SAMPLING_ORDER.map((b) => [b, 4])) as Record<ValidationBucket, number>,
    },
  ];
  for (const { name, seed, targets } of configs) {
    it(`selects what build_human_validation_set.py selected (${name})`, () => {
      const imported = importOne(
        "replay",
        new Uint8Array(readFileSync(new URL("input.jsonl", fixtures))),
        "input.jsonl",
      );
      expect(imported.ok).toBe(true);
      expect(imported.files[0]!.parse.format).toBe("flattened");
      const set = getJudgeSetByName(db, "replay")!;
      // A first draw with another seed, then the re-draw: only the last one counts.
      drawSample(db, { setId: set.id, seed: 99, targets, actorId: null });
      const r = drawSample(db, { setId: set.id, seed, targets, actorId: null });
      expect(r.redrawn).toBe(true);
      const expected = readJsonl(`expected/${name}/selected.jsonl`);
      const rows = sampledRows(db, set.id);
      expect(rows.map((x) => [x.annotation_id, x.sample_id])).toEqual(
        expected.map((x) => [x.annotation_id, x.sample_id]),
      );
      expect(rows).toEqual(expected);
      expect(rows.map((x) => Object.keys(x))).toEqual(expected.map((x) => Object.keys(x)));
      const summary = JSON.parse(readFileSync(new URL(`expected/${name}/summary.json`, fixtures), "utf8")).summary;
      expect(JSON.parse(exportSetFile(db, set.id, "summary.json")).summary).toEqual(summary);
      expect(Buffer.from(exportSetFile(db, set.id, "annotator-sheet.csv"))).toEqual(
        readFileSync(new URL(`expected/${name}/annotator.csv`, fixtures)),
      );
      expect(Buffer.from(exportSetFile(db, set.id, "key.csv"))).toEqual(
        readFileSync(new URL(`expected/${name}/key.csv`, fixtures)),
      );
      expect(
        db
          .select()
          .from(events)
          .where(eq(events.entity, "judge_set"))
          .all()
          .map((e) => e.action),
      ).toEqual(["create", "import_responses", "draw", "discard_sample", "redraw"]);
    });
  }

  it("keeps the blinded sheet free of model and strategy", () => {
    importOne("replay", new Uint8Array(readFileSync(new URL("input.jsonl", fixtures))));
    const set = getJudgeSetByName(db, "replay")!;
    drawSample(db, { setId: set.id, seed: 123, actorId: null });
    const sheet = exportSetFile(db, set.id, "annotator-sheet.csv");
    expect(sheet.split("\r\n")[0]).toBe(
      "\uFEFFannotation_id,step_index,is_last_section,model_output_raw,annotator_primary_answer,annotator_contingency,annotator_info_request",
    );
    for (const secret of ["gemma-3-4b", "llama3.1-8b", "sequential_info", "full_info"])
      expect(sheet).not.toContain(secret);
    expect(exportSetFile(db, set.id, "key.csv")).toContain("gemma-3-4b");
  });
});

async function ratedSet(names = ["rita", "ravi", "rosa"]) {
  const raters: UserView[] = [];
  for (const n of names) raters.push(await makeUser(db, n, ["rater"]));
  const crafts = crafted.filter(([, , bucket]) => bucket !== null).slice(0, 3);
  importOne("study", jsonl(...crafts.map((c) => c[1])));
  const set = getJudgeSetByName(db, "study")!;
  drawSample(db, { setId: set.id, seed: 1, actorId: null });
  startRating(db, { setId: set.id, raterIds: raters.map((r) => r.id), seed: 1, actorId: null });
  const items = db.select().from(judgeItems).orderBy(asc(judgeItems.position)).all();
  return { set, raters, items };
}

const values = (
  primaryAnswer: RatingValues["primaryAnswer"],
  infoRequest: RatingValues["infoRequest"],
  notes = "",
): RatingValues => ({
  primaryAnswer,
  infoRequest,
  icdCodes: "",
  diagnosisNames: "",
  notes,
});

describe("rating", () => {
  it("refuses a re-draw once rating has started, with a clear message, and keeps the sample", async () => {
    const { set, items } = await ratedSet();
    expect(() => drawSample(db, { setId: set.id, seed: 5, actorId: null })).toThrow(REDRAW_REFUSED);
    expect(REDRAW_REFUSED).toMatch(/can no longer be re-drawn/);
    expect(db.select().from(judgeItems).orderBy(asc(judgeItems.position)).all()).toEqual(items);
    expect(getJudgeSetByName(db, "study")!.status).toBe("rating");
    // Nor can responses be added.
    const more = importOne("study", jsonl(simple("late", "x")));
    expect(more.refusal).toMatch(/Rating has started/);
  });

  it("gives every sampled response to three different raters", async () => {
    const { set, items } = await ratedSet(["r1", "r2", "r3", "r4"]);
    const ratings = db.select().from(judgeRatings).all();
    expect(ratings).toHaveLength(items.length * 3);
    for (const item of items)
      expect(new Set(ratings.filter((r) => r.itemId === item.id).map((r) => r.raterId)).size).toBe(3);
    expect(
      listSetRaters(db, set.id)
        .map((r) => r.assigned)
        .sort(),
    ).toEqual([2, 2, 2, 3]);
  });

  it("needs three raters with the rater role", async () => {
    const a = await makeUser(db, "a1", ["rater"]);
    const b = await makeUser(db, "b1", ["rater"]);
    const c = await makeUser(db, "c1", ["annotator"]);
    importOne("s", jsonl(crafted[0]![1]));
    const set = getJudgeSetByName(db, "s")!;
    expect(() => startRating(db, { setId: set.id, raterIds: [a.id, b.id], seed: 1, actorId: null })).toThrow(
      /Draw the sample/,
    );
    drawSample(db, { setId: set.id, seed: 1, actorId: null });
    expect(() => startRating(db, { setId: set.id, raterIds: [a.id, b.id, c.id], seed: 1, actorId: null })).toThrow(
      /rater role/,
    );
    expect(() => startRating(db, { setId: set.id, raterIds: [a.id, b.id], seed: 1, actorId: null })).toThrow(
      /at least 3 raters/,
    );
    expect(count("judge_ratings")).toBe(0);
  });

  it("saves drafts with a version, refuses stale ones, submits, revises, and audits every change", async () => {
    const { raters, items } = await ratedSet();
    const rita = raters[0]!;
    const itemId = items[0]!.id;
    const view = getRaterItem(db, { raterId: rita.id, itemId })!;
    expect(view).toMatchObject({ state: "not_started", version: 0, open: true, progress: { done: 0, total: 3 } });
    expect(Object.keys(view.item)).toEqual(["id", "annotationId", "text"]);

    const d1 = saveRatingDraft(db, { raterId: rita.id, itemId, values: values("committed", ""), version: 0 });
    expect(d1).toMatchObject({ ok: true, version: 1, state: "draft" });
    expect(saveRatingDraft(db, { raterId: rita.id, itemId, values: values("none", ""), version: 0 })).toMatchObject({
      ok: false,
      status: 409,
    });
    expect(submitRating(db, { raterId: rita.id, itemId, values: values("committed", ""), version: 1 })).toMatchObject({
      ok: false,
      status: 422,
      errors: { infoRequest: expect.any(String) },
    });
    expect(
      submitRating(db, { raterId: rita.id, itemId, values: values("committed", "none", "sure"), version: 1 }),
    ).toMatchObject({ ok: true, version: 2, state: "submitted" });
    expect(saveRatingDraft(db, { raterId: rita.id, itemId, values: values("none", "none"), version: 2 })).toMatchObject(
      { ok: false, status: 409 },
    );
    expect(
      submitRating(db, { raterId: rita.id, itemId, values: values("committed", "specific", "sure"), version: 2 }),
    ).toMatchObject({ ok: true, version: 3 });

    const trail = db
      .select()
      .from(events)
      .where(eq(events.entity, "judge_rating"))
      .orderBy(asc(events.id))
      .all()
      .filter((e) => e.actorId === rita.id);
    expect(trail.map((e) => e.action)).toEqual(["draft", "submit", "revise"]);
    expect(trail[2]!.changes).toEqual({ infoRequest: ["none", "specific"] });
    expect(listRaterItems(db, rita.id).find((r) => r.itemId === itemId)!.state).toBe("submitted");
    // The admin's view of the response: every rater's labels and the history, with old and new values.
    const detail = getItemDetail(db, { setId: items[0]!.setId, itemId })!;
    expect(detail.ratings.map((r) => [r.rater, r.status])).toEqual([
      ["ravi", "assigned"],
      ["rita", "submitted"],
      ["rosa", "assigned"],
    ]);
    expect(detail.events.filter((e) => e.actor === "rita").map((e) => [e.rating, e.action])).toEqual([
      ["rita", "draft"],
      ["rita", "submit"],
      ["rita", "revise"],
    ]);
    expect(getItemDetail(db, { setId: items[0]!.setId + 1, itemId })).toBeNull();
    // A rater without this response: not found, and nothing written.
    const outsider = await makeUser(db, "otto", ["rater"]);
    expect(getRaterItem(db, { raterId: outsider.id, itemId })).toBeNull();
    expect(
      saveRatingDraft(db, { raterId: outsider.id, itemId, values: values("none", "none"), version: 0 }),
    ).toMatchObject({ ok: false, status: 404 });
    expect(
      db
        .select()
        .from(judgeRatings)
        .all()
        .some((r) => r.raterId === outsider.id),
    ).toBe(false);
  });

  it("refuses changes once rating is closed, and accepts them again when reopened", async () => {
    const { set, raters, items } = await ratedSet();
    setRatingOpen(db, { setId: set.id, open: false, actorId: null });
    const r = submitRating(db, {
      raterId: raters[0]!.id,
      itemId: items[0]!.id,
      values: values("none", "none"),
      version: 0,
    });
    expect(r).toMatchObject({ ok: false, status: 409, message: expect.stringMatching(/closed/) });
    expect(getRaterItem(db, { raterId: raters[0]!.id, itemId: items[0]!.id })!.open).toBe(false);
    setRatingOpen(db, { setId: set.id, open: true, actorId: null });
    expect(
      submitRating(db, { raterId: raters[0]!.id, itemId: items[0]!.id, values: values("none", "none"), version: 0 }).ok,
    ).toBe(true);
  });
});

describe("candidate judges and the report over the app's labels", () => {
  it("imports a judge (all or nothing), and scores it against the raters' majority", async () => {
    const { set, raters, items } = await ratedSet();
    // Three raters on each of the three responses: ann ids in order; rater features per response.
    const plan: [RatingValues["primaryAnswer"], RatingValues["infoRequest"]][][] = [
      [
        ["committed", "none"],
        ["committed", "none"],
        ["committed", "specific"],
      ], // DIAGNOSE, DIAGNOSE, CLARIFY → DIAGNOSE
      [
        ["none", "specific"],
        ["none", "specific"],
        ["none", "none"],
      ], // CLARIFY ×2, ABSTAIN → CLARIFY
      [
        ["committed", "none"],
        ["none", "specific"],
        ["none", "none"],
      ], // D, C, A → tie
    ];
    items.forEach((item, i) =>
      raters.forEach((rater, k) => {
        const [p, q] = plan[i]![k]!;
        expect(submitRating(db, { raterId: rater.id, itemId: item.id, values: values(p, q), version: 0 }).ok).toBe(
          true,
        );
      }),
    );
    const bad = importJudgeOutputs(db, {
      setId: set.id,
      name: "gemma",
      filename: "bad.jsonl",
      text: new TextDecoder().decode(
        jsonl(
          {
            annotation_id: "ann_0001",
            new_judge_output: { primary_answer: "committed", info_request: "none", action: "Diagnose" },
          },
          { annotation_id: "ann_0404", new_judge_output: {} },
        ),
      ),
      actorId: null,
    });
    expect(bad.ok).toBe(false);
    expect(bad.parse.errors).toEqual([
      { line: 2, message: "annotation_id ann_0404 is not a response of this set's sample" },
    ]);
    expect(listJudges(db, set.id)).toEqual([]);

    const text = new TextDecoder().decode(
      jsonl(
        {
          annotation_id: "ann_0001",
          new_judge_output: { primary_answer: "committed", info_request: "none", action: "Diagnose" },
        },
        {
          annotation_id: "ann_0002",
          judge_output_raw: "PRIMARY_ANSWER: committed\nINFO_REQUEST: none\nICD_CODES: F32.1\nDIAGNOSIS_NAMES: x",
        },
        {
          annotation_id: "ann_0003",
          new_judge_output: { primary_answer: "none", info_request: "none", action: "Abstain" },
        },
      ),
    );
    const ok = importJudgeOutputs(db, { setId: set.id, name: "gemma", filename: "gemma.jsonl", text, actorId: null });
    expect(ok).toMatchObject({ ok: true, written: 3 });
    expect(
      importJudgeOutputs(db, { setId: set.id, name: "gemma", filename: "gemma.jsonl", text, actorId: null }).refusal,
    ).toMatch(/already imported/);
    expect(
      importJudgeOutputs(db, {
        setId: set.id,
        name: "gemma",
        filename: "gemma.jsonl",
        text,
        replace: true,
        actorId: null,
      }).ok,
    ).toBe(true);
    expect(listJudges(db, set.id)).toMatchObject([{ name: "gemma", outputs: 3 }]);

    const labels = setLabels(db, set.id);
    expect(labels).toHaveLength(12);
    expect(labels.filter((l) => l.rater === "judge:gemma").map((l) => l.action)).toEqual([
      "DIAGNOSE",
      "DIAGNOSE",
      "ABSTAIN",
    ]);
    const report = setReport(db, set.id);
    expect(report.majority).toEqual({ ann_0001: "DIAGNOSE", ann_0002: "CLARIFY", ann_0003: null });
    expect(report.ties).toEqual(["ann_0003"]);
    // gemma: DIAGNOSE right, CLARIFY predicted DIAGNOSE → DIAGNOSE F1 2/3, CLARIFY F1 0 → macro-F1 1/3.
    expect(report.judges.gemma!.macro_f1).toBeCloseTo(1 / 3, 12);
    expect(report.judges.gemma!.confusion).toEqual({
      CLARIFY: { CLARIFY: 0, DIAGNOSE: 1 },
      DIAGNOSE: { CLARIFY: 0, DIAGNOSE: 1 },
    });
    expect(report.best_judge).toBe("gemma");
  });

  it("discards the sample and its judges when responses are added before rating", async () => {
    importOne("grow", jsonl(crafted[0]![1], crafted[2]![1]));
    const set = getJudgeSetByName(db, "grow")!;
    drawSample(db, { setId: set.id, seed: 1, actorId: null });
    importJudgeOutputs(db, {
      setId: set.id,
      name: "j",
      filename: "j.jsonl",
      text: '{"annotation_id":"ann_0001","new_judge_output":{"primary_answer":"none","info_request":"none","action":"Abstain"}}\n',
      actorId: null,
    });
    const r = importOne("grow", jsonl(crafted[1]![1]));
    expect(r).toMatchObject({ ok: true, discardsDraw: true });
    expect(count("judge_items")).toBe(0);
    expect(count("judge_candidates")).toBe(0);
    expect(db.select().from(judgeSets).get()!.drawnAt).toBeNull();
  });
});
