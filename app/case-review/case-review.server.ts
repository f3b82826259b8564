/**
 * MentalBench-style generated-case review (docs/case-review.md): review sets of generated cases and seeds, the expert
 * panel, the experts' reviews (three 5-point scores for a case; accept or reject with a reason for a seed), drafts,
 * atomic submission, revisions and audit, and the report (core/case-review).
 *
 * Blinding: an expert loads only their own review (getRaterItem, listRaterItems); other experts' reviews, the report
 * and the seed outcomes are admin-only. Every rater query is scoped by panel membership and the rater's id.
 */
import { and, asc, count, eq, inArray, sql } from "drizzle-orm";
import { createHash } from "node:crypto";
import { reviewItems, reviewJudgements, reviewSetRaters, reviewSets, users } from "../../db/schema";
import { visibleReviewItems, visibleReviewSets } from "../../db/schema-visible";
import {
  checkReview,
  reviewItemsOf,
  reviewReport,
  type ReviewItemInput,
  type ReviewReport,
  type ReviewRow,
} from "./domain/case-review";
import { importItemFile, planCounts, type ItemPlan, type ItemStore } from "../expert-panel/item-import.server";
import { type HiddenParent } from "../platform/hidden-parents.server";
import { textSource, type ImportSource } from "../formats/import-source";
import type { CsvIssue } from "../expert-panel/domain/expert-csv";
import type { ExpertWorkState, ReviewItemKind } from "../expert-panel/domain/expert-scales";
import type { Db, DbOrTx } from "../platform/db.server";
import { recordEvent } from "../audit/audit.server";
import {
  countSubmitted,
  expertPanel,
  panelStore,
  requireByName,
  type PanelMember,
} from "../expert-panel/expert-panel.server";
import { nextOpenItem, previousItem, progressOf, type SaveResult } from "../work-items/domain/work-item";
import { saveWorkItem, updateAtVersion, type WorkItemAdapter } from "../work-items/engine.server";
import { StudyNameSchema } from "../annotation/public.server";
import { finishWindow, prefixRange, readWindow, type ListWindow, type WindowSpec } from "../platform/list-window";
import { keyset } from "../platform/list-window.server";

export interface ReviewSetSummary {
  id: number;
  name: string;
  numCases: number;
  numSeeds: number;
  numRaters: number;
  numSubmitted: number;
  createdAt: number;
}

const SET_PANEL = panelStore("review_set", {
  table: reviewSetRaters,
  group: reviewSetRaters.setId,
  rater: reviewSetRaters.raterId,
  key: "setId",
});

/** Where the reviews are kept, for the set summaries' counts. */
const REVIEW_WORK = { table: reviewJudgements, item: reviewJudgements.itemId, status: reviewJudgements.status };

export function listReviewSets(db: Db): ReviewSetSummary[] {
  return db
    .select()
    .from(visibleReviewSets)
    .orderBy(asc(visibleReviewSets.name))
    .all()
    .map((s) => summariseReviewSet(db, s));
}

function summariseReviewSet(db: Db, s: typeof visibleReviewSets.$inferSelect): ReviewSetSummary {
  const items = db
    .select({ id: visibleReviewItems.id, kind: visibleReviewItems.kind })
    .from(visibleReviewItems)
    .where(eq(visibleReviewItems.setId, s.id))
    .all();
  return {
    id: s.id,
    name: s.name,
    numCases: items.filter((i) => i.kind === "case").length,
    numSeeds: items.filter((i) => i.kind === "seed").length,
    numRaters: SET_PANEL.memberIds(db, s.id).size,
    numSubmitted: countSubmitted(
      db,
      REVIEW_WORK,
      items.map((i) => i.id),
    ),
    createdAt: s.createdAt,
  };
}

export const REVIEW_SETS_WINDOW = {
  prefix: "s_",
  sorts: ["name"],
  defaultSort: "name",
  filters: ["q"],
} as const satisfies WindowSpec<string, string>;

/**
 * A window of the review sets (docs/architecture.md, "Pages are windows"): by name (its unique index) with a
 * name-prefix filter, parameters prefixed `s_`; only the window's sets are summarised.
 */
export function reviewSetsWindow(db: Db, params: URLSearchParams): ListWindow<ReviewSetSummary, "name", "q"> {
  const w = readWindow(params, REVIEW_SETS_WINDOW, 2);
  const [lo, hi] = prefixRange(w.filters.q);
  const filter = w.filters.q
    ? sql`${visibleReviewSets.name} >= ${lo} and ${visibleReviewSets.name} < ${hi}`
    : undefined;
  const k = keyset(w, [visibleReviewSets.name, visibleReviewSets.id]);
  const rows = db
    .select()
    .from(visibleReviewSets)
    .where(and(filter, k.where))
    .orderBy(...k.orderBy)
    .limit(k.limit)
    .all()
    .map((s) => summariseReviewSet(db, s));
  const total = db.select({ n: count() }).from(visibleReviewSets).where(filter).get()!.n;
  return finishWindow(w, rows, total, (r) => [r.name, r.id]);
}

export function getReviewSet(db: Db, id: number): ReviewSetSummary | null {
  const s = db.select().from(visibleReviewSets).where(eq(visibleReviewSets.id, id)).get();
  return s ? summariseReviewSet(db, s) : null;
}

export function requireReviewSetByName(db: Db, name: string): ReviewSetSummary {
  return requireByName(listReviewSets(db), name, { what: "review set", plural: "Sets", field: "set" });
}

export type ReviewImportResult =
  | { ok: false; errors: CsvIssue[]; warnings: CsvIssue[] }
  | {
      ok: true;
      setId: number | null;
      setName: string;
      created: number;
      updated: number;
      unchanged: number;
      total: number;
      warnings: CsvIssue[];
      written: boolean;
    };

function itemHash(i: { kind: string; text: string; caseType: string; diagnosis: string; seedId: string }): string {
  return createHash("sha256")
    .update(JSON.stringify([i.kind, i.text, i.caseType, i.diagnosis, i.seedId]))
    .digest("hex");
}

type ReviewItemRecord = typeof reviewItems.$inferSelect;

function reviewItemStore(setId: number, now: number): ItemStore<ReviewItemInput, ReviewItemRecord> {
  const values = (p: ItemPlan<ReviewItemInput, ReviewItemRecord>) => ({
    kind: p.item.kind,
    text: p.item.text,
    caseType: p.item.caseType,
    diagnosis: p.item.diagnosis,
    seedId: p.item.seedId,
    contentHash: p.hash,
    position: p.position,
  });
  return {
    entity: "review_item",
    setPosition: (tx, id, position) => tx.update(reviewItems).set({ position }).where(eq(reviewItems.id, id)).run(),
    create: (tx, p, importRun) =>
      tx
        .insert(reviewItems)
        .values({ setId, externalId: p.item.externalId, ...values(p), createdAt: now, importRun })
        .returning({ id: reviewItems.id })
        .get().id,
    update: (tx, p, old) => tx.update(reviewItems).set(values(p)).where(eq(reviewItems.id, old.id)).run(),
    createdChanges: (p) => ({ externalId: p.item.externalId, kind: p.item.kind, contentHash: p.hash }),
    audited: (p, old) => [
      { contentHash: old.contentHash, position: old.position },
      { contentHash: p.hash, position: p.position },
    ],
  };
}

/**
 * Imports a case file into a review set (created if needed), all or nothing: the file is validated whole, and an item
 * that already has reviews cannot change. Items are matched by id; positions follow the file.
 */
export function importReviewSet(
  db: Db,
  input: {
    setName: string;
    /** The CSV: a text (a page's upload) or a file streamed through the import contract (app/cli/io.ts). */
    text: string | ImportSource;
    actorId: string | null;
    dryRun?: boolean;
    now?: number;
    /** For tests: the chunks' lock budget, and a call after each committed chunk (a new set). */
    chunkBudgetMs?: number;
    onChunk?: (done: number) => void;
  },
): ReviewImportResult {
  const name = StudyNameSchema.safeParse(input.setName);
  if (!name.success) return { ok: false, errors: [{ line: 0, message: name.error.issues[0]!.message }], warnings: [] };
  const now = input.now ?? Date.now();
  const rules = (tx: DbOrTx) => ({
    hash: itemHash,
    hasWork: (id: number) =>
      Boolean(
        tx.select({ id: reviewJudgements.id }).from(reviewJudgements).where(eq(reviewJudgements.itemId, id)).get(),
      ),
    locked: (externalId: string) =>
      `case "${externalId}" already has reviews and cannot change. Give the changed case a new id.`,
  });
  const text = input.text;

  // Read in two passes, checked whole and then written; outside a dry run and a caller's transaction (the demo
  // seed) in the import run's short transactions, a new set behind the hidden set and new cases of an existing one
  // hidden by the run's id (docs/reliability.md, "Bulk imports"; app/expert-panel/item-import.server.ts).
  return importItemFile<ReviewItemInput, ReviewItemRecord, { id: number }, ReviewImportResult>(db, REVIEW_SET_PARENT, {
    name: name.data,
    what: "review set",
    find: (tx) => findSet(tx, name.data),
    insert: (tx, runId) =>
      tx
        .insert(reviewSets)
        .values({ name: name.data, createdAt: now, importRun: runId })
        .returning({ id: reviewSets.id })
        .get(),
    existing: setItems,
    store: (setId) => reviewItemStore(setId, now),
    file: {
      source: typeof text === "string" ? textSource(text) : text,
      read: (report) => reviewItemsOf(text, report),
    },
    rules,
    opened: (tx, setId, set) => {
      if (!set) recordSetCreated(tx, setId, name.data, input.actorId, now);
    },
    result: (setId, plan, _set, written, warnings) => ({
      ok: true,
      setId,
      setName: name.data,
      ...planCounts(plan, warnings),
      written,
    }),
    now,
    input,
  });
}

/** A set an import is still writing is hidden from every reader (docs/reliability.md, "Bulk imports"). */
const findSet = (db: DbOrTx, name: string) =>
  db.select().from(visibleReviewSets).where(eq(visibleReviewSets.name, name)).get();

/** A set's items, without those an import is still adding (docs/reliability.md, "Bulk imports"). */
const setItems = (db: DbOrTx, setId: number) =>
  db.select().from(visibleReviewItems).where(eq(visibleReviewItems.setId, setId)).all();

function recordSetCreated(tx: DbOrTx, setId: number, name: string, actorId: string | null, now: number) {
  recordEvent(tx, { actorId, entity: "review_set", entityId: setId, action: "create", changes: { name }, at: now });
}

/** A new set hidden by its import, and what the import writes under it (removed when the import fails or dies). */
export const REVIEW_SET_PARENT: HiddenParent = {
  table: "review_sets",
  children: ["delete from review_items where id in (select id from review_items where set_id = ? limit 2000)"],
};

const PANEL = expertPanel(SET_PANEL, "setId", {
  refusal: "Only active users with the rater role can review cases.",
  removed: "Removed from the panel; submitted reviews are kept.",
});

/** Every user with the rater role, with their membership and progress on this set (admin view). */
export function listReviewPanel(db: Db, setId: number): PanelMember[] {
  const judgements = db
    .select({ raterId: reviewJudgements.raterId, status: reviewJudgements.status })
    .from(reviewJudgements)
    .innerJoin(visibleReviewItems, eq(visibleReviewItems.id, reviewJudgements.itemId))
    .where(eq(visibleReviewItems.setId, setId))
    .all();
  return PANEL.list(db, setId, judgements);
}

/** Adds experts (users with the rater role) to a set's panel; members already on it are left alone. */
export const addReviewRaters = PANEL.add;

/** Takes an expert off a set's panel; the reviews they submitted stay. */
export const removeReviewRater = PANEL.remove;

/** The set page's add or remove of one expert, with the message to show. */
export const changeReviewPanel = PANEL.change;

// ---------------------------------------------------------------------------------------------------------------
// The expert's side

export interface RaterItemRow {
  itemId: number;
  setId: number;
  setName: string;
  externalId: string;
  position: number;
  kind: ReviewItemKind;
  state: ExpertWorkState;
  updatedAt: number | null;
}

export function listRaterItems(db: Db, userId: string): RaterItemRow[] {
  return db
    .select({
      itemId: visibleReviewItems.id,
      setId: visibleReviewSets.id,
      setName: visibleReviewSets.name,
      externalId: visibleReviewItems.externalId,
      position: visibleReviewItems.position,
      kind: visibleReviewItems.kind,
      status: reviewJudgements.status,
      updatedAt: reviewJudgements.updatedAt,
    })
    .from(reviewSetRaters)
    .innerJoin(visibleReviewSets, eq(visibleReviewSets.id, reviewSetRaters.setId))
    .innerJoin(visibleReviewItems, eq(visibleReviewItems.setId, visibleReviewSets.id))
    .leftJoin(
      reviewJudgements,
      and(eq(reviewJudgements.itemId, visibleReviewItems.id), eq(reviewJudgements.raterId, userId)),
    )
    .where(eq(reviewSetRaters.raterId, userId))
    .orderBy(asc(visibleReviewSets.name), asc(visibleReviewItems.position))
    .all()
    .map(({ status, ...r }) => ({
      ...r,
      kind: r.kind as ReviewItemKind,
      state: (status ?? "not_started") as ExpertWorkState,
    }));
}

// The review's values: one schema for the page and the server (app/case-review/domain/review-values.ts).
import { ReviewValuesSchema, type ReviewValues } from "./domain/review-values";
export { ReviewValuesSchema, type ReviewValues };

export interface RaterItemView {
  item: {
    id: number;
    externalId: string;
    setName: string;
    kind: ReviewItemKind;
    text: string;
    caseType: string;
    /** The diagnosis (or answer set) a case was generated for, shown with the validity scale; null for a seed. */
    targetDiagnosis: string | null;
  };
  state: ExpertWorkState;
  values: ReviewValues;
  version: number;
  updatedAt: number | null;
  nextItemId: number | null;
  previousItemId: number | null;
  progress: { done: number; total: number };
}

function findOwnedItem(db: DbOrTx, userId: string, itemId: number) {
  return db
    .select({
      id: visibleReviewItems.id,
      setId: visibleReviewSets.id,
      setName: visibleReviewSets.name,
      externalId: visibleReviewItems.externalId,
      kind: visibleReviewItems.kind,
      text: visibleReviewItems.text,
      caseType: visibleReviewItems.caseType,
      diagnosis: visibleReviewItems.diagnosis,
    })
    .from(visibleReviewItems)
    .innerJoin(visibleReviewSets, eq(visibleReviewSets.id, visibleReviewItems.setId))
    .innerJoin(
      reviewSetRaters,
      and(eq(reviewSetRaters.setId, visibleReviewSets.id), eq(reviewSetRaters.raterId, userId)),
    )
    .where(eq(visibleReviewItems.id, itemId))
    .get();
}

function valuesOf(row: typeof reviewJudgements.$inferSelect | undefined): ReviewValues {
  return {
    naturalness: row?.naturalness ?? null,
    validity: row?.validity ?? null,
    realism: row?.realism ?? null,
    decision: row?.decision ?? null,
    reason: row?.reason ?? "",
    comment: row?.comment ?? "",
  };
}

/**
 * One item for an expert, with their own review only; null when it is not theirs. A case's target diagnosis is
 * shown, because the diagnostic-validity scale asks whether the case is consistent with the diagnostic criteria of
 * the diagnosis it was generated for (docs/decisions/0009-target-diagnosis-for-validity.md); a seed has none.
 */
export function getRaterItem(db: Db, input: { userId: string; itemId: number }): RaterItemView | null {
  const item = findOwnedItem(db, input.userId, input.itemId);
  if (!item) return null;
  const row = db
    .select()
    .from(reviewJudgements)
    .where(and(eq(reviewJudgements.itemId, item.id), eq(reviewJudgements.raterId, input.userId)))
    .get();
  const mine = listRaterItems(db, input.userId);
  const at = mine.findIndex((r) => r.itemId === item.id);
  return {
    item: {
      id: item.id,
      externalId: item.externalId,
      setName: item.setName,
      kind: item.kind as ReviewItemKind,
      text: item.text,
      caseType: item.caseType,
      targetDiagnosis: item.kind === "case" && item.diagnosis.trim() !== "" ? item.diagnosis : null,
    },
    state: (row?.status ?? "not_started") as ExpertWorkState,
    values: valuesOf(row),
    version: row?.version ?? 0,
    updatedAt: row?.updatedAt ?? null,
    nextItemId: nextOpenItem(mine, at)?.itemId ?? null,
    previousItemId: previousItem(mine, at)?.itemId ?? null,
    progress: progressOf(mine),
  };
}

export type ReviewSaveResult = SaveResult;

type OwnedItem = NonNullable<ReturnType<typeof findOwnedItem>>;
type JudgementRow = typeof reviewJudgements.$inferSelect;

/** The case-review workspace's adapter of the work-item engine (docs/architecture.md, "The work-item engine"). */
const reviewWork: WorkItemAdapter<OwnedItem, JudgementRow, ReviewValues> = {
  entity: "review_judgement",
  noun: "review",
  find: findOwnedItem,
  guidelines: (item) => ({ scope: "review_set", scopeId: item.setId }),
  row: (tx, userId, item) =>
    tx
      .select()
      .from(reviewJudgements)
      .where(and(eq(reviewJudgements.itemId, item.id), eq(reviewJudgements.raterId, userId)))
      .get(),
  meta: (r) => ({ id: r.id, state: r.status, version: r.version, savedAt: r.updatedAt }),
  valuesOf: (row) => valuesOf(row),
  // A case has no decision and a seed no scores: keep only the fields of the item's kind.
  normalise: (v, item) =>
    item.kind === "case"
      ? { ...v, decision: null, reason: "" }
      : { ...v, naturalness: null, validity: null, realism: null, reason: v.decision === "reject" ? v.reason : "" },
  check(_tx, item, values) {
    const kind = item.kind as ReviewItemKind;
    const errors = checkReview(kind, values);
    if (!Object.keys(errors).length) return { ok: true, values };
    return {
      ok: false,
      message:
        kind === "case"
          ? "Score all three dimensions before submitting."
          : "Accept or reject the seed (with a reason when rejecting).",
      errors: errors as Record<string, string>,
    };
  },
  audited: (v) => ({ ...v }),
  freeText: ["reason", "comment"],
  write(tx, { item, row, userId, values, status, version, now }) {
    const columns = {
      ...values,
      status,
      updatedAt: now,
      version,
      submittedAt: status === "submitted" ? now : (row?.submittedAt ?? null),
    };
    if (!row)
      return tx
        .insert(reviewJudgements)
        .values({ itemId: item.id, raterId: userId, ...columns })
        .returning({ id: reviewJudgements.id })
        .get().id;
    return updateAtVersion(tx, reviewJudgements, row.id, row.version, columns) ? row.id : null;
  },
};

/**
 * Saves an expert's review: a draft (before the first submission) or a submission (a case needs its three scores,
 * a seed a decision and, on reject, a reason), which may be revised later. Optimistic concurrency by `version`;
 * every change is audited in the same IMMEDIATE transaction (free text recorded as changed, not copied).
 */
export function saveReview(
  db: Db,
  input: {
    userId: string;
    itemId: number;
    values: ReviewValues;
    version: number;
    intent: "draft" | "submit";
    now?: number;
    activeMs?: number;
  },
): ReviewSaveResult {
  return saveWorkItem(db, reviewWork, input);
}

// ---------------------------------------------------------------------------------------------------------------
// Admin: items and report

export interface ReviewItemRow {
  id: number;
  externalId: string;
  position: number;
  kind: ReviewItemKind;
  caseType: string;
  diagnosis: string;
  seedId: string;
  submitted: number;
}

export function listReviewItems(db: Db, setId: number): ReviewItemRow[] {
  const items = db
    .select()
    .from(visibleReviewItems)
    .where(eq(visibleReviewItems.setId, setId))
    .orderBy(asc(visibleReviewItems.position))
    .all();
  const submitted = items.length
    ? db
        .select({ itemId: reviewJudgements.itemId })
        .from(reviewJudgements)
        .where(
          and(
            inArray(
              reviewJudgements.itemId,
              items.map((i) => i.id),
            ),
            eq(reviewJudgements.status, "submitted"),
          ),
        )
        .all()
    : [];
  return items.map((i) => ({
    id: i.id,
    externalId: i.externalId,
    position: i.position,
    kind: i.kind as ReviewItemKind,
    caseType: i.caseType,
    diagnosis: i.diagnosis,
    seedId: i.seedId,
    submitted: submitted.filter((s) => s.itemId === i.id).length,
  }));
}

/** The report of a set from its submitted reviews (core/case-review reviewReport); experts named by username. */
export function getReviewReport(
  db: Db,
  setId: number,
  options: { weights?: "linear" | "quadratic" } = {},
): ReviewReport {
  const items = db
    .select({ id: visibleReviewItems.id, externalId: visibleReviewItems.externalId, kind: visibleReviewItems.kind })
    .from(visibleReviewItems)
    .where(eq(visibleReviewItems.setId, setId))
    .all();
  const rows: ReviewRow[] = db
    .select({
      item: visibleReviewItems.externalId,
      rater: users.username,
      naturalness: reviewJudgements.naturalness,
      validity: reviewJudgements.validity,
      realism: reviewJudgements.realism,
      decision: reviewJudgements.decision,
      reason: reviewJudgements.reason,
    })
    .from(reviewJudgements)
    .innerJoin(visibleReviewItems, eq(visibleReviewItems.id, reviewJudgements.itemId))
    .innerJoin(users, eq(users.id, reviewJudgements.raterId))
    .where(and(eq(visibleReviewItems.setId, setId), eq(reviewJudgements.status, "submitted")))
    .all();
  return reviewReport(
    items.map((i) => ({ id: i.externalId, kind: i.kind as ReviewItemKind })),
    rows,
    options,
  );
}
