/**
 * Clinician review of model steps (docs/evaluation.md, "Clinician review of model steps"): an admin sends the steps an
 * evaluation's case-list filter picks to a blinded queue, the psychiatrists named review them through the work-item
 * engine, and the admin reads how many were judged defensible, per failure and model, and the reviewers' agreement.
 *
 * Blinding (docs/security.md, "Clinician review of model steps"): a reviewer reaches a step only by the opaque key of
 * their own label (`findOwnLabel`: the key and the reviewer's id in the query), and the reviewer's view
 * (`getReviewerItem`) is built from an explicit list of fields — the revealed sections, the answer, the action and
 * codes, the gold label, the expert action label — never the model, strategy, seed, run, trajectory, evaluation or
 * review, nor another reviewer's label. The admin's functions are called only behind the admin guard.
 */
import { randomBytes, randomInt } from "node:crypto";
import { and, asc, count, eq, inArray, isNull, sql } from "drizzle-orm";
import {
  evaluationReviewItems,
  evaluationReviewLabels,
  evaluationReviews,
  evaluations,
  evaluationSteps,
  evaluationTrajectories,
  userRoles,
  users,
} from "../../db/schema";
import { visibleCases, visibleEvaluationRuns } from "../../db/schema-visible";
import { recordEvent } from "../audit/audit.server";
import { getCaseSections } from "../annotation/public.server";
import { SECTION_TITLES } from "../annotation/public";
import { formatCsv } from "../formats/csv-text";
import type { Db, DbOrTx, Tx } from "../platform/db.server";
import { ServiceError } from "../platform/service-error";
import {
  nextOpenItem,
  previousItem,
  progressOf,
  type SaveResult,
  type WorkState,
} from "../work-items/domain/work-item";
import { saveWorkItem, updateAtVersion, writeTransaction, type WorkItemAdapter } from "../work-items/engine.server";
import {
  checkModelReview,
  defensibleSummary,
  MAX_REVIEW_ITEMS,
  planReviewLabels,
  reviewAgreement,
  reviewedStep,
  revealedSections,
  type DefensibleRow,
  type ModelReviewValues,
  type ReviewAgreement,
  type SubmittedLabel,
} from "./domain/model-review";
import { caseGold, caseListFilter, goldRecordOf, type CaseListFilters } from "./evaluation-pages.server";

/** The roles a reviewer must hold: the psychiatrists who annotate and adjudicate the notes. */
export const REVIEWER_ROLES = ["annotator", "adjudicator"] as const;

/** An item key: "r" and 16 hex digits, drawn at random; a number (an item's id) is never one. */
const ITEM_KEY = /^r[0-9a-f]{16}$/;

// ---------------------------------------------------------------------------------------------------------------
// Admin: send a review

export interface SendReviewInput {
  evaluationId: number;
  name: string;
  filter: CaseListFilters;
  /** Usernames of the reviewers. */
  reviewers: readonly string[];
  perItem: 1 | 2;
  /** Send at most this many steps, drawn at random from those the filter picks. */
  limit?: number | null;
  actorId: string | null;
  now?: number;
  /** The draw's seed (random when not given; tests pass one). */
  seed?: number;
  /** For tests: the most steps one review may hold (MAX_REVIEW_ITEMS). */
  maxItems?: number;
}

export interface SendReviewResult {
  reviewId: number;
  items: number;
  matched: number;
}

/**
 * Sends the model steps the case list's filter picks (every matching trajectory the metrics count, not a page of the
 * list) to a new review: one item per trajectory (its first diagnosis, else its last step), each given to `perItem`
 * of the reviewers in the reviewers' own shuffled order, with an opaque key per reviewer. Refused, with nothing
 * written: an evaluation without its study (the reviewer must see the note's sections, and the prompts carry the
 * strategy's words), a name already used, a reviewer unknown, inactive or without the annotator or adjudicator role,
 * fewer reviewers than `perItem`, nothing picked, or more than MAX_REVIEW_ITEMS without a limit. One transaction,
 * audited (`evaluation_review` · `send`).
 */
export function sendReview(db: Db, input: SendReviewInput): SendReviewResult {
  const name = input.name.trim();
  if (!name) throw new ServiceError("Give the review a name.", "name");
  if (name.length > 80) throw new ServiceError("A review name has at most 80 characters.", "name");
  const reviewers = [...new Set(input.reviewers.map((r) => r.trim()).filter(Boolean))];
  if (reviewers.length < input.perItem)
    throw new ServiceError(
      input.perItem === 2 ? "Name at least two reviewers for two reviewers per step." : "Name at least one reviewer.",
      "reviewers",
    );
  if (input.limit !== undefined && input.limit !== null && (!Number.isInteger(input.limit) || input.limit < 1))
    throw new ServiceError("The number of steps to send is a whole number, at least 1.", "limit");
  const now = input.now ?? Date.now();
  const seed = input.seed ?? randomInt(2 ** 31);
  return writeTransaction(db, (tx) => {
    const evaluation = tx
      .select({ id: evaluations.id, studyId: evaluations.studyId })
      .from(evaluations)
      .where(eq(evaluations.id, input.evaluationId))
      .get();
    if (!evaluation) throw new ServiceError("No such evaluation.", undefined, 404);
    if (evaluation.studyId === null)
      throw new ServiceError(
        "This evaluation names no study, so a reviewer could not be shown the note's sections: import it with its study.",
      );
    if (
      tx
        .select({ id: evaluationReviews.id })
        .from(evaluationReviews)
        .where(and(eq(evaluationReviews.evaluationId, evaluation.id), eq(evaluationReviews.name, name)))
        .get()
    )
      throw new ServiceError(`This evaluation already has a review named "${name}".`, "name");
    const byName = checkReviewers(tx, reviewers);

    const picked = pickedTrajectories(tx, evaluation.id, input.filter);
    if (picked.length === 0) throw new ServiceError("The filter picks no model step to review.");
    let chosen = picked;
    if (input.limit && picked.length > input.limit) {
      const order = planReviewLabels(picked.length, ["draw"], 1, seed)
        .sort((a, b) => a.position - b.position)
        .slice(0, input.limit)
        .map((p) => p.item)
        .sort((a, b) => a - b);
      chosen = order.map((i) => picked[i]!);
    }
    const most = input.maxItems ?? MAX_REVIEW_ITEMS;
    if (chosen.length > most)
      throw new ServiceError(
        `The filter picks ${chosen.length} model steps; send at most ${most} (a random sample: give the number of steps).`,
        "limit",
      );

    const reviewId = tx
      .insert(evaluationReviews)
      .values({
        evaluationId: evaluation.id,
        name,
        filter: input.filter,
        reviewersPerItem: input.perItem,
        createdAt: now,
        createdBy: input.actorId,
      })
      .returning({ id: evaluationReviews.id })
      .get().id;
    const itemIds = chosen.map(
      (t) =>
        tx
          .insert(evaluationReviewItems)
          .values({ reviewId, trajectoryId: t.id, stepIndex: reviewedStep(t), failures: t.failures })
          .returning({ id: evaluationReviewItems.id })
          .get().id,
    );
    for (const p of planReviewLabels(itemIds.length, reviewers, input.perItem, seed))
      tx.insert(evaluationReviewLabels)
        .values({
          itemId: itemIds[p.item]!,
          reviewerId: byName.get(p.reviewer)!.id,
          itemKey: `r${randomBytes(8).toString("hex")}`,
          position: p.position,
        })
        .run();
    recordEvent(tx, {
      actorId: input.actorId,
      entity: "evaluation_review",
      entityId: reviewId,
      action: "send",
      changes: {
        evaluationId: evaluation.id,
        name,
        filter: input.filter,
        reviewers,
        perItem: input.perItem,
        items: itemIds.length,
        matched: picked.length,
      },
      at: now,
    });
    return { reviewId, items: itemIds.length, matched: picked.length };
  });
}

/**
 * The users behind reviewer usernames, by name; refused (ServiceError on "reviewers") when one is unknown, inactive
 * or holds neither REVIEWER_ROLES role. Called inside the send's or the change's transaction.
 */
function checkReviewers(tx: DbOrTx, reviewers: readonly string[]): Map<string, { id: string; username: string }> {
  if (reviewers.length === 0) return new Map();
  const found = tx
    .select({ id: users.id, username: users.username, active: users.active })
    .from(users)
    .where(inArray(users.username, reviewers))
    .all();
  const byName = new Map(found.map((u) => [u.username, u]));
  const unknown = reviewers.filter((r) => !byName.has(r));
  if (unknown.length) throw new ServiceError(`No user named ${unknown.map((n) => `"${n}"`).join(", ")}.`, "reviewers");
  const inactive = reviewers.filter((r) => !byName.get(r)!.active);
  if (inactive.length)
    throw new ServiceError(`${inactive.map((n) => `"${n}"`).join(", ")} is not active.`, "reviewers");
  const withRole = new Set(
    tx
      .selectDistinct({ userId: userRoles.userId })
      .from(userRoles)
      .where(
        and(
          inArray(
            userRoles.userId,
            found.map((u) => u.id),
          ),
          inArray(userRoles.role, [...REVIEWER_ROLES]),
        ),
      )
      .all()
      .map((r) => r.userId),
  );
  const noRole = reviewers.filter((r) => !withRole.has(byName.get(r)!.id));
  if (noRole.length)
    throw new ServiceError(
      `${noRole.map((n) => `"${n}"`).join(", ")} has neither the annotator nor the adjudicator role.`,
      "reviewers",
    );
  return byName;
}

export interface ChangeReviewersInput {
  evaluationId: number;
  /** The review's name. */
  name: string;
  add: readonly string[];
  remove: readonly string[];
  actorId: string | null;
  now?: number;
}

export interface ChangeReviewersResult {
  /** Labels not yet started that changed reviewer (given to an added reviewer, or taken from a removed one). */
  moved: number;
  /** The review's reviewers after the change, by username. */
  reviewers: string[];
}

/**
 * Adds or removes reviewers of a review already sent (docs/evaluation.md, "Changing the reviewers"). Only steps not
 * yet started move: a removed reviewer's labels are all kept (their figures count) but marked removed, so their keys
 * answer 404 (`resolveReviewKey`, `findOwnLabel`); each of their steps not yet submitted is given to a remaining
 * reviewer not already on it. Then the labels not started are shared again, one at a time from the reviewer with the
 * most to the one with the fewest, until no two differ by more than one; a draft or a submitted label never moves.
 * A re-added reviewer gets their kept labels back. Refused, nothing written: no such review, a name both added and
 * removed, an added reviewer already reviewing (or unknown, inactive, without the role), a removed one not reviewing,
 * fewer reviewers left than per step. One transaction, audited (`evaluation_review` · `reviewers`).
 */
export function changeReviewers(db: Db, input: ChangeReviewersInput): ChangeReviewersResult {
  const clean = (xs: readonly string[]) => [...new Set(xs.map((r) => r.trim()).filter(Boolean))];
  const add = clean(input.add);
  const remove = clean(input.remove);
  if (add.length === 0 && remove.length === 0)
    throw new ServiceError("Name a reviewer to add or to remove.", "reviewers");
  const both = add.filter((r) => remove.includes(r));
  if (both.length) throw new ServiceError(`"${both[0]}" is both added and removed.`, "reviewers");
  const now = input.now ?? Date.now();
  const l = evaluationReviewLabels;
  return writeTransaction(db, (tx) => {
    const review = tx
      .select({ id: evaluationReviews.id, perItem: evaluationReviews.reviewersPerItem })
      .from(evaluationReviews)
      .where(and(eq(evaluationReviews.evaluationId, input.evaluationId), eq(evaluationReviews.name, input.name.trim())))
      .get();
    if (!review) throw new ServiceError(`This evaluation has no review named "${input.name.trim()}".`, "name", 404);
    const labels = () =>
      tx
        .select({
          id: l.id,
          itemId: l.itemId,
          reviewerId: l.reviewerId,
          status: l.status,
          position: l.position,
          removedAt: l.removedAt,
        })
        .from(l)
        .innerJoin(evaluationReviewItems, eq(evaluationReviewItems.id, l.itemId))
        .where(eq(evaluationReviewItems.reviewId, review.id))
        .orderBy(asc(l.itemId), asc(l.id))
        .all();
    const names = new Map(
      tx
        .selectDistinct({ id: users.id, username: users.username })
        .from(users)
        .innerJoin(l, eq(l.reviewerId, users.id))
        .innerJoin(evaluationReviewItems, eq(evaluationReviewItems.id, l.itemId))
        .where(eq(evaluationReviewItems.reviewId, review.id))
        .all()
        .map((u) => [u.username, u.id]),
    );
    const before = labels();
    const active = new Set(before.filter((x) => x.removedAt === null).map((x) => x.reviewerId));
    const notReviewing = remove.filter((r) => !active.has(names.get(r) ?? ""));
    if (notReviewing.length)
      throw new ServiceError(`"${notReviewing[0]}" is not a reviewer of this review.`, "reviewers");
    const already = add.filter((r) => active.has(names.get(r) ?? ""));
    if (already.length) throw new ServiceError(`"${already[0]}" already reviews this review.`, "reviewers");
    const added = checkReviewers(tx, add);
    const removedIds = new Set(remove.map((r) => names.get(r)!));
    const remaining = new Set([...active].filter((id) => !removedIds.has(id)));
    for (const u of added.values()) remaining.add(u.id);
    if (remaining.size < review.perItem)
      throw new ServiceError(
        review.perItem === 2
          ? "A review with two reviewers per step keeps at least two."
          : "A review keeps a reviewer.",
        "reviewers",
      );

    // A re-added reviewer's kept labels come back to them.
    for (const u of added.values())
      for (const x of before.filter((b) => b.reviewerId === u.id && b.removedAt !== null))
        tx.update(l).set({ removedAt: null }).where(eq(l.id, x.id)).run();
    for (const x of before.filter((b) => removedIds.has(b.reviewerId) && b.removedAt === null))
      tx.update(l).set({ removedAt: now }).where(eq(l.id, x.id)).run();

    const current = labels();
    const onItem = new Map<number, Set<string>>();
    for (const x of current) onItem.set(x.itemId, (onItem.get(x.itemId) ?? new Set()).add(x.reviewerId));
    const open = new Map<string, typeof current>([...remaining].map((id) => [id, []]));
    const lastPosition = new Map<string, number>();
    for (const x of current) {
      lastPosition.set(x.reviewerId, Math.max(lastPosition.get(x.reviewerId) ?? 0, x.position));
      if (x.removedAt === null && x.status === "not_started") open.get(x.reviewerId)?.push(x);
    }
    const byLoad = () => [...open.entries()].sort((a, b) => a[1].length - b[1].length || a[0].localeCompare(b[0]));
    const give = (labelId: number | null, itemId: number, to: string) => {
      const position = (lastPosition.get(to) ?? 0) + 1;
      lastPosition.set(to, position);
      const itemKey = `r${randomBytes(8).toString("hex")}`;
      let row;
      if (labelId === null) row = tx.insert(l).values({ itemId, reviewerId: to, itemKey, position }).returning().get();
      else row = tx.update(l).set({ reviewerId: to, itemKey, position }).where(eq(l.id, labelId)).returning().get();
      onItem.get(itemId)!.add(to);
      open.get(to)!.push({ ...row });
    };
    let moved = 0;
    // Each step a removed reviewer had not submitted goes to the least loaded remaining reviewer not on it.
    const orphans = current.filter((x) => removedIds.has(x.reviewerId) && x.status !== "submitted");
    for (const x of orphans) {
      const to = byLoad().find(([id]) => !onItem.get(x.itemId)!.has(id));
      if (!to) throw new ServiceError("No remaining reviewer can take a step of the removed reviewer.", "reviewers");
      give(null, x.itemId, to[0]);
      moved++;
    }
    // Then the labels not started are shared again until no two reviewers differ by more than one.
    for (;;) {
      const loads = byLoad();
      const least = loads[0]!;
      const most = loads[loads.length - 1]!;
      if (most[1].length - least[1].length <= 1) break;
      const index = most[1].findLastIndex((x) => !onItem.get(x.itemId)!.has(least[0]));
      if (index < 0) break;
      const [x] = most[1].splice(index, 1);
      onItem.get(x!.itemId)!.delete(most[0]);
      give(x!.id, x!.itemId, least[0]);
      moved++;
    }
    const usernames = new Map([...names].map(([n, id]) => [id, n]));
    for (const u of added.values()) usernames.set(u.id, u.username);
    const reviewers = [...remaining].map((id) => usernames.get(id)!).sort((a, b) => a.localeCompare(b));
    recordEvent(tx, {
      actorId: input.actorId,
      entity: "evaluation_review",
      entityId: review.id,
      action: "reviewers",
      changes: { add, remove, moved, reviewers },
      at: now,
    });
    return { moved, reviewers };
  });
}

/** The trajectories a filter picks that the metrics count (none left out), in case-list order, with their failures. */
function pickedTrajectories(tx: DbOrTx, evaluationId: number, filter: CaseListFilters) {
  const t = evaluationTrajectories;
  const r = visibleEvaluationRuns;
  return tx
    .select({
      id: t.id,
      firstDiagnosis: t.firstDiagnosis,
      stepsExecuted: t.stepsExecuted,
      prematureDiagnosis: t.prematureDiagnosis,
      prematureAbstention: t.prematureAbstention,
      overAbstention: t.overAbstention,
      wrongCode: t.wrongCode,
      disagreement: t.seedDisagreement,
    })
    .from(t)
    .innerJoin(r, eq(r.id, t.runId))
    .where(and(caseListFilter(evaluationId, filter), sql`${t.excluded} is null`))
    .orderBy(asc(t.sampleId), asc(t.id))
    .all()
    .map((x) => ({
      id: x.id,
      firstDiagnosis: x.firstDiagnosis,
      stepsExecuted: x.stepsExecuted,
      failures: (
        [
          ["premature_diagnosis", x.prematureDiagnosis],
          ["premature_abstention", x.prematureAbstention],
          ["over_abstention", x.overAbstention],
          ["wrong_code", x.wrongCode],
          ["seed_disagreement", x.disagreement],
        ] as const
      )
        .filter(([, v]) => v === 1)
        .map(([k]) => k as string),
    }));
}

// ---------------------------------------------------------------------------------------------------------------
// Admin: the reviews of an evaluation, their figures and file

export interface ReviewSummary {
  id: number;
  name: string;
  filter: CaseListFilters;
  perItem: number;
  items: number;
  createdAt: number;
  /** `active` false for a reviewer removed from the review (their submitted labels still count). */
  reviewers: { username: string; submitted: number; total: number; active: boolean }[];
  defensible: DefensibleRow[];
  agreement: ReviewAgreement;
}

/**
 * Every review of an evaluation (or only the one named `reviewName`), newest first, with its reviewers' progress, its
 * figures and its agreement (admin). The page, reviews.csv and `eval-review-report` all read it.
 */
export function listReviews(db: Db, evaluationId: number, reviewName?: string): ReviewSummary[] {
  const reviews = db
    .select()
    .from(evaluationReviews)
    .where(
      and(
        eq(evaluationReviews.evaluationId, evaluationId),
        reviewName === undefined ? undefined : eq(evaluationReviews.name, reviewName),
      ),
    )
    .orderBy(sql`${evaluationReviews.id} desc`)
    .all();
  return reviews.map((rv) => {
    const items = db
      .select({
        id: evaluationReviewItems.id,
        failures: evaluationReviewItems.failures,
        model: evaluationTrajectories.model,
      })
      .from(evaluationReviewItems)
      .innerJoin(evaluationTrajectories, eq(evaluationTrajectories.id, evaluationReviewItems.trajectoryId))
      .where(eq(evaluationReviewItems.reviewId, rv.id))
      .all();
    const labels = db
      .select({
        item: evaluationReviewLabels.itemId,
        reviewer: users.username,
        status: evaluationReviewLabels.status,
        defensible: evaluationReviewLabels.defensible,
        removedAt: evaluationReviewLabels.removedAt,
      })
      .from(evaluationReviewLabels)
      .innerJoin(evaluationReviewItems, eq(evaluationReviewItems.id, evaluationReviewLabels.itemId))
      .innerJoin(users, eq(users.id, evaluationReviewLabels.reviewerId))
      .where(eq(evaluationReviewItems.reviewId, rv.id))
      .all();
    const submitted: SubmittedLabel[] = labels
      .filter((l) => l.status === "submitted" && l.defensible !== null)
      .map((l) => ({ item: l.item, reviewer: l.reviewer, defensible: l.defensible! }));
    const byReviewer = new Map<string, { submitted: number; total: number }>();
    const active = new Set(labels.filter((x) => x.removedAt === null).map((x) => x.reviewer));
    // A removed reviewer's submitted labels still count; their unfinished ones went to others.
    for (const l of labels.filter((x) => x.removedAt === null || x.status === "submitted")) {
      const p = byReviewer.get(l.reviewer) ?? { submitted: 0, total: 0 };
      p.total++;
      if (l.status === "submitted") p.submitted++;
      byReviewer.set(l.reviewer, p);
    }
    return {
      id: rv.id,
      name: rv.name,
      filter: rv.filter,
      perItem: rv.reviewersPerItem,
      items: items.length,
      createdAt: rv.createdAt,
      reviewers: [...byReviewer]
        .map(([username, p]) => ({ username, ...p, active: active.has(username) }))
        .sort((a, b) => a.username.localeCompare(b.username)),
      defensible: defensibleSummary(
        items.map((i) => ({ item: i.id, model: i.model, failures: i.failures })),
        submitted,
      ),
      agreement: reviewAgreement(submitted),
    };
  });
}

const share = (x: number | null) => (x === null ? "" : x.toFixed(4));

/**
 * `reviews.csv` of an evaluation: per review, failure and model, the steps reviewed, judged defensible and split,
 * and the share defensible (a fraction); then each review's agreement. The one formula-safe CSV writer.
 */
export function reviewsCsv(db: Db, evaluationId: number, reviewName?: string): string {
  const rows: string[][] = [
    [
      "review",
      "failure",
      "model",
      "reviewed",
      "defensible",
      "split",
      "share_defensible",
      "agreement_items",
      "percent_agreement",
      "gwet_ac1",
      "cohen_kappa",
    ],
  ];
  for (const rv of listReviews(db, evaluationId, reviewName)) {
    for (const d of rv.defensible)
      rows.push([
        rv.name,
        d.failure,
        d.model || "all",
        String(d.reviewed),
        String(d.defensible),
        String(d.split),
        share(d.share),
        "",
        "",
        "",
        "",
      ]);
    const a = rv.agreement;
    rows.push([
      rv.name,
      "agreement",
      "all",
      "",
      "",
      "",
      "",
      String(a.items),
      share(a.percentAgreement),
      share(a.ac1),
      share(a.kappa),
    ]);
  }
  return formatCsv(rows);
}

// ---------------------------------------------------------------------------------------------------------------
// The reviewer's side

export interface ReviewerItemRow {
  key: string;
  /** The row's number in the reviewer's list. */
  number: number;
  state: WorkState;
}

/** The reviewer's own items, every review, in their shuffled order; keys and states only. */
export function listReviewerItems(db: DbOrTx, userId: string): ReviewerItemRow[] {
  const l = evaluationReviewLabels;
  return db
    .select({ key: l.itemKey, status: l.status })
    .from(l)
    .innerJoin(evaluationReviewItems, eq(evaluationReviewItems.id, l.itemId))
    .where(and(eq(l.reviewerId, userId), isNull(l.removedAt)))
    .orderBy(asc(evaluationReviewItems.reviewId), asc(l.position), asc(l.id))
    .all()
    .map((r, i) => ({ key: r.key, number: i + 1, state: r.status }));
}

/** Whether any review names the user: the start page then offers the review. */
export function isModelReviewer(db: Db, userId: string): boolean {
  return (
    db
      .select({ id: evaluationReviewLabels.id })
      .from(evaluationReviewLabels)
      .where(and(eq(evaluationReviewLabels.reviewerId, userId), isNull(evaluationReviewLabels.removedAt)))
      .limit(1)
      .get() !== undefined
  );
}

/** The label behind a key, if it is this reviewer's (the key and the reviewer in the query); a number finds nothing. */
export function resolveReviewKey(db: DbOrTx, userId: string, key: string | undefined): number | null {
  if (!key || !ITEM_KEY.test(key)) return null;
  const row = db
    .select({ id: evaluationReviewLabels.id })
    .from(evaluationReviewLabels)
    .where(
      and(
        eq(evaluationReviewLabels.itemKey, key),
        eq(evaluationReviewLabels.reviewerId, userId),
        isNull(evaluationReviewLabels.removedAt),
      ),
    )
    .get();
  return row?.id ?? null;
}

/** The reviewer's label by its id, only if it is theirs: the ownership is in the query. */
function findOwnLabel(db: DbOrTx, userId: string, labelId: number) {
  return db
    .select()
    .from(evaluationReviewLabels)
    .where(
      and(
        eq(evaluationReviewLabels.id, labelId),
        eq(evaluationReviewLabels.reviewerId, userId),
        isNull(evaluationReviewLabels.removedAt),
      ),
    )
    .get();
}

export interface ReviewerItemView {
  item: {
    key: string;
    number: number;
    /** The sections the model had seen at the step, in order; the rest of the note is not sent. */
    sections: { title: string; content: string }[];
    sectionsTotal: number;
    step: number;
    answer: string;
    /** DIAGNOSE, CLARIFY, ABSTAIN, or "" when the judge gave none. */
    action: string;
    codes: string[];
    gold: { sufficient: boolean; diagnosis: string | null; tau: number | null };
    /** The experts' action at this point of the note. */
    expertAction: string | null;
  };
  state: WorkState;
  values: ModelReviewValues;
  version: number;
  updatedAt: number | null;
  nextKey: string | null;
  previousKey: string | null;
  progress: { done: number; total: number };
}

/** One step for its reviewer, by key: the blinded view (see the top of this file), or null when not theirs. */
export function getReviewerItem(db: Db, input: { userId: string; key: string | undefined }): ReviewerItemView | null {
  const labelId = resolveReviewKey(db, input.userId, input.key);
  if (labelId === null) return null;
  const label = findOwnLabel(db, input.userId, labelId)!;
  const t = evaluationTrajectories;
  const found = db
    .select({
      stepIndex: evaluationReviewItems.stepIndex,
      trajectoryId: t.id,
      sampleId: t.sampleId,
      strategy: t.strategy,
      sectionsTotal: t.sectionsTotal,
      gold: evaluations.gold,
      studyId: evaluations.studyId,
    })
    .from(evaluationReviewItems)
    .innerJoin(t, eq(t.id, evaluationReviewItems.trajectoryId))
    .innerJoin(visibleEvaluationRuns, eq(visibleEvaluationRuns.id, t.runId))
    .innerJoin(evaluations, eq(evaluations.id, t.evaluationId))
    .where(eq(evaluationReviewItems.id, label.itemId))
    .get();
  if (!found) return null;
  const step = db
    .select()
    .from(evaluationSteps)
    .where(and(eq(evaluationSteps.trajectoryId, found.trajectoryId), eq(evaluationSteps.stepIndex, found.stepIndex)))
    .get();
  const goldRecord = goldRecordOf(found.gold, found.sampleId);
  const { gold, expertActions } = goldRecord
    ? caseGold(goldRecord, found.sampleId, found.sectionsTotal)
    : { gold: null, expertActions: [] };
  const T = gold?.sections || found.sectionsTotal;
  const revealed = revealedSections(
    found.strategy,
    { stepIndex: found.stepIndex, sectionOrder: step?.sectionOrder ?? null },
    T,
  );
  let sections: { title: string; content: string }[] = [];
  if (found.studyId !== null) {
    const c = db
      .select({ id: visibleCases.id })
      .from(visibleCases)
      .where(and(eq(visibleCases.studyId, found.studyId), eq(visibleCases.externalId, found.sampleId)))
      .get();
    if (c)
      sections = getCaseSections(db, c.id)
        .slice(0, revealed)
        .map((s) => ({ title: SECTION_TITLES[s.kind], content: s.content }));
  }
  const mine = listReviewerItems(db, input.userId);
  const at = mine.findIndex((r) => r.key === label.itemKey);
  return {
    item: {
      key: label.itemKey,
      number: at + 1,
      sections,
      sectionsTotal: T,
      step: found.stepIndex,
      answer: step?.answer ?? "",
      action: (step?.action ?? "").toUpperCase(),
      codes: step?.icdCodes ?? [],
      gold: { sufficient: gold?.sufficient ?? false, diagnosis: gold?.diagnosis ?? null, tau: gold?.tau ?? null },
      expertAction: expertActions[revealed - 1] ?? null,
    },
    state: label.status,
    values: { defensible: label.defensible, reason: label.reason },
    version: label.version,
    updatedAt: label.updatedAt,
    nextKey: nextOpenItem(mine, at)?.key ?? null,
    previousKey: previousItem(mine, at)?.key ?? null,
    progress: progressOf(mine),
  };
}

type LabelRow = typeof evaluationReviewLabels.$inferSelect;

/** The review's adapter of the work-item engine (docs/architecture.md, "The work-item engine"). */
const modelReviewWork: WorkItemAdapter<LabelRow, LabelRow, ModelReviewValues> = {
  entity: "evaluation_review_label",
  noun: "review",
  find: (tx: Tx, userId, labelId) => findOwnLabel(tx, userId, labelId),
  row: (_tx, _userId, item) => item,
  meta: (r) => ({ id: r.id, state: r.status, version: r.version, savedAt: r.updatedAt }),
  valuesOf: (row) => ({ defensible: row?.defensible ?? null, reason: row?.reason ?? "" }),
  check(_tx, _item, values) {
    const errors = checkModelReview(values);
    if (!Object.keys(errors).length) return { ok: true, values: { ...values, reason: values.reason.trim() } };
    return { ok: false, message: "Say whether the step is defensible, and why.", errors };
  },
  audited: (v) => ({ ...v }),
  freeText: ["reason"],
  write(tx, { row, values, status, version, now }) {
    if (!row) return null;
    const written = updateAtVersion(tx, evaluationReviewLabels, row.id, row.version, {
      defensible: values.defensible,
      reason: values.reason,
      status,
      version,
      updatedAt: now,
      submittedAt: status === "submitted" ? now : row.submittedAt,
    });
    return written ? row.id : null;
  },
};

/**
 * Saves a reviewer's draft or submission (a judgement and a reason), revisable after submission. Through the engine:
 * ownership, version and audit in one IMMEDIATE transaction; the reason is recorded as changed, never copied.
 */
export function saveModelReview(
  db: Db,
  input: {
    userId: string;
    labelId: number;
    values: ModelReviewValues;
    version: number;
    intent: "draft" | "submit";
    now?: number;
    activeMs?: number;
  },
): SaveResult {
  const { labelId, ...rest } = input;
  return saveWorkItem(db, modelReviewWork, { ...rest, itemId: labelId });
}

/**
 * How many model steps a filter picks now (the send form's preview): every matching trajectory the metrics count,
 * counted without reading their failures.
 */
export function countPicked(db: Db, evaluationId: number, filter: CaseListFilters): number {
  const t = evaluationTrajectories;
  return db
    .select({ n: count() })
    .from(t)
    .innerJoin(visibleEvaluationRuns, eq(visibleEvaluationRuns.id, t.runId))
    .where(and(caseListFilter(evaluationId, filter), sql`${t.excluded} is null`))
    .get()!.n;
}

/** The users who may be named reviewers: active, with the annotator or adjudicator role; usernames only. */
export function reviewerChoices(db: Db): string[] {
  return db
    .selectDistinct({ username: users.username })
    .from(users)
    .innerJoin(userRoles, eq(userRoles.userId, users.id))
    .where(and(eq(users.active, true), inArray(userRoles.role, [...REVIEWER_ROLES])))
    .orderBy(asc(users.username))
    .all()
    .map((u) => u.username);
}
