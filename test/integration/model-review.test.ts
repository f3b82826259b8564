/**
 * Clinician review of model steps (docs/evaluation.md, "Clinician review of model steps"): a send acts on the case
 * list's filter over every matching trajectory, not a page of it, and refuses with nothing written; a reviewer's
 * pages and saves reach only their own labels by opaque key (a number or another reviewer's key answers 404) and
 * carry no model, strategy, seed, run or review name and no other reviewer's label; saves are the engine's (drafts,
 * versions, audit); the admin sees the figures per failure and model, the agreement from app/stats, and reviews.csv
 * formula-safe; only admins reach the admin's side, only annotators and adjudicators the reviewer's.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Db } from "../../app/platform/db.server";
import { loader as listLoader } from "../../app/routes/model-review._index";
import { loader as itemLoader, action as itemAction } from "../../app/routes/model-review.$key";
import {
  loader as reviewsLoader,
  action as reviewsAction,
} from "../../app/routes/admin.evaluations.$evaluationId.reviews";
import { loader as evalLoader } from "../../app/routes/admin.evaluations.$evaluationId._index";
import { loader as fileLoader } from "../../app/routes/admin.evaluations.$evaluationId.files.$file";
import { sendReview } from "../../app/evaluation/model-review.server";
import { percentAgreement, gwetAc1 } from "../../app/stats/chance-corrected";
import { cohenKappa } from "../../app/stats/cohen";
import { buildRatingTable } from "../../app/stats/rating-table";
import { ServiceError } from "../../app/platform/service-error";
import { freshDb, makeUser } from "../support/db";
import { bodyOf, signedIn } from "../support/route-calls";
import { goldCases, writeEvalRuns } from "../support/eval-runs";
import { cli, tempDirs } from "../support/cli-run";

const tempDir = tempDirs("concord-modelreview-");

const MODELS = ["zeta-model-9b", "omega-model-3b"];
const STRATEGIES = [
  "sequential_info_neutral_prompting",
  "sequential_info_abstention_aware",
  "full_info_abstention_aware",
];
const KINDS = [
  "presenting_symptoms",
  "psychiatric_history",
  "psychiatric_exam",
  "psychological_exam",
  "secondary_diagnoses",
];

let db: Db;
let cleanup: () => void;
let evaluationId: number;
let bareId: number;

beforeEach(async () => {
  ({ db, cleanup } = freshDb());
  await makeUser(db, "admin", ["admin"]);
  await makeUser(db, "psy1", ["annotator"]);
  await makeUser(db, "psy2", ["adjudicator"]);
  await makeUser(db, "psy3", ["annotator"]);
  await makeUser(db, "rat", ["rater"]);
  const root = tempDir();
  const spec = { cases: 60, models: MODELS, strategies: STRATEGIES, seeds: [11, 12] };
  const { goldPath, runsDir } = writeEvalRuns(root, spec);
  const notes = goldCases(spec).map((g) =>
    JSON.stringify({
      id: g.id,
      sections: Object.fromEntries(KINDS.slice(0, g.T).map((k, i) => [k, `Section ${i + 1} of ${g.id}.`])),
    }),
  );
  writeFileSync(join(root, "cases.jsonl"), notes.join("\n") + "\n");
  expect((await cli(["import", "--study", "Pilot notes", join(root, "cases.jsonl")])).code).toBe(0);
  const studyId = db.$client.prepare("select id from studies where name = 'Pilot notes'").pluck().get() as number;
  const imported = await cli([
    "eval-import",
    ...["--evaluation", "Secret eval name", "--gold", goldPath, "--study", String(studyId), "--runs", runsDir],
  ]);
  expect(imported.code, imported.err).toBe(0);
  evaluationId = db.$client
    .prepare("select id from evaluations where name = 'Secret eval name'")
    .pluck()
    .get() as number;
  const bare = tempDir();
  const b = writeEvalRuns(bare, { ...spec, models: ["bare-model"], strategies: [STRATEGIES[0]!] });
  expect((await cli(["eval-import", "--evaluation", "No study", "--gold", b.goldPath, "--runs", b.runsDir])).code).toBe(
    0,
  );
  bareId = db.$client.prepare("select id from evaluations where name = 'No study'").pluck().get() as number;
});
afterEach(() => cleanup());

const BASE = "http://concord.test";

async function get<T>(
  username: string,
  loader: (a: LoaderFunctionArgs) => Promise<T>,
  path: string,
  params: Record<string, string> = {},
): Promise<T> {
  const who = await signedIn(db, username);
  const request = new Request(`${BASE}${path}`, { headers: who.post(path, {}).headers });
  return loader({ request, params, context: {} });
}

async function post(
  username: string,
  action: (a: ActionFunctionArgs) => Promise<unknown>,
  path: string,
  fields: Record<string, string> | URLSearchParams,
  params: Record<string, string> = {},
) {
  const who = await signedIn(db, username);
  if (fields instanceof URLSearchParams) {
    // Repeated fields (the reviewers' checkboxes) as the browser sends them.
    const body = new URLSearchParams(fields);
    body.set("csrf", who.user.csrf);
    const request = new Request(BASE + path, { method: "POST", headers: who.post(path, {}).headers, body });
    return action({ request, params, context: {} });
  }
  const request = who.post(path, fields);
  return action({ request, params, context: {} });
}

async function status(p: Promise<unknown>): Promise<number> {
  try {
    const out = await p;
    return out instanceof Response ? out.status : 200;
  } catch (e) {
    if (e instanceof Response) return e.status;
    throw e;
  }
}

const PD = { failure: "premature_diagnosis", model: "", strategy: "", q: "" };

/** The trajectories a filter must pick, counted straight from the table. */
function expected(where: string): number {
  return db.$client
    .prepare(`select count(*) from evaluation_trajectories where evaluation_id = ? and excluded is null and ${where}`)
    .pluck()
    .get(evaluationId) as number;
}

function labelsOf(username: string) {
  return db.$client
    .prepare(
      `select l.id, l.item_key as key, l.item_id as itemId from evaluation_review_labels l
       join users u on u.id = l.reviewer_id where u.username = ? order by l.position`,
    )
    .all(username) as { id: number; key: string; itemId: number }[];
}

function draftPost(values: Record<string, unknown>, version: number, intent: "draft" | "submit") {
  return { intent, version: String(version), values: JSON.stringify(values) };
}

describe("sending a review", () => {
  it("acts on the filter: every matching trajectory the metrics count, each at its first diagnosis", async () => {
    const n = expected("premature_diagnosis = 1");
    expect(n).toBeGreaterThan(50); // more than one page of the case list
    const fields = new URLSearchParams({
      name: "Premature diagnoses",
      perItem: "2",
      limit: "",
      c_failure: "premature_diagnosis",
      c_model: "",
      c_strategy: "",
      c_q: "",
    });
    fields.append("reviewers", "psy1");
    fields.append("reviewers", "psy2");
    const out = (await post("admin", reviewsAction, `/admin/evaluations/${evaluationId}/reviews`, fields, {
      evaluationId: String(evaluationId),
    })) as { sent: { items: number; matched: number } };
    expect(out.sent).toMatchObject({ items: n, matched: n });
    // The form's preview counts what the send picks.
    const page = await get(
      "admin",
      reviewsLoader,
      `/admin/evaluations/${evaluationId}/reviews?c_failure=premature_diagnosis`,
      {
        evaluationId: String(evaluationId),
      },
    );
    expect(page.matched).toBe(n);
    const wrongStep = db.$client
      .prepare(
        `select count(*) from evaluation_review_items i join evaluation_trajectories t on t.id = i.trajectory_id
         where i.step_index <> t.first_diagnosis or t.premature_diagnosis <> 1`,
      )
      .pluck()
      .get();
    expect(wrongStep).toBe(0);
    // Two distinct reviewers per item, each with their own key.
    expect(labelsOf("psy1").length).toBe(n);
    expect(labelsOf("psy2").length).toBe(n);
    expect(new Set([...labelsOf("psy1"), ...labelsOf("psy2")].map((l) => l.key)).size).toBe(2 * n);
    const event = db.$client.prepare("select action from events where entity = 'evaluation_review'").pluck().all();
    expect(event).toEqual(["send"]);
  });

  it("draws a random sample when given a number, and takes the model and strategy filters", () => {
    const f = { failure: "wrong_code", model: MODELS[0]!, strategy: STRATEGIES[1]!, q: "" };
    const all = expected(`wrong_code = 1 and model = '${MODELS[0]}' and strategy = '${STRATEGIES[1]}'`);
    const sent = sendReview(db, {
      evaluationId,
      name: "Sample",
      filter: f,
      reviewers: ["psy1"],
      perItem: 1,
      limit: 5,
      actorId: null,
      seed: 3,
    });
    expect(sent).toMatchObject({ items: Math.min(5, all), matched: all });
  });

  it("refuses, writing nothing, what it cannot send blinded or to whom it cannot", () => {
    const base = { evaluationId, name: "R", filter: PD, reviewers: ["psy1"], perItem: 1 as const, actorId: null };
    const refusal = (input: Parameters<typeof sendReview>[1]) => {
      try {
        sendReview(db, input);
      } catch (e) {
        if (e instanceof ServiceError) return e.message;
        throw e;
      }
      return "sent";
    };
    expect(refusal({ ...base, evaluationId: bareId })).toMatch(/names no study/);
    expect(refusal({ ...base, reviewers: ["rat"] })).toMatch(/neither the annotator nor the adjudicator role/);
    expect(refusal({ ...base, reviewers: ["nobody"] })).toMatch(/No user named "nobody"/);
    expect(refusal({ ...base, perItem: 2 })).toMatch(/at least two reviewers/);
    expect(refusal({ ...base, filter: { ...PD, q: "zzz" } })).toMatch(/picks no model step/);
    expect(refusal({ ...base, maxItems: 10 })).toMatch(/model steps; send at most 10 \(a random sample/);
    expect(db.$client.prepare("select count(*) from evaluation_reviews").pluck().get()).toBe(0);
    expect(db.$client.prepare("select count(*) from evaluation_review_labels").pluck().get()).toBe(0);
    expect(refusal({ ...base, name: "Sampled", maxItems: 10, limit: 10 })).toBe("sent");
    expect(refusal(base)).toBe("sent");
    expect(refusal(base)).toMatch(/already has a review named "R"/);
  });

  it("answers admins only", async () => {
    const path = `/admin/evaluations/${evaluationId}/reviews`;
    const params = { evaluationId: String(evaluationId) };
    expect(await status(get("psy1", reviewsLoader, path, params))).toBe(403);
    expect(await status(post("psy1", reviewsAction, path, { name: "x", perItem: "1", limit: "" }, params))).toBe(403);
    expect(
      await status(
        get("psy1", fileLoader, `/admin/evaluations/${evaluationId}/files/reviews.csv`, {
          ...params,
          file: "reviews.csv",
        }),
      ),
    ).toBe(403);
  });
});

describe("the reviewer's side", () => {
  beforeEach(() => {
    sendReview(db, {
      evaluationId,
      name: "Blind review of zeta",
      filter: { failure: "premature_diagnosis", model: MODELS[0]!, strategy: "", q: "" },
      reviewers: ["psy1", "psy2"],
      perItem: 2,
      actorId: null,
      seed: 5,
    });
  });

  const FORBIDDEN = [
    ...MODELS,
    ...STRATEGIES,
    "sequential",
    "full_info",
    "seed",
    "Secret eval name",
    "Blind review",
    "runs/",
  ];

  it("shows the step blinded: no model, strategy, seed, run or review name; the note only up to the step", async () => {
    const list = await get("psy1", listLoader, "/model-review");
    const mine = labelsOf("psy1");
    expect(list.rows.map((r) => r.key)).toEqual(mine.map((l) => l.key));
    for (const l of mine.slice(0, 10)) {
      const view = await get("psy1", itemLoader, `/model-review/${l.key}`, { key: l.key });
      const text = JSON.stringify(view);
      for (const word of FORBIDDEN) expect(text, word).not.toContain(word);
      expect(text).not.toMatch(/"(id|itemId|trajectoryId|runId|reviewId|model|strategy)"/);
      const t = db.$client
        .prepare(
          `select t.strategy, t.sample_id as sampleId, i.step_index as step from evaluation_review_items i
           join evaluation_trajectories t on t.id = i.trajectory_id where i.id = ?`,
        )
        .get(l.itemId) as { strategy: string; sampleId: string; step: number };
      const revealed = t.strategy.startsWith("full_info") ? view.item.sectionsTotal : t.step;
      expect(view.item.sections.map((s) => s.content)).toEqual(
        Array.from({ length: revealed }, (_, i) => `Section ${i + 1} of ${t.sampleId}.`),
      );
      expect(view.item.action).toBe("DIAGNOSE");
      expect(view.item.expertAction).toMatch(/^(Clarify|Diagnose|Abstain)$/);
    }
    const listText = JSON.stringify(list);
    for (const word of FORBIDDEN) expect(listText, word).not.toContain(word);
  });

  it("answers 404 for a number and for another reviewer's key, in the loader and the action", async () => {
    const [mine] = labelsOf("psy1");
    const [theirs] = labelsOf("psy2");
    for (const key of [String(mine!.id), String(mine!.itemId), theirs!.key, "r0000000000000000"]) {
      expect(await status(get("psy1", itemLoader, `/model-review/${key}`, { key })), key).toBe(404);
      expect(
        await status(
          post("psy1", itemAction, `/model-review/${key}`, draftPost({ defensible: "yes", reason: "x" }, 0, "draft"), {
            key,
          }),
        ),
        key,
      ).toBe(404);
    }
    // A rater (neither annotator nor adjudicator) is refused before any lookup.
    expect(await status(get("rat", itemLoader, `/model-review/${mine!.key}`, { key: mine!.key }))).toBe(403);
    expect(await status(get("admin", listLoader, "/model-review"))).toBe(403);
    // A reviewer named in no review sees an empty list.
    expect((await get("psy3", listLoader, "/model-review")).rows).toEqual([]);
  });

  it("never shows a reviewer another reviewer's label, and saves through the engine with audit", async () => {
    const b = labelsOf("psy2")[0]!;
    const a = labelsOf("psy1").find((l) => l.itemId === b.itemId)!;
    const path = `/model-review/${b.key}`;
    const draft = await bodyOf(
      await post("psy2", itemAction, path, draftPost({ defensible: "no", reason: "SECRET-B-REASON" }, 0, "draft"), {
        key: b.key,
      }),
    );
    expect(draft.status).toBe(200);
    const submitted = await bodyOf(
      await post("psy2", itemAction, path, draftPost({ defensible: "no", reason: "SECRET-B-REASON" }, 1, "submit"), {
        key: b.key,
      }),
    );
    expect(submitted.body).toMatchObject({ ok: true, state: "submitted", version: 2 });
    // A stale version is a conflict; an incomplete submission is refused at its field.
    const stale = await bodyOf(
      await post("psy2", itemAction, path, draftPost({ defensible: "yes", reason: "r" }, 1, "submit"), { key: b.key }),
    );
    expect(stale.status).toBe(409);
    const aView = await get("psy1", itemLoader, `/model-review/${a.key}`, { key: a.key });
    expect(JSON.stringify(aView)).not.toContain("SECRET-B-REASON");
    expect(aView.values).toEqual({ defensible: null, reason: "" });
    expect(aView.state).toBe("not_started");
    const incomplete = await bodyOf(
      await post(
        "psy1",
        itemAction,
        `/model-review/${a.key}`,
        draftPost({ defensible: "yes", reason: " " }, 0, "submit"),
        {
          key: a.key,
        },
      ),
    );
    expect(incomplete.status).toBe(422);
    expect((incomplete.body as { errors: Record<string, string> }).errors.reason).toBe("Say why.");
    const events = db.$client
      .prepare("select action, changes from events where entity = 'evaluation_review_label' order by id")
      .all() as { action: string; changes: string }[];
    expect(events.map((e) => e.action)).toEqual(["draft", "submit"]);
    expect(events.map((e) => e.changes).join("")).not.toContain("SECRET-B-REASON");
  });
});

describe("the admin's figures", () => {
  it("counts the defensible steps per failure and model, the agreement by app/stats, and writes reviews.csv", async () => {
    sendReview(db, {
      evaluationId,
      name: "=1+2 premature",
      filter: PD,
      reviewers: ["psy1", "psy2"],
      perItem: 2,
      limit: 30,
      actorId: null,
      seed: 9,
    });
    const answers: { item: string; rater: string; label: string }[] = [];
    for (const who of ["psy1", "psy2"]) {
      for (const l of labelsOf(who)) {
        // psy1 says yes to even items, psy2 to items divisible by 3: some agreement, some not.
        const yes = who === "psy1" ? l.itemId % 2 === 0 : l.itemId % 3 === 0;
        const out = await bodyOf(
          await post(
            who,
            itemAction,
            `/model-review/${l.key}`,
            draftPost({ defensible: yes ? "yes" : "no", reason: "because" }, 0, "submit"),
            { key: l.key },
          ),
        );
        expect(out.status).toBe(200);
        answers.push({ item: String(l.itemId), rater: who, label: yes ? "yes" : "no" });
      }
    }
    const params = { evaluationId: String(evaluationId) };
    const page = await get("admin", reviewsLoader, `/admin/evaluations/${evaluationId}/reviews`, params);
    const [review] = page.reviews;
    const table = buildRatingTable(answers, { categories: ["yes", "no"] });
    expect(review!.agreement.items).toBe(30);
    expect(review!.agreement.percentAgreement).toBeCloseTo(percentAgreement(table).value!, 12);
    expect(review!.agreement.ac1).toBeCloseTo(gwetAc1(table).value!, 12);
    expect(review!.agreement.kappa).toBeCloseTo(cohenKappa(table).value!, 12);
    const byItem = new Map<string, string[]>();
    for (const a of answers) byItem.set(a.item, [...(byItem.get(a.item) ?? []), a.label]);
    const all = review!.defensible.find((r) => r.failure === "premature_diagnosis" && r.model === "")!;
    expect(all.reviewed).toBe(30);
    expect(all.defensible).toBe([...byItem.values()].filter((v) => v.every((x) => x === "yes")).length);
    expect(all.split).toBe([...byItem.values()].filter((v) => new Set(v).size === 2).length);
    const perModel = review!.defensible.filter((r) => r.failure === "premature_diagnosis" && r.model !== "");
    expect(perModel.map((r) => r.model).sort()).toEqual([...MODELS].sort());
    expect(perModel.reduce((s, r) => s + r.reviewed, 0)).toBe(30);
    // The evaluation page links the figures back to its metrics.
    const evalPage = await get("admin", evalLoader, `/admin/evaluations/${evaluationId}`, params);
    expect(evalPage.reviews[0]!.defensible).toEqual(review!.defensible);
    // reviews.csv: the same figures, formula-safe.
    const csv = await (
      (await get("admin", fileLoader, `/admin/evaluations/${evaluationId}/files/reviews.csv`, {
        ...params,
        file: "reviews.csv",
      })) as Response
    ).text();
    const lines = csv.trim().split("\r\n");
    expect(lines[0]).toBe(
      "review,failure,model,reviewed,defensible,split,share_defensible,agreement_items,percent_agreement,gwet_ac1,cohen_kappa",
    );
    expect(lines).toContain(
      `'=1+2 premature,premature_diagnosis,all,30,${all.defensible},${all.split},${(all.defensible / 30).toFixed(4)},,,,`,
    );
    expect(lines.some((l) => l.startsWith("=") || l.startsWith('"='))).toBe(false);
  });
});
