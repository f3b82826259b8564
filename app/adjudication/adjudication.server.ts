/**
 * The senior adjudicator's side (docs/safe-psych.md, "Disagreement and adjudication"): a queue of disputed cases they did not annotate, blinded two-phase
 * adjudication (an independent judgement first, then the two annotations revealed as "Annotator A/B"), and a final
 * decision that becomes the gold label. Annotator identities never leave this module; the A/B order is the one drawn
 * when the dispute arose (case_outcomes.annotator_order).
 */
import { saveWorkItem, updateAtVersion, type WorkItemAdapter } from "../work-items/engine.server";
import { WORK_MESSAGES, type SaveRefusal, type SaveResult } from "../work-items/domain/work-item";
import { and, asc, desc, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import {
  adjudicationDrafts,
  adjudications,
  annotations,
  assignments,
  caseOutcomes,
  type AdjudicationMode,
} from "../../db/schema";
import { visibleCases, visibleStudies } from "../../db/schema-visible";
import type { CaseLabel } from "../labels/labels";
import { checkLabelValues, LabelValuesSchema } from "../labels/label-values";
import {
  AdjudicationValuesSchema,
  rationaleMissing,
  RATIONALE_REQUIRED,
  type AdjudicationValues,
} from "./domain/adjudication-values";
import { type DisputeReason } from "../gold/public";
import type { Db, DbOrTx } from "../platform/db.server";
import { icd10Index } from "../icd10/icd10.server";
import { latestCaseEvent } from "../audit/audit.server";
import { labelOfAnnotation } from "../gold/public.server";
import { getCaseSections, settleDueLocks } from "../annotation/public.server";

// The label's fields and the form's values: one schema for the page and the server
// (app/adjudication/domain/adjudication-values.ts).
export const LabelInputSchema = LabelValuesSchema;
export type LabelInput = z.infer<typeof LabelInputSchema>;

export interface QueueRow {
  caseId: number;
  externalId: string;
  studyName: string;
  reason: DisputeReason;
  disputedAt: number;
  numSections: number;
  mine: "none" | "independent_recorded";
  /** An admin reopened an earlier decision of this case: it is back in the queue (docs/safe-psych.md, "Reopening"). */
  reopened: boolean;
}

/** The queue's figures for the list page: decisions this adjudicator made (and not reopened), and cases waiting. */
export function adjudicationProgress(db: Db, userId: string, queue: QueueRow[]): { done: number; total: number } {
  const done = db
    .select({ caseId: adjudications.caseId })
    .from(adjudications)
    .where(and(eq(adjudications.adjudicatorId, userId), eq(adjudications.status, "decided")))
    .all().length;
  return { done, total: done + queue.length };
}

/**
 * This adjudicator's earlier work on a case that was decided and then reopened (or decided by someone else while
 * theirs was in progress): they have seen the two annotations already, so a new "independent" step would not be
 * independent. Their earlier independent judgement stands and they revise the decision instead.
 */
function earlierWork(db: DbOrTx, userId: string, caseId: number) {
  return (
    db
      .select()
      .from(adjudications)
      .where(
        and(
          eq(adjudications.caseId, caseId),
          eq(adjudications.adjudicatorId, userId),
          inArray(adjudications.status, ["reopened", "superseded"]),
        ),
      )
      .orderBy(asc(adjudications.id))
      .all()
      .at(-1) ?? null
  );
}

/** The admin's latest reopening of a case: when and why (recorded in the audit trail with the reopen). */
function lastReopen(db: DbOrTx, caseId: number): { at: number; reason: string } | null {
  const e = latestCaseEvent(db, { caseId, entity: "case_outcome", action: "reopen" });
  if (!e) return null;
  const reason = e.changes.reason;
  return { at: e.at, reason: typeof reason === "string" ? reason : "" };
}

/** Case ids the user annotated (was assigned to): never theirs to adjudicate. */
function ownCaseIds(db: DbOrTx, userId: string): Set<number> {
  return new Set(
    db
      .select({ caseId: assignments.caseId })
      .from(assignments)
      .where(eq(assignments.annotatorId, userId))
      .all()
      .map((r) => r.caseId),
  );
}

export function listAdjudicationQueue(db: Db, userId: string): QueueRow[] {
  // A pair whose grace period is over is locked and its dispute rule run before the queue is read.
  settleDueLocks(db);
  const own = ownCaseIds(db, userId);
  const rows = db
    .select({
      caseId: visibleCases.id,
      externalId: visibleCases.externalId,
      studyName: visibleStudies.name,
      reason: caseOutcomes.disputeReason,
      disputedAt: caseOutcomes.disputedAt,
      numSections: visibleCases.numSections,
    })
    .from(caseOutcomes)
    .innerJoin(visibleCases, eq(visibleCases.id, caseOutcomes.caseId))
    .innerJoin(visibleStudies, eq(visibleStudies.id, visibleCases.studyId))
    .where(eq(caseOutcomes.status, "disputed"))
    .orderBy(asc(caseOutcomes.disputedAt), asc(visibleCases.position))
    .all()
    .filter((r) => !own.has(r.caseId));
  const mine = new Set(
    db
      .select({ caseId: adjudications.caseId })
      .from(adjudications)
      .where(and(eq(adjudications.adjudicatorId, userId), eq(adjudications.status, "in_progress")))
      .all()
      .map((r) => r.caseId),
  );
  const reopened = new Set(
    db
      .select({ caseId: adjudications.caseId })
      .from(adjudications)
      .where(eq(adjudications.status, "reopened"))
      .all()
      .map((r) => r.caseId),
  );
  return rows.map((r) => ({
    ...r,
    reason: r.reason as DisputeReason,
    disputedAt: r.disputedAt ?? 0,
    mine: mine.has(r.caseId) ? "independent_recorded" : "none",
    reopened: reopened.has(r.caseId),
  }));
}

export interface AnnotationShown {
  label: CaseLabel;
  notes: string;
}

export interface AdjudicationView {
  case: {
    id: number;
    externalId: string;
    studyName: string;
    sections: { order: number; kind: string; content: string }[];
  };
  /**
   * Why the case is disputed: derived from the annotations, so left out while the independent judgement is still to be
   * made (docs/safe-psych.md, "Disagreement and adjudication": the independent step is blind).
   */
  reason?: DisputeReason;
  mode: AdjudicationMode;
  /** `independent`: record your own judgement first; `reveal`: the annotations are shown; `decided`: done. */
  phase: "independent" | "reveal" | "decided";
  independent: CaseLabel | null;
  final: { label: CaseLabel; rationale: string } | null;
  /** Only from the reveal phase on (or from the start in reveal-only mode). Never identities. */
  annotations: { A: AnnotationShown; B: AnnotationShown } | null;
  outcomeVersion: number;
  /** The adjudicator's saved draft of the step now open (independent judgement or decision), if any. */
  draft: { values: AdjudicationDraftValues; version: number; updatedAt: number } | null;
  /** The next case in this adjudicator's queue, or null when this is the only one. */
  nextCaseId: number | null;
  /** The case before this one in the queue (wrapping around), or null. */
  previousCaseId: number | null;
  /** The queue's figures: decided by this adjudicator, and in all (decided + waiting). */
  progress: { done: number; total: number };
  /**
   * The admin's reopening of an earlier decision, when the case is back in the queue. Its reason is shown once the
   * independent judgement is out of the way (it may speak of the annotations), or at once to an adjudicator revising.
   */
  reopened: { at: number; reason: string | null } | null;
  /**
   * This adjudicator decided (or judged) the case before it was reopened and has seen the annotations: no new
   * independent step; `previous` is the decision they made, the form starts from it.
   */
  revision: { previous: { label: CaseLabel; rationale: string } | null } | null;
}

/**
 * The case as this adjudicator may see it, or null: not disputed (and not decided by them), or a case they annotated.
 */
export function getAdjudicationCase(db: Db, input: { userId: string; caseId: number }): AdjudicationView | null {
  settleDueLocks(db);
  if (ownCaseIds(db, input.userId).has(input.caseId)) return null;
  const outcome = db
    .select({
      status: caseOutcomes.status,
      reason: caseOutcomes.disputeReason,
      order: caseOutcomes.annotatorOrder,
      version: caseOutcomes.version,
      mode: visibleStudies.adjudicationMode,
      externalId: visibleCases.externalId,
      studyName: visibleStudies.name,
    })
    .from(caseOutcomes)
    .innerJoin(visibleCases, eq(visibleCases.id, caseOutcomes.caseId))
    .innerJoin(visibleStudies, eq(visibleStudies.id, visibleCases.studyId))
    .where(eq(caseOutcomes.caseId, input.caseId))
    .get();
  if (!outcome || !outcome.reason) return null;
  const mine = db
    .select()
    .from(adjudications)
    .where(
      and(
        eq(adjudications.caseId, input.caseId),
        eq(adjudications.adjudicatorId, input.userId),
        inArray(adjudications.status, ["in_progress", "decided"]),
      ),
    )
    .orderBy(asc(adjudications.id))
    .all()
    .at(-1);
  if (outcome.status !== "disputed" && mine?.status !== "decided") return null;
  const earlier = outcome.status === "disputed" && !mine ? earlierWork(db, input.userId, input.caseId) : null;
  // Seen before: an earlier independent judgement (two-phase) or any earlier decision (the other modes).
  const revising = earlier && (outcome.mode !== "two_phase" || earlier.independentLabel) ? earlier : null;
  const independent = mine?.independentLabel ?? revising?.independentLabel ?? null;
  const phase: AdjudicationView["phase"] =
    mine?.status === "decided" && outcome.status === "adjudicated"
      ? "decided"
      : outcome.mode === "reveal_only" || independent
        ? "reveal"
        : "independent";
  let shown: AdjudicationView["annotations"] = null;
  if (phase !== "independent" && outcome.mode !== "independent_only") {
    const [a, b] = outcome.order as [number, number];
    const rows = db
      .select()
      .from(annotations)
      .where(inArray(annotations.id, [a, b]))
      .all();
    const byId = new Map(rows.map((r) => [r.id, r]));
    const show = (id: number): AnnotationShown => ({
      label: labelOfAnnotation(byId.get(id)!),
      notes: byId.get(id)!.notes,
    });
    shown = { A: show(a), B: show(b) };
  }
  const reopen = outcome.status === "disputed" ? lastReopen(db, input.caseId) : null;
  const queue = listAdjudicationQueue(db, input.userId);
  return {
    previousCaseId: neighbourInQueue(queue, input.caseId, -1),
    progress: adjudicationProgress(db, input.userId, queue),
    reopened: reopen && { at: reopen.at, reason: phase === "independent" ? null : reopen.reason },
    revision: revising
      ? {
          previous:
            revising.status === "reopened" && revising.finalLabel
              ? { label: revising.finalLabel, rationale: revising.rationale }
              : null,
        }
      : null,
    case: {
      id: input.caseId,
      externalId: outcome.externalId,
      studyName: outcome.studyName,
      sections: getCaseSections(db, input.caseId),
    },
    ...(phase === "independent" ? {} : { reason: outcome.reason as DisputeReason }),
    mode: outcome.mode,
    phase,
    independent,
    final: mine?.status === "decided" && mine.finalLabel ? { label: mine.finalLabel, rationale: mine.rationale } : null,
    annotations: shown,
    outcomeVersion: outcome.version,
    draft:
      phase === "decided"
        ? null
        : draftOf(
            db,
            input.userId,
            input.caseId,
            phase === "independent" && outcome.mode === "two_phase" ? "independent" : "decide",
          ),
    nextCaseId: neighbourInQueue(queue, input.caseId, 1),
  };
}

/**
 * The case after (`step` 1) or before (-1) `caseId` in the adjudicator's queue, wrapping around, skipping this one;
 * a case no longer in the queue (just decided) counts from the start.
 */
function neighbourInQueue(queue: QueueRow[], caseId: number, step: 1 | -1): number | null {
  const ordered = step === 1 ? queue : [...queue].reverse();
  const at = ordered.findIndex((r) => r.caseId === caseId);
  const after = [...ordered.slice(at + 1), ...ordered.slice(0, Math.max(at, 0))].find((r) => r.caseId !== caseId);
  return after?.caseId ?? null;
}

/** The next case of this adjudicator's queue to go on to after deciding `caseId`, or null when none is left. */
export function nextAfterDecision(db: Db, userId: string, caseId: number): number | null {
  return neighbourInQueue(listAdjudicationQueue(db, userId), caseId, 1);
}

// ---- Drafts: the adjudicator's work in progress, through the work-item engine ----

export const AdjudicationDraftSchema = AdjudicationValuesSchema;
export type AdjudicationDraftValues = AdjudicationValues;

type DraftStep = "independent" | "decide";

const EMPTY_DRAFT: AdjudicationDraftValues = {
  sufficiency: "",
  icd10: "",
  earliestSection: null,
  missingInfo: [],
  missingOther: "",
  rationale: "",
};

function draftOf(db: DbOrTx, userId: string, caseId: number, step: DraftStep): AdjudicationView["draft"] {
  const row = draftRow(db, userId, caseId, step);
  if (!row) return null;
  return { values: parseDraftValues(row.values), version: row.version, updatedAt: row.updatedAt };
}

function draftRow(db: DbOrTx, userId: string, caseId: number, step: DraftStep) {
  return db
    .select()
    .from(adjudicationDrafts)
    .where(
      and(
        eq(adjudicationDrafts.caseId, caseId),
        eq(adjudicationDrafts.adjudicatorId, userId),
        eq(adjudicationDrafts.step, step),
      ),
    )
    .get();
}

function parseDraftValues(json: string): AdjudicationDraftValues {
  const parsed = AdjudicationDraftSchema.safeParse(JSON.parse(json));
  return parsed.success ? parsed.data : EMPTY_DRAFT;
}

/** This adjudicator's adjudication of the case still in progress (its independent judgement recorded), if any. */
function judgementInProgress(tx: DbOrTx, userId: string, caseId: number) {
  return tx
    .select()
    .from(adjudications)
    .where(
      and(
        eq(adjudications.caseId, caseId),
        eq(adjudications.adjudicatorId, userId),
        eq(adjudications.status, "in_progress"),
      ),
    )
    .get();
}

/** The entity of an adjudicator's time on task on a case (`work_time.entity`; item: the case). */
export const ADJUDICATION_TIME = "adjudication";

type DraftItem = { caseId: number; studyId: number; step: DraftStep };
type DraftRow = typeof adjudicationDrafts.$inferSelect;

/**
 * The engine's adapter for adjudication drafts: the item is a disputed case this user may adjudicate, and the step
 * open for them decides which draft a save writes (the server decides it, never the page). Submissions do not go
 * through here: recording the judgement and deciding are `recordIndependent` and `decide`, which remove the draft.
 */
const draftAdapter: WorkItemAdapter<DraftItem, DraftRow, AdjudicationDraftValues> = {
  entity: "adjudication_draft",
  // The draft, the independent judgement and the decision are one piece of work on the case: one time on task.
  timeEntity: ADJUDICATION_TIME,
  noun: "draft",
  find(tx, userId, caseId) {
    const c = disputedCase(tx, userId, caseId);
    if (!c || c.status !== "disputed") return null;
    const independent = c.mode === "two_phase" && !judgementInProgress(tx, userId, caseId);
    return { caseId, studyId: c.studyId, step: independent ? "independent" : "decide" };
  },
  row: (tx, userId, item) => draftRow(tx, userId, item.caseId, item.step),
  meta: (row) => ({ id: row.id, state: "draft", version: row.version, savedAt: row.updatedAt }),
  valuesOf: (row) => (row ? parseDraftValues(row.values) : EMPTY_DRAFT),
  audited: (v, item) => ({ step: item.step, ...v }),
  freeText: ["missingOther", "rationale"],
  write(tx, w) {
    const values = JSON.stringify(w.values);
    if (!w.row)
      return tx
        .insert(adjudicationDrafts)
        .values({
          caseId: w.item.caseId,
          adjudicatorId: w.userId,
          step: w.item.step,
          values,
          version: w.version,
          updatedAt: w.now,
        })
        .returning({ id: adjudicationDrafts.id })
        .get().id;
    const ok = updateAtVersion(tx, adjudicationDrafts, w.row.id, w.row.version, {
      values,
      version: w.version,
      updatedAt: w.now,
    });
    return ok ? w.row.id : null;
  },
  auditContext: (item) => ({ studyId: item.studyId, caseId: item.caseId }),
};

/** Saves the adjudicator's draft of the step open for them (through the work-item engine: version, audit event). */
export function saveAdjudicationDraft(
  db: Db,
  input: {
    userId: string;
    caseId: number;
    values: AdjudicationDraftValues;
    version: number;
    now?: number;
    activeMs?: number;
  },
): SaveResult {
  return saveWorkItem(db, draftAdapter, {
    userId: input.userId,
    itemId: input.caseId,
    values: input.values,
    version: input.version,
    intent: "draft",
    now: input.now,
    activeMs: input.activeMs,
  });
}

/** Removes this adjudicator's drafts of the case (of one step, or all), in the transaction that records the step. */
function clearDrafts(tx: DbOrTx, userId: string, caseId: number, step?: DraftStep) {
  tx.delete(adjudicationDrafts)
    .where(
      and(
        eq(adjudicationDrafts.caseId, caseId),
        eq(adjudicationDrafts.adjudicatorId, userId),
        step ? eq(adjudicationDrafts.step, step) : undefined,
      ),
    )
    .run();
}

export type AdjudicationResult = { ok: true; status: "independent_recorded" | "decided" } | SaveRefusal;

const STALE =
  "Another adjudicator decided this case while you were working on it, so yours was not recorded and nothing was " +
  "overwritten. Your own label and rationale are still shown here to copy; the case has left your queue.";

const STALE_OWN_TAB =
  "You decided this case in another tab or window while this one was open, so this page's label was not recorded " +
  "and nothing was overwritten. Your label and rationale here are kept to copy; reload to see the decision.";

/**
 * The refusal for a case that is no longer open: decided in this adjudicator's own other tab, or by someone else
 * (two tabs of one person are not told about "another adjudicator").
 */
function staleRefusal(tx: DbOrTx, userId: string, caseId: number): SaveRefusal {
  const decidedBy = tx
    .select({ adjudicatorId: adjudications.adjudicatorId })
    .from(adjudications)
    .where(and(eq(adjudications.caseId, caseId), eq(adjudications.status, "decided")))
    .orderBy(desc(adjudications.id))
    .get();
  return { ok: false, status: 409, message: decidedBy?.adjudicatorId === userId ? STALE_OWN_TAB : STALE };
}

function checkLabel(input: LabelInput, numSections: number) {
  return checkLabelValues(input, numSections, (c) => icd10Index().isValidChapterVCode(c));
}

function disputedCase(tx: DbOrTx, userId: string, caseId: number) {
  if (ownCaseIds(tx, userId).has(caseId)) return null;
  return tx
    .select({
      studyId: visibleCases.studyId,
      numSections: visibleCases.numSections,
      status: caseOutcomes.status,
      version: caseOutcomes.version,
      mode: visibleStudies.adjudicationMode,
    })
    .from(caseOutcomes)
    .innerJoin(visibleCases, eq(visibleCases.id, caseOutcomes.caseId))
    .innerJoin(visibleStudies, eq(visibleStudies.id, visibleCases.studyId))
    .where(eq(caseOutcomes.caseId, caseId))
    .get();
}

/** Why a second independent judgement (another window, or a case this adjudicator judged before) is refused. */
export const INDEPENDENT_ALREADY_RECORDED =
  "Your independent judgement of this case is already recorded (in another window, or before the case was reopened). Reload the case to see the annotations and make the final decision.";

// ---- The judgement, the decision and the reopening: named steps of the work-item engine ----
//
// Each is one `saveWorkItem` (docs/architecture.md, "The work-item engine"): the engine's transaction, order of
// checks, version check and conflict wording, its audit event and its time on task. The version of every step is the
// case outcome's (`outcomeVersion`, read by the page): a decision, a reopening or a new decision of the case moves it
// on, so a page read before any of them changes nothing.

/** A disputed case as the adjudicator's steps see it; `closed` is why it takes no step now (the engine's 409). */
type StepCase = NonNullable<ReturnType<typeof disputedCase>> & { caseId: number; closed: string | null };

/** The case behind a step, with why it is closed to this adjudicator now (decided by them or another, …). */
function stepCase(tx: DbOrTx, userId: string, caseId: number, whyClosed: (c: StepCase) => string | null) {
  const c = disputedCase(tx, userId, caseId);
  if (!c) return null;
  const item: StepCase = { ...c, caseId, closed: null };
  item.closed = c.status !== "disputed" ? staleRefusalMessage(tx, userId, caseId) : whyClosed(item);
  return item;
}

/** The refusal's wording for a case no longer open (see staleRefusal): own other tab, or another adjudicator. */
function staleRefusalMessage(tx: DbOrTx, userId: string, caseId: number): string {
  return staleRefusal(tx, userId, caseId).message;
}

type JudgementRow = { version: number; recorded: boolean };
type JudgementValues = { label: LabelInput; checked?: CaseLabel };

/**
 * Phase 1's adapter: the adjudicator's own judgement, recorded once before the annotations are shown. The row is the
 * adjudicator's judgement of the case at the outcome's version; recorded (here, in another window, or before a
 * reopening) it is locked: changing it after seeing the annotations would defeat it.
 */
const independentStep: WorkItemAdapter<StepCase, JudgementRow, JudgementValues> = {
  entity: "adjudication",
  timeEntity: ADJUDICATION_TIME,
  noun: "case",
  lockedMessage: INDEPENDENT_ALREADY_RECORDED,
  find: (tx, userId, caseId) =>
    stepCase(tx, userId, caseId, (c) =>
      c.mode !== "two_phase" ? "This study does not use a separate independent phase." : null,
    ),
  closed: (c) => c.closed,
  guidelines: (c) => ({ scope: "safe_psych", scopeId: c.studyId }),
  row: (tx, userId, c) => ({
    version: c.version,
    recorded: !!judgementInProgress(tx, userId, c.caseId) || !!earlierWork(tx, userId, c.caseId)?.independentLabel,
  }),
  meta: (r) => ({ id: 0, state: r.recorded ? "locked" : "not_started", version: r.version, savedAt: null }),
  valuesOf: () => ({ label: LabelInputSchema.parse({}) }),
  check(_tx, c, values) {
    const check = checkLabel(values.label, c.numSections);
    if (!check.ok)
      return {
        ok: false,
        message: "Your judgement is incomplete or invalid; see the marked fields.",
        errors: check.errors,
      };
    return { ok: true, values: { ...values, checked: check.label } };
  },
  audited: (v) => ({ independent: v.checked ?? null }),
  write(tx, w) {
    const id = tx
      .insert(adjudications)
      .values({
        caseId: w.item.caseId,
        adjudicatorId: w.userId,
        mode: w.item.mode,
        status: "in_progress",
        independentLabel: w.values.checked!,
        independentAt: w.now,
        createdAt: w.now,
      })
      .returning({ id: adjudications.id })
      .get().id;
    clearDrafts(tx, w.userId, w.item.caseId, "independent");
    return id;
  },
  auditContext: (c) => ({ studyId: c.studyId, caseId: c.caseId }),
  step: { action: "independent", changes: (v) => ({ independent: [null, v.checked!] }) },
  // The judgement leaves the outcome as it was: the page's version stays the outcome's.
  onSubmitted: (_tx, c) => ({ version: c.version }),
};

/**
 * Phase 1: the adjudicator's own judgement, recorded before the annotations are shown (two-phase mode). In
 * independent-only mode this judgement is the decision, and `decide` is called by the route instead.
 * `outcomeVersion` is the outcome's version the page read (omitted: the version now, for callers that read no page).
 */
export function recordIndependent(
  db: Db,
  input: {
    userId: string;
    caseId: number;
    label: LabelInput;
    outcomeVersion?: number;
    now?: number;
    activeMs?: number;
  },
): AdjudicationResult {
  const result = saveWorkItem(db, independentStep, {
    userId: input.userId,
    itemId: input.caseId,
    values: { label: input.label },
    version: input.outcomeVersion ?? currentOutcomeVersion(db, input.caseId),
    intent: "submit",
    now: input.now,
    activeMs: input.activeMs,
  });
  return result.ok ? { ok: true, status: "independent_recorded" } : result;
}

function currentOutcomeVersion(db: DbOrTx, caseId: number): number {
  return (
    db.select({ version: caseOutcomes.version }).from(caseOutcomes).where(eq(caseOutcomes.caseId, caseId)).get()
      ?.version ?? 0
  );
}

type DecisionItem = StepCase & {
  /** This adjudicator's adjudication in progress (its independent judgement recorded), if any. */
  mine: ReturnType<typeof judgementInProgress>;
  /** Their earlier work on the case before a reopening, when none is in progress. */
  earlier: ReturnType<typeof earlierWork>;
  independentLabel: CaseLabel | null;
};
type DecisionValues = { label: LabelInput; rationale: string; checked?: CaseLabel };
type OutcomeRow = { version: number };

/**
 * Phase 2's adapter: the final decision, which becomes the gold label. The row is the case's outcome: the decision is
 * written only at the version the page read, so a second adjudicator never overwrites the first.
 */
const decisionStep: WorkItemAdapter<DecisionItem, OutcomeRow, DecisionValues> = {
  entity: "adjudication",
  timeEntity: ADJUDICATION_TIME,
  noun: "case",
  find(tx, userId, caseId) {
    let extra: Pick<DecisionItem, "mine" | "earlier" | "independentLabel"> = {
      mine: undefined,
      earlier: null,
      independentLabel: null,
    };
    const c = stepCase(tx, userId, caseId, (c) => {
      const mine = judgementInProgress(tx, userId, caseId);
      // A revision after a reopening: the judgement this adjudicator recorded before seeing the annotations stands.
      const earlier = mine ? null : earlierWork(tx, userId, caseId);
      extra = { mine, earlier, independentLabel: mine?.independentLabel ?? earlier?.independentLabel ?? null };
      return c.mode === "two_phase" && !extra.independentLabel ? "Record your independent judgement first." : null;
    });
    return c && { ...c, ...extra };
  },
  closed: (c) => c.closed,
  guidelines: (c) => ({ scope: "safe_psych", scopeId: c.studyId }),
  row: (_tx, _userId, c) => ({ version: c.version }),
  meta: (r) => ({ id: 0, state: "draft", version: r.version, savedAt: null }),
  valuesOf: () => ({ label: LabelInputSchema.parse({}), rationale: "" }),
  normalise: (v) => ({ ...v, rationale: v.rationale.trim() }),
  check(_tx, c, values) {
    const check = checkLabel(values.label, c.numSections);
    if (!check.ok)
      return {
        ok: false,
        message: "The decision is incomplete or invalid; see the marked fields.",
        errors: check.errors,
      };
    const missing = rationaleMissing(check.label, values.rationale, c.independentLabel, c.mode === "two_phase");
    if (missing)
      return {
        ok: false,
        message:
          missing === RATIONALE_REQUIRED
            ? "Give a rationale for the decision."
            : "Explain why the final label differs from your independent judgement.",
        errors: { rationale: missing },
      };
    return { ok: true, values: { ...values, checked: check.label } };
  },
  audited: (v) => ({ gold: v.checked ?? null }),
  write(tx, { item: c, userId, values, version, now }) {
    const label = values.checked!;
    const updated = tx
      .update(caseOutcomes)
      .set({ status: "adjudicated", gold: label, version, updatedAt: now })
      .where(and(eq(caseOutcomes.caseId, c.caseId), eq(caseOutcomes.version, c.version)))
      .run();
    if (updated.changes === 0) return null;
    let adjudicationId: number;
    if (c.mine) {
      tx.update(adjudications)
        .set({ status: "decided", finalLabel: label, rationale: values.rationale, decidedAt: now })
        .where(eq(adjudications.id, c.mine.id))
        .run();
      adjudicationId = c.mine.id;
    } else {
      adjudicationId = tx
        .insert(adjudications)
        .values({
          caseId: c.caseId,
          adjudicatorId: userId,
          mode: c.mode,
          status: "decided",
          independentLabel: c.mode === "independent_only" ? label : c.independentLabel,
          independentAt: c.mode === "independent_only" ? now : (c.earlier?.independentAt ?? null),
          finalLabel: label,
          rationale: values.rationale,
          decidedAt: now,
          createdAt: now,
        })
        .returning({ id: adjudications.id })
        .get().id;
    }
    tx.update(adjudications)
      .set({ status: "superseded" })
      .where(and(eq(adjudications.caseId, c.caseId), eq(adjudications.status, "in_progress")))
      .run();
    clearDrafts(tx, userId, c.caseId);
    return adjudicationId;
  },
  auditContext: (c) => ({ studyId: c.studyId, caseId: c.caseId }),
  step: { action: "decide", changes: (v) => ({ gold: [null, v.checked!], rationale: v.rationale }) },
};

/**
 * Phase 2: the final decision, which becomes the gold label. Refused when the case was decided by someone else since
 * the page was loaded (`outcomeVersion`), so a second adjudicator never overwrites the first.
 */
export function decide(
  db: Db,
  input: {
    userId: string;
    caseId: number;
    label: LabelInput;
    rationale: string;
    outcomeVersion: number;
    now?: number;
    activeMs?: number;
  },
): AdjudicationResult {
  const result = saveWorkItem(db, decisionStep, {
    userId: input.userId,
    itemId: input.caseId,
    values: { label: input.label, rationale: input.rationale },
    version: input.outcomeVersion,
    intent: "submit",
    now: input.now,
    activeMs: input.activeMs,
  });
  return result.ok ? { ok: true, status: "decided" } : result;
}

/** Why a reopen from a page read before the outcome last changed is refused: the engine's conflict wording. */
export const REOPEN_STALE = WORK_MESSAGES.changedElsewhere("decision");

type ReopenCase = typeof caseOutcomes.$inferSelect;

/**
 * The admin's reopening as an engine step: the item and its row are the case's outcome, open to a reopening while
 * adjudicated (anything else is "locked" to it), written only at the version the admin's page read.
 */
const reopenStep: WorkItemAdapter<ReopenCase, ReopenCase, { reason: string }> = {
  entity: "case_outcome",
  noun: "decision",
  lockedMessage: "Only an adjudicated case can be reopened.",
  find: (tx, _adminId, caseId) => tx.select().from(caseOutcomes).where(eq(caseOutcomes.caseId, caseId)).get(),
  row: (_tx, _adminId, o) => o,
  meta: (o) => ({
    id: o.caseId,
    state: o.status === "adjudicated" ? "submitted" : "locked",
    version: o.version,
    savedAt: o.updatedAt,
  }),
  valuesOf: () => ({ reason: "" }),
  audited: (v) => ({ reason: v.reason }),
  write(tx, { item: o, version, now }) {
    const updated = tx
      .update(caseOutcomes)
      .set({ status: "disputed", gold: null, version, disputedAt: now, updatedAt: now })
      .where(and(eq(caseOutcomes.caseId, o.caseId), eq(caseOutcomes.version, o.version)))
      .run();
    if (updated.changes === 0) return null;
    tx.update(adjudications)
      .set({ status: "reopened" })
      .where(and(eq(adjudications.caseId, o.caseId), eq(adjudications.status, "decided")))
      .run();
    return o.caseId;
  },
  auditContext: (o) => ({ studyId: o.studyId, caseId: o.caseId }),
  step: { action: "reopen", changes: (v, o) => ({ gold: [o.gold ?? null, null], reason: v.reason }) },
};

/**
 * An admin sends an adjudicated case back to the queue; the decision is kept (status `reopened`) in history.
 * `outcomeVersion` is the outcome's version the admin's page read: a page read before the outcome last changed
 * (a stale tab) cannot reopen a newer decision (409).
 */
export function reopenDecision(
  db: Db,
  input: { adminId: string; caseId: number; reason: string; outcomeVersion: number; now?: number },
): { ok: true } | SaveRefusal {
  const result = saveWorkItem(db, reopenStep, {
    userId: input.adminId,
    itemId: input.caseId,
    values: { reason: input.reason },
    version: input.outcomeVersion,
    intent: "submit",
    now: input.now,
  });
  return result.ok ? { ok: true } : result;
}
