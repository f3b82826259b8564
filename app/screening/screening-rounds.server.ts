/**
 * Opening screening rounds and the admin's views of a study and of a round (docs/screening.md). Round 1 reviews every
 * relevant and borderline item plus concealed controls drawn from not_relevant; a recall round reviews the recall
 * screen's clear and possible items plus fresh controls from its `no` tier; both in one seeded order (core
 * drawRound) shared by every reviewer. Admin only: these views show control status and screen labels.
 */
import { compareCodePoints } from "../python-compat/text";
import { randomInt } from "node:crypto";
import { and, asc, eq, inArray, sql, type SQL } from "drizzle-orm";
import {
  screeningReviewers,
  screeningRoundItems,
  screeningRounds,
  screeningVotes,
  userRoles,
  users,
} from "../../db/schema";
import { visibleScreeningItems, visibleScreeningLabels, visibleScreeningRecallTiers } from "../../db/schema-visible";
import {
  drawRound,
  roundPool,
  tallyItem,
  type PoolItem,
  type RecallTier,
  type ReviewConfidence,
  type RoundFigures,
  type ScreenLabel,
} from "./domain/screening";
import { studyStateKept } from "./round-figures.server";
import { keyset } from "../platform/list-window.server";
import type { Db, DbOrTx } from "../platform/db.server";
import { recordEvent } from "../audit/audit.server";
import {
  getScreeningStudy,
  listRoundRows,
  reviewerCodes,
  studyState,
  type RoundData,
  type ScreeningStudy,
} from "./screening.server";
import { ServiceError } from "../platform/service-error";
import { finishWindow, readWindow, type Cursor, type WindowSpec } from "../platform/list-window";

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

function roundView(r: Pick<RoundData, "round" | "reviewers"> & { figures: Omit<RoundFigures, "perItem"> }) {
  const byId = new Map(r.reviewers.map((x) => [x.id, x]));
  const codeOf = (id: string) => byId.get(id)?.code ?? "?";
  const byCode = (a: string, b: string) => compareCodePoints(a.padStart(4), b.padStart(4));
  const { pairwise, ...all } = r.figures;
  const { submittedBy: _submittedBy, ...figures } = all as typeof all & { submittedBy?: unknown };
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
    // Each pair and the pairs in the reviewers' code order (R1 before R2), whatever order the figures came in.
    pairwise: pairwise
      .map((p) => ({ ...p, ids: [...p.reviewers].sort((a, b) => byCode(codeOf(a), codeOf(b))) }))
      .sort((a, b) => byCode(codeOf(a.ids[0]!), codeOf(b.ids[0]!)) || byCode(codeOf(a.ids[1]!), codeOf(b.ids[1]!)))
      .map((p) => ({
        reviewers: p.ids.map((id) => `${codeOf(id)} (${byId.get(id)?.username ?? "?"})`) as [string, string],
        nItems: p.nItems,
        ac1: p.ac1,
        percentAgreement: p.percentAgreement,
      })),
  };
}

/**
 * Items of the study no round has used: its `items` (visible) less the distinct items of its rounds, a count over
 * the round items' (round, item) index rather than a tally of the rounds' votes.
 */
export function unusedItemCount(db: DbOrTx, studyId: number, items: number): number {
  const used = db.get<{ n: number }>(
    sql`SELECT count(DISTINCT ri.item_id) AS n FROM screening_rounds r
      JOIN screening_round_items ri ON ri.round_id = r.id WHERE r.study_id = ${studyId}`,
  )!.n;
  return items - used;
}

/**
 * Everything the admin's study page shows. The rounds' figures are the kept ones (app/screening/round-figures.server.ts:
 * studyStateKept), computed on a worker thread when a round's version has moved.
 */
export async function getStudyOverview(db: Db, studyId: number) {
  const study = getScreeningStudy(db, studyId);
  if (!study) return null;
  const state = await studyStateKept(db, studyId);
  const last = state.rounds.at(-1);
  return {
    study: study as ScreeningStudy,
    screen: state.screen,
    rounds: state.rounds.map(roundView),
    next: state.next,
    tiers: state.tiers,
    unusedItems: unusedItemCount(db, studyId, state.screen.items),
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

interface RoundItemRow {
  roundItemId: number;
  itemId: number;
  externalId: string;
  position: number;
  isControl: number;
  stratum: string;
  category: string | null;
}

/**
 * One round in detail for the admin: its figures, and a window of its items (docs/architecture.md, "Pages are
 * windows") with each item's stratum, control status, votes and outcome, filtered by `show` (included, controls,
 * included controls) and `q` (the start of an item's id, source or screen category), sorted by position or item id.
 * The figures are the kept ones (`roundFiguresKept`: every vote, tallied on a worker thread once per version of the
 * round); the window is read by keyset from the round's items (`screening_round_items_round_pos_idx`, or the study's
 * items by id, `screening_items_study_external_idx`, each tried against the round), and only the window's votes
 * are read and tallied here. The included filter counts each item's yes votes from its own votes
 * (`screening_votes_item_reviewer_idx`). The controls the majority included (the screen's misses, bounded by the
 * round's controls) are listed whole, with their notes.
 */
export async function getRoundDetail(
  db: Db,
  input: { studyId: number; number: number },
  params: URLSearchParams = new URLSearchParams(),
) {
  const study = getScreeningStudy(db, input.studyId);
  if (!study) return null;
  const row = listRoundRows(db, input.studyId).find((r) => r.number === input.number);
  if (!row) return null;
  const codes = reviewerCodes(db, input.studyId);
  const state = await studyStateKept(db, input.studyId);
  const data = state.rounds.find((r) => r.round.id === row.id);
  if (!data) return null;
  const byId = new Map(data.reviewers.map((x) => [x.id, x]));
  const rank = new Map(data.reviewers.map((x, i) => [x.id, i]));
  const w = readWindow(params, ROUND_ITEMS_WINDOW, 2);
  const show = (ROUND_ITEM_SHOWS as readonly string[]).includes(w.filters.show)
    ? (w.filters.show as RoundItemShow)
    : null;
  w.filters.show = show ?? "";
  const q = w.filters.q.toLowerCase();

  const yes = sql`(SELECT count(*) FROM screening_votes v
    WHERE v.round_item_id = ri.id AND v.status = 'submitted' AND v.relevant = 1)`;
  const included = sql`${yes} >= ${row.inclusionVotes}`;
  const showSql =
    show === "included"
      ? included
      : show === "controls"
        ? sql`ri.is_control = 1`
        : show === "included-controls"
          ? sql`ri.is_control = 1 AND ${included}`
          : sql`1`;
  const starts = (col: SQL) => sql`substr(lower(${col}), 1, ${q.length}) = ${q}`;
  const qSql = q
    ? sql`(${starts(sql`i.external_id`)} OR ${starts(sql`ri.stratum`)} OR ${starts(sql`l.category`)})`
    : sql`1`;
  const columns = sql`ri.id AS roundItemId, i.id AS itemId, i.external_id AS externalId, ri.position AS position,
    ri.is_control AS isControl, ri.stratum AS stratum, l.category AS category`;
  const byPosition = w.sort !== "id";
  const k = keyset(w, byPosition ? [sql`ri.position`, sql`ri.id`] : [sql`i.external_id`, sql`i.id`]);
  // By position: the round's items in order; by id: the study's items in id order, each tried against the round
  // (CROSS JOIN keeps that order of the loops, so a window reads its rows only).
  const from = byPosition
    ? sql`screening_round_items ri JOIN visible_screening_items i ON i.id = ri.item_id`
    : sql`visible_screening_items i CROSS JOIN screening_round_items ri ON ri.round_id = ${row.id} AND ri.item_id = i.id`;
  const scope = byPosition ? sql`ri.round_id = ${row.id}` : sql`i.study_id = ${input.studyId}`;
  const fetched = db.all<RoundItemRow>(
    sql`SELECT ${columns} FROM ${from} LEFT JOIN visible_screening_labels l ON l.item_id = i.id
      WHERE ${scope} AND ${showSql} AND ${qSql} AND ${k.where}
      ORDER BY ${sql.join(k.orderBy, sql`, `)} LIMIT ${k.limit}`,
  );
  const f = data.figures;
  // The count: from the kept figures, or, with a text filter, counted over the round's items.
  const total = q
    ? db.get<{ n: number }>(
        sql`SELECT count(*) AS n FROM screening_round_items ri JOIN visible_screening_items i ON i.id = ri.item_id
          LEFT JOIN visible_screening_labels l ON l.item_id = i.id
          WHERE ri.round_id = ${row.id} AND ${showSql} AND ${qSql}`,
      )!.n
    : show === "included"
      ? f.included
      : show === "controls"
        ? f.controls
        : show === "included-controls"
          ? f.includedControls
          : f.items;
  const cut = finishWindow(w, fetched, total, (r): Cursor =>
    byPosition ? [r.position, r.roundItemId] : [r.externalId, r.itemId],
  );
  const controlsIn = db.all<RoundItemRow>(
    sql`SELECT ${columns} FROM screening_round_items ri JOIN visible_screening_items i ON i.id = ri.item_id
      LEFT JOIN visible_screening_labels l ON l.item_id = i.id
      WHERE ri.round_id = ${row.id} AND ri.is_control = 1 AND ${included} ORDER BY ri.position`,
  );
  // The votes of the rows shown, in the reviewers' order: each row's tally is the core's (tallyItem).
  const shownIds = [...new Set([...cut.rows, ...controlsIn].map((r) => r.roundItemId))];
  const votes = new Map<
    number,
    {
      reviewer: string;
      relevant: boolean;
      category: string | null;
      confidence: ReviewConfidence | null;
      notes: string;
    }[]
  >();
  for (const v of shownIds.length
    ? db
        .select({
          roundItemId: screeningVotes.roundItemId,
          reviewer: screeningVotes.reviewerId,
          relevant: screeningVotes.relevant,
          category: screeningVotes.category,
          confidence: screeningVotes.confidence,
          notes: screeningVotes.notes,
        })
        .from(screeningVotes)
        .where(and(inArray(screeningVotes.roundItemId, shownIds), eq(screeningVotes.status, "submitted")))
        .all()
    : []) {
    const list = votes.get(v.roundItemId) ?? [];
    list.push({
      reviewer: v.reviewer,
      relevant: Boolean(v.relevant),
      category: v.category,
      confidence: (v.confidence as ReviewConfidence | null) ?? null,
      notes: v.notes,
    });
    votes.set(v.roundItemId, list);
  }
  const view = (i: RoundItemRow) => {
    const its = (votes.get(i.roundItemId) ?? []).sort(
      (a, b) => (rank.get(a.reviewer) ?? 1e9) - (rank.get(b.reviewer) ?? 1e9),
    );
    const t = tallyItem(its, row.inclusionVotes);
    return {
      id: i.externalId,
      position: i.position,
      isControl: Boolean(i.isControl),
      stratum: i.stratum,
      screenCategory: i.category ?? null,
      yes: t.yes,
      no: t.no,
      included: t.included,
      // Until the round closes an item's votes are still coming in: its outcome is pending, not "excluded".
      outcome:
        row.status === "closed" ? (t.included ? ("included" as const) : ("excluded" as const)) : ("pending" as const),
      consensusTier: t.consensusTier,
      modalCategory: t.modalCategory,
      votes: its.map((v) => ({
        reviewer: byId.get(v.reviewer)?.code ?? codes.get(v.reviewer) ?? "?",
        relevant: v.relevant,
        category: v.category,
        confidence: v.confidence,
        notes: v.notes,
      })),
    };
  };
  return {
    study: { id: study.id, name: study.name },
    round: roundView(data),
    includedControls: controlsIn.map(view),
    window: { ...cut, rows: cut.rows.map(view) },
  };
}
