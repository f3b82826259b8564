/**
 * Opening screening rounds and the admin's views of a study and of a round (docs/screening.md). Round 1 reviews every
 * relevant and borderline item plus concealed controls drawn from not_relevant; a recall round reviews the recall
 * screen's clear and possible items plus fresh controls from its `no` tier; both in one seeded order (core
 * drawRound) shared by every reviewer. Admin only: these views show control status and screen labels.
 */
import { randomInt } from "node:crypto";
import { and, asc, eq, inArray } from "drizzle-orm";
import { screeningReviewers, screeningRoundItems, screeningRounds, userRoles, users } from "../../db/schema";
import { visibleScreeningItems, visibleScreeningLabels, visibleScreeningRecallTiers } from "../../db/schema-visible";
import { drawRound, roundPool, type PoolItem, type RecallTier, type ScreenLabel } from "./domain/screening";
import type { Db, DbOrTx } from "../platform/db.server";
import { recordEvent } from "../audit/audit.server";
import {
  getScreeningStudy,
  listRoundRows,
  loadRound,
  reviewerCodes,
  studyState,
  type RoundData,
  type ScreeningStudy,
} from "./screening.server";
import { ServiceError } from "../platform/service-error";
import { byStudyName, cutWindow, readWindow, type Cursor, type WindowSpec } from "../platform/list-window";

export interface Rater {
  id: string;
  username: string;
  displayName: string;
  active: boolean;
}

/** People who can review: users with the rater role. */
export function listRaters(db: DbOrTx): Rater[] {
  return db
    .select({ id: users.id, username: users.username, displayName: users.displayName, active: users.active })
    .from(users)
    .innerJoin(userRoles, and(eq(userRoles.userId, users.id), eq(userRoles.role, "rater")))
    .orderBy(asc(users.username))
    .all()
    .map((r) => ({ ...r, active: Boolean(r.active) }));
}

/** A fresh seed to suggest on the open-round form; whatever seed is used is recorded with the round. */
export function suggestSeed(): number {
  return randomInt(1, 2 ** 31);
}

export interface OpenedRound {
  id: number;
  number: number;
  seed: number;
  candidates: number;
  controls: number;
  /** Items of the round's pool the screen said nothing about (unused items without a recall tier). */
  unscreened: number;
}

/**
 * Opens the study's next round. Refused while a round is open, after a round that ended the cycle, before the screen
 * labels (round 1) or the recall tiers (later rounds) are in, and unless exactly the study's number of reviewers
 * (active raters) is chosen. Written in one IMMEDIATE transaction, with its audit event.
 */
export function openRound(
  db: Db,
  input: {
    studyId: number;
    reviewerIds: string[];
    seed: number;
    controls: number;
    actorId: string | null;
    now?: number;
  },
): OpenedRound {
  const now = input.now ?? Date.now();
  return db.transaction(
    (tx): OpenedRound => {
      const study = getScreeningStudy(tx, input.studyId);
      if (!study) throw new ServiceError("No such screening study.", undefined, 404);
      const state = studyState(tx, study.id);
      const next = state.next;
      if (next.kind === "import_items") throw new ServiceError("Import the study's items first.");
      if (next.kind === "import_labels")
        throw new ServiceError(
          `${next.unlabelled} item${
            next.unlabelled === 1 ? " has" : "s have"
          } no screen label: import the screen's labels first.`,
        );
      if (next.kind === "in_review") throw new ServiceError(`Round ${next.round} is still in review.`, undefined, 409);
      if (next.kind === "final")
        throw new ServiceError(
          `Round ${next.round}'s control-inclusion rate is at or below the threshold: the included set is final.`,
          undefined,
          409,
        );
      if (next.kind === "import_tiers")
        throw new ServiceError(
          `Import the recall screen's tiers (clear / possible / no) for round ${next.round} first.`,
        );
      const number = next.round;

      const reviewerIds = [...new Set(input.reviewerIds)];
      if (reviewerIds.length !== study.reviewersPerRound)
        throw new ServiceError(
          `Choose exactly ${study.reviewersPerRound} reviewers (the study's setting); ${reviewerIds.length} chosen.`,
          "reviewers",
        );
      const raters = new Map(listRaters(tx).map((r) => [r.id, r]));
      const bad = reviewerIds.filter((id) => !raters.get(id)?.active);
      if (bad.length) throw new ServiceError("Reviewers must be active users with the rater role.", "reviewers");

      const itemRows = tx
        .select({
          id: visibleScreeningItems.id,
          externalId: visibleScreeningItems.externalId,
          label: visibleScreeningLabels.label,
        })
        .from(visibleScreeningItems)
        .leftJoin(visibleScreeningLabels, eq(visibleScreeningLabels.itemId, visibleScreeningItems.id))
        .where(eq(visibleScreeningItems.studyId, study.id))
        .orderBy(asc(visibleScreeningItems.position))
        .all();
      const used = new Set(
        tx
          .select({ itemId: screeningRoundItems.itemId })
          .from(screeningRoundItems)
          .innerJoin(screeningRounds, eq(screeningRounds.id, screeningRoundItems.roundId))
          .where(eq(screeningRounds.studyId, study.id))
          .all()
          .map((r) => r.itemId),
      );
      const tiers = new Map(
        tx
          .select({ itemId: visibleScreeningRecallTiers.itemId, tier: visibleScreeningRecallTiers.tier })
          .from(visibleScreeningRecallTiers)
          .where(
            and(eq(visibleScreeningRecallTiers.studyId, study.id), eq(visibleScreeningRecallTiers.roundNumber, number)),
          )
          .all()
          .map((r) => [r.itemId, r.tier as RecallTier]),
      );
      const internalId = new Map(itemRows.map((r) => [r.externalId, r.id]));
      const pool = roundPool(
        number,
        itemRows.map((r): PoolItem => ({
          id: r.externalId,
          screenLabel: (r.label as ScreenLabel | null) ?? null,
          used: used.has(r.id),
          tier: tiers.get(r.id) ?? null,
        })),
      );
      const draw = drawRound({
        candidates: pool.candidates,
        controlPool: pool.controlPool,
        controls: input.controls,
        seed: input.seed,
      });
      if (!draw.ok) throw new ServiceError(draw.error.charAt(0).toUpperCase() + draw.error.slice(1), "controls");

      const round = tx
        .insert(screeningRounds)
        .values({
          studyId: study.id,
          number,
          seed: input.seed,
          status: "open",
          reviewersPerRound: study.reviewersPerRound,
          inclusionVotes: study.inclusionVotes,
          controlThreshold: study.controlThreshold,
          openedAt: now,
          openedBy: input.actorId,
        })
        .returning({ id: screeningRounds.id })
        .get();
      // Inserted in the shared order, so that row ids (reviewers' URLs) say nothing about which items are controls.
      for (const e of draw.order)
        tx.insert(screeningRoundItems)
          .values({
            roundId: round.id,
            itemId: internalId.get(e.id)!,
            position: e.position,
            isControl: e.isControl,
            stratum: e.stratum,
          })
          .run();
      for (const reviewerId of reviewerIds.sort())
        tx.insert(screeningReviewers).values({ roundId: round.id, reviewerId, assignedAt: now }).run();
      const controls = draw.order.filter((e) => e.isControl).length;
      recordEvent(tx, {
        actorId: input.actorId,
        entity: "screening_round",
        entityId: round.id,
        action: "open",
        changes: {
          studyId: study.id,
          number,
          seed: input.seed,
          candidates: draw.order.length - controls,
          controls,
          reviewers: reviewerIds.map((id) => raters.get(id)!.username).sort(),
        },
        at: now,
      });
      return {
        id: round.id,
        number,
        seed: input.seed,
        candidates: draw.order.length - controls,
        controls,
        unscreened: pool.unscreened.length,
      };
    },
    { behavior: "immediate" },
  );
}

function roundView(r: RoundData) {
  const byId = new Map(r.reviewers.map((x) => [x.id, x]));
  const { perItem: _items, pairwise, ...figures } = r.figures;
  return {
    id: r.round.id,
    number: r.round.number,
    kind: r.round.number === 1 ? ("screen" as const) : ("recall" as const),
    seed: r.round.seed,
    status: r.round.status,
    rule: {
      reviewersPerRound: r.round.reviewersPerRound,
      inclusionVotes: r.round.inclusionVotes,
      controlThreshold: r.round.controlThreshold,
    },
    openedAt: r.round.openedAt,
    closedAt: r.round.closedAt,
    reviewers: r.reviewers.map((x) => ({ code: x.code, username: x.username, submitted: x.submitted })),
    figures,
    pairwise: pairwise.map((p) => ({
      reviewers: p.reviewers.map((id) => `${byId.get(id)?.code ?? "?"} (${byId.get(id)?.username ?? "?"})`) as [
        string,
        string,
      ],
      nItems: p.nItems,
      ac1: p.ac1,
      percentAgreement: p.percentAgreement,
    })),
  };
}

/** Everything the admin's study page shows. */
export function getStudyOverview(db: Db, studyId: number) {
  const study = getScreeningStudy(db, studyId);
  if (!study) return null;
  const state = studyState(db, studyId);
  const last = state.rounds.at(-1);
  const unused =
    db
      .select({ id: visibleScreeningItems.id })
      .from(visibleScreeningItems)
      .where(eq(visibleScreeningItems.studyId, studyId))
      .all().length - new Set(state.rounds.flatMap((r) => r.figures.perItem.map((i) => i.id))).size;
  return {
    study: study as ScreeningStudy,
    screen: state.screen,
    rounds: state.rounds.map(roundView),
    next: state.next,
    tiers: state.tiers,
    unusedItems: unused,
    raters: listRaters(db).filter((r) => r.active),
    previousReviewers: last ? last.reviewers.map((r) => r.id) : [],
    included: state.rounds.reduce((n, r) => n + r.figures.included, 0),
  };
}

const ROUND_ITEMS_WINDOW = {
  prefix: "",
  sorts: ["position", "id"],
  defaultSort: "position",
  filters: ["q", "show"],
} as const satisfies WindowSpec<string, string>;

/** The round page's choices of which items to show (`show` in its URL). */
const ROUND_ITEM_SHOWS = ["included", "controls", "included-controls"] as const;
type RoundItemShow = (typeof ROUND_ITEM_SHOWS)[number];

/**
 * One round in detail for the admin: its figures, and a window of its items (docs/architecture.md, "Pages are
 * windows") with each item's stratum, control status, votes and outcome, filtered by `show` (included, controls,
 * included controls) and `q` (the start of an item's id, source or screen category), sorted by position or item id.
 * The figures need every vote of the round, so the items are tallied in memory and the window is cut from them: what
 * the page sends and renders is one window, whatever the round holds. The controls the majority included (the
 * screen's misses, bounded by the round's controls) are listed whole, with their notes.
 */
export function getRoundDetail(
  db: Db,
  input: { studyId: number; number: number },
  params: URLSearchParams = new URLSearchParams(),
) {
  const study = getScreeningStudy(db, input.studyId);
  if (!study) return null;
  const row = listRoundRows(db, input.studyId).find((r) => r.number === input.number);
  if (!row) return null;
  const codes = reviewerCodes(db, input.studyId);
  const data = loadRound(db, row, codes);
  const byId = new Map(data.reviewers.map((x) => [x.id, x]));
  const w = readWindow(params, ROUND_ITEMS_WINDOW, 2);
  const show = (ROUND_ITEM_SHOWS as readonly string[]).includes(w.filters.show)
    ? (w.filters.show as RoundItemShow)
    : null;
  w.filters.show = show ?? "";
  const q = w.filters.q.toLowerCase();
  type PerItem = RoundData["figures"]["perItem"][number];
  const perItem = data.figures.perItem;
  // Screen categories of the items the page shows; of the whole study when the text filter reads them.
  const labelsOf = (ids: string[] | null) =>
    new Map(
      ids === null || ids.length
        ? db
            .select({ externalId: visibleScreeningItems.externalId, category: visibleScreeningLabels.category })
            .from(visibleScreeningItems)
            .leftJoin(visibleScreeningLabels, eq(visibleScreeningLabels.itemId, visibleScreeningItems.id))
            .where(
              and(
                eq(visibleScreeningItems.studyId, input.studyId),
                ids ? inArray(visibleScreeningItems.externalId, ids) : undefined,
              ),
            )
            .all()
            .map((r) => [r.externalId, r.category ?? null])
        : [],
    );
  const allLabels = q ? labelsOf(null) : null;
  const starts = (s: string | null | undefined) => s != null && s.toLowerCase().startsWith(q);
  const matching = perItem.filter(
    (i) =>
      (show === "included"
        ? i.included
        : show === "controls"
          ? i.isControl
          : show === "included-controls"
            ? i.isControl && i.included
            : true) &&
      (!q || starts(i.id) || starts(i.stratum) || starts(allLabels?.get(i.id))),
  );
  const cursorOf = (i: PerItem): Cursor => (w.sort === "id" ? [i.id, i.position] : [i.position, i.id]);
  const sorted =
    w.sort === "id"
      ? [...matching].sort((a, b) => byStudyName(a.id, b.id) || a.position - b.position)
      : [...matching].sort((a, b) => a.position - b.position);
  const cut = cutWindow(w, sorted, cursorOf);
  const includedControls = perItem.filter((i) => i.isControl && i.included);
  const labels = allLabels ?? labelsOf([...new Set([...cut.rows, ...includedControls].map((i) => i.id))]);
  const view = (i: PerItem) => ({
    id: i.id,
    position: i.position,
    isControl: i.isControl,
    stratum: i.stratum,
    screenCategory: labels.get(i.id) ?? null,
    yes: i.yes,
    no: i.no,
    included: i.included,
    // Until the round closes an item's votes are still coming in: its outcome is pending, not "excluded".
    outcome:
      row.status === "closed" ? (i.included ? ("included" as const) : ("excluded" as const)) : ("pending" as const),
    consensusTier: i.consensusTier,
    modalCategory: i.modalCategory,
    votes: i.votes.map((v) => ({
      reviewer: byId.get(v.reviewer)?.code ?? "?",
      relevant: v.relevant,
      category: v.category,
      confidence: v.confidence ?? null,
      notes: data.notes.get(i.id)?.get(v.reviewer) ?? "",
    })),
  });
  return {
    study: { id: study.id, name: study.name },
    round: roundView(data),
    includedControls: includedControls.map(view),
    window: { ...cut, rows: cut.rows.map(view) },
  };
}
