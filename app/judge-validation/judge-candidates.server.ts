/**
 * Candidate judges of a validation set and the report (docs/judge-validation.md#candidate-judges, docs/judge-validation.md#consensus-and-the-report): a judge's outputs
 * for the sampled responses are imported (the reference's JSONL, or the judge's raw text), and the report scores
 * every judge against the raters' majority with the same core as `judge-report --labels` (app/judge-validation/domain/judge-report.ts).
 * Admin only.
 */
import { and, asc, count, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import { judgeCandidates, judgeItems, judgeOutputs, judgeRatings, users } from "../../db/schema";
import { visibleEvents, visibleJudgeResponses, visibleJudgeSets } from "../../db/schema-visible";
import type { ImportSource } from "../formats/import-source";
import { parseJudgeOutputsJsonl, type ParsedJudgeOutputs } from "./domain/judge-import";
import { buildJudgeReport, JUDGE_PREFIX, type JudgeLabel, type JudgeReport } from "./domain/judge-report";
import type { Action, InfoRequest, PrimaryAnswer } from "../evaluation/public";
import type { Db, DbOrTx } from "../platform/db.server";
import { recordEvent } from "../audit/audit.server";
import { ServiceError } from "../platform/service-error";

export const JudgeNameSchema = z
  .string()
  .trim()
  .min(1, "Give the judge a name.")
  .max(100, "A judge name has at most 100 characters.")
  .regex(/^[^\s,"]+$/, "A judge name may not contain spaces, commas or quotes (e.g. gemma-3-27b).");

export interface JudgeImportPlan {
  ok: boolean;
  name: string;
  exists: boolean;
  parse: ParsedJudgeOutputs;
  refusal: string | null;
}

function sampledItems(db: DbOrTx, setId: number): Map<string, { id: number; isLastSection: boolean }> {
  return new Map(
    db
      .select({
        id: judgeItems.id,
        annotationId: judgeItems.annotationId,
        isLastSection: visibleJudgeResponses.isLastSection,
      })
      .from(judgeItems)
      .innerJoin(visibleJudgeResponses, eq(visibleJudgeResponses.id, judgeItems.responseId))
      .where(eq(judgeItems.setId, setId))
      .all()
      .map((i) => [i.annotationId, { id: i.id, isLastSection: i.isLastSection }]),
  );
}

function planWithin(
  db: DbOrTx,
  input: { setId: number; name: string; text: string | ImportSource; replace?: boolean },
): JudgeImportPlan & { items: Map<string, { id: number; isLastSection: boolean }> } {
  const name = JudgeNameSchema.parse(input.name);
  const empty: ParsedJudgeOutputs = { rows: [], errors: [], warnings: [] };
  const exists = Boolean(
    db
      .select({ id: judgeCandidates.id })
      .from(judgeCandidates)
      .where(and(eq(judgeCandidates.setId, input.setId), eq(judgeCandidates.name, name)))
      .get(),
  );
  const items = sampledItems(db, input.setId);
  const base = { name, exists, items };
  if (items.size === 0)
    return { ...base, ok: false, parse: empty, refusal: "The set has no sample yet: draw it before importing judges." };
  if (exists && !input.replace)
    return {
      ...base,
      ok: false,
      parse: empty,
      refusal: `A judge named "${name}" is already imported: choose another name, or replace its outputs.`,
    };
  const parse = parseJudgeOutputsJsonl(input.text, {
    items: new Map([...items].map(([id, i]) => [id, i.isLastSection])),
  });
  return { ...base, ok: parse.errors.length === 0, parse, refusal: null };
}

/** Validates a judge's outputs file against the set's sample without writing anything. */
export function planJudgeImport(
  db: Db,
  input: { setId: number; name: string; text: string | ImportSource; replace?: boolean },
): JudgeImportPlan {
  const { items: _, ...plan } = planWithin(db, input);
  return plan;
}

/**
 * Imports a candidate judge's outputs, all or nothing (parseJudgeOutputsJsonl validates the whole file first). With
 * `replace`, a judge of the same name has its outputs replaced. Audited.
 */
export function importJudgeOutputs(
  db: Db,
  input: {
    setId: number;
    name: string;
    /** The outputs file: a text in memory, or a file streamed through the import contract (app/cli/io.ts). */
    text: string | ImportSource;
    filename: string;
    replace?: boolean;
    actorId: string | null;
    now?: number;
  },
): JudgeImportPlan & { written: number } {
  const now = input.now ?? Date.now();
  return db.transaction(
    (tx) => {
      if (
        !tx.select({ id: visibleJudgeSets.id }).from(visibleJudgeSets).where(eq(visibleJudgeSets.id, input.setId)).get()
      )
        throw new ServiceError("No such validation set.", "set", 404);
      const { items, ...plan } = planWithin(tx, input);
      if (!plan.ok) return { ...plan, written: 0 };
      const old = tx
        .select({ id: judgeCandidates.id })
        .from(judgeCandidates)
        .where(and(eq(judgeCandidates.setId, input.setId), eq(judgeCandidates.name, plan.name)))
        .get();
      if (old) {
        tx.delete(judgeOutputs).where(eq(judgeOutputs.judgeId, old.id)).run();
        tx.delete(judgeCandidates).where(eq(judgeCandidates.id, old.id)).run();
      }
      const judgeId = tx
        .insert(judgeCandidates)
        .values({
          setId: input.setId,
          name: plan.name,
          filename: input.filename,
          importedBy: input.actorId,
          importedAt: now,
        })
        .returning({ id: judgeCandidates.id })
        .get().id;
      for (const row of plan.parse.rows) {
        tx.insert(judgeOutputs)
          .values({
            judgeId,
            itemId: items.get(row.annotationId)!.id,
            primaryAnswer: row.primaryAnswer,
            infoRequest: row.infoRequest,
            action: row.action,
            raw: row.raw,
          })
          .run();
      }
      recordEvent(tx, {
        actorId: input.actorId,
        entity: "judge_candidate",
        entityId: judgeId,
        action: old ? "replace" : "import",
        changes: { set: input.setId, name: plan.name, filename: input.filename, outputs: plan.parse.rows.length },
        at: now,
      });
      return { ...plan, written: plan.parse.rows.length };
    },
    { behavior: "immediate" },
  );
}

export interface JudgeRow {
  id: number;
  name: string;
  filename: string;
  importedAt: number;
  outputs: number;
}

export function listJudges(db: Db, setId: number): JudgeRow[] {
  return db
    .select({
      id: judgeCandidates.id,
      name: judgeCandidates.name,
      filename: judgeCandidates.filename,
      importedAt: judgeCandidates.importedAt,
      outputs: count(judgeOutputs.id),
    })
    .from(judgeCandidates)
    .leftJoin(judgeOutputs, eq(judgeOutputs.judgeId, judgeCandidates.id))
    .where(eq(judgeCandidates.setId, setId))
    .groupBy(judgeCandidates.id)
    .orderBy(asc(judgeCandidates.name))
    .all();
}

/**
 * The set's labels in the long format of `judge-report --labels`: every submitted rating (rater = username) and every
 * judge output (rater = `judge:NAME`, with the judge's own action), response_id = annotation_id, in annotation order.
 */
export function setLabels(db: Db, setId: number): JudgeLabel[] {
  const ratings = db
    .select({
      responseId: judgeItems.annotationId,
      position: judgeItems.position,
      rater: users.username,
      primaryAnswer: judgeRatings.primaryAnswer,
      infoRequest: judgeRatings.infoRequest,
    })
    .from(judgeRatings)
    .innerJoin(judgeItems, eq(judgeItems.id, judgeRatings.itemId))
    .innerJoin(users, eq(users.id, judgeRatings.raterId))
    .where(and(eq(judgeItems.setId, setId), eq(judgeRatings.status, "submitted")))
    .orderBy(asc(judgeItems.position), asc(users.username))
    .all();
  const outputs = db
    .select({
      responseId: judgeItems.annotationId,
      position: judgeItems.position,
      judge: judgeCandidates.name,
      primaryAnswer: judgeOutputs.primaryAnswer,
      infoRequest: judgeOutputs.infoRequest,
      action: judgeOutputs.action,
    })
    .from(judgeOutputs)
    .innerJoin(judgeItems, eq(judgeItems.id, judgeOutputs.itemId))
    .innerJoin(judgeCandidates, eq(judgeCandidates.id, judgeOutputs.judgeId))
    .where(eq(judgeItems.setId, setId))
    .orderBy(asc(judgeItems.position), asc(judgeCandidates.name))
    .all();
  const rows = [
    ...ratings.map((r) => ({
      position: r.position,
      label: {
        responseId: r.responseId,
        rater: r.rater,
        primaryAnswer: r.primaryAnswer as PrimaryAnswer | null,
        infoRequest: r.infoRequest as InfoRequest | null,
      } satisfies JudgeLabel,
    })),
    ...outputs.map((o) => ({
      position: o.position,
      label: {
        responseId: o.responseId,
        rater: JUDGE_PREFIX + o.judge,
        primaryAnswer: o.primaryAnswer as PrimaryAnswer | null,
        infoRequest: o.infoRequest as InfoRequest | null,
        action: o.action as Action | null,
      } satisfies JudgeLabel,
    })),
  ];
  // Stable: humans before judges within a response, as listed above.
  return rows.sort((a, b) => a.position - b.position).map((r) => r.label);
}

/** The report over the set's own labels: the same function as `judge-report --labels`. */
export function setReport(db: Db, setId: number): JudgeReport {
  return buildJudgeReport(setLabels(db, setId));
}

export interface ItemDetail {
  item: {
    id: number;
    annotationId: string;
    bucket: string;
    derivedAction: string;
    sampleId: string;
    model: string;
    strategy: string;
    sourceRun: string;
    stepIndex: number | null;
    isLastSection: boolean;
    text: string;
  };
  ratings: {
    id: number;
    rater: string;
    status: string;
    primaryAnswer: string | null;
    infoRequest: string | null;
    icdCodes: string;
    diagnosisNames: string;
    notes: string;
    version: number;
    updatedAt: number | null;
  }[];
  outputs: {
    judge: string;
    primaryAnswer: string | null;
    infoRequest: string | null;
    action: string | null;
    raw: string | null;
  }[];
  /** The ratings' audit trail, oldest first: who changed what, when, old and new values. */
  events: {
    id: number;
    at: number;
    actor: string | null;
    rating: string;
    action: string;
    changes: Record<string, unknown>;
  }[];
}

/** One sampled response with everything about it, for the admin: key, every rater's labels, judges, history. */
export function getItemDetail(db: Db, input: { setId: number; itemId: number }): ItemDetail | null {
  const item = db
    .select({
      id: judgeItems.id,
      annotationId: judgeItems.annotationId,
      bucket: judgeItems.bucket,
      derivedAction: judgeItems.derivedAction,
      sampleId: visibleJudgeResponses.sampleId,
      model: visibleJudgeResponses.model,
      strategy: visibleJudgeResponses.strategy,
      sourceRun: visibleJudgeResponses.sourceRun,
      stepIndex: visibleJudgeResponses.stepIndex,
      isLastSection: visibleJudgeResponses.isLastSection,
      text: visibleJudgeResponses.modelOutputRaw,
    })
    .from(judgeItems)
    .innerJoin(visibleJudgeResponses, eq(visibleJudgeResponses.id, judgeItems.responseId))
    .where(and(eq(judgeItems.id, input.itemId), eq(judgeItems.setId, input.setId)))
    .get();
  if (!item) return null;
  const ratings = db
    .select({
      id: judgeRatings.id,
      rater: users.username,
      status: judgeRatings.status,
      primaryAnswer: judgeRatings.primaryAnswer,
      infoRequest: judgeRatings.infoRequest,
      icdCodes: judgeRatings.icdCodes,
      diagnosisNames: judgeRatings.diagnosisNames,
      notes: judgeRatings.notes,
      version: judgeRatings.version,
      updatedAt: judgeRatings.updatedAt,
    })
    .from(judgeRatings)
    .innerJoin(users, eq(users.id, judgeRatings.raterId))
    .where(eq(judgeRatings.itemId, item.id))
    .orderBy(asc(users.username))
    .all();
  const outputs = db
    .select({
      judge: judgeCandidates.name,
      primaryAnswer: judgeOutputs.primaryAnswer,
      infoRequest: judgeOutputs.infoRequest,
      action: judgeOutputs.action,
      raw: judgeOutputs.raw,
    })
    .from(judgeOutputs)
    .innerJoin(judgeCandidates, eq(judgeCandidates.id, judgeOutputs.judgeId))
    .where(eq(judgeOutputs.itemId, item.id))
    .orderBy(asc(judgeCandidates.name))
    .all();
  const raterOf = new Map(ratings.map((r) => [String(r.id), r.rater]));
  const history = ratings.length
    ? db
        .select({
          id: visibleEvents.id,
          at: visibleEvents.at,
          actor: users.username,
          entityId: visibleEvents.entityId,
          action: visibleEvents.action,
          changes: visibleEvents.changes,
        })
        .from(visibleEvents)
        .leftJoin(users, eq(users.id, visibleEvents.actorId))
        .where(and(eq(visibleEvents.entity, "judge_rating"), inArray(visibleEvents.entityId, [...raterOf.keys()])))
        .orderBy(asc(visibleEvents.id))
        .all()
        .map(({ entityId, changes, ...e }) => ({ ...e, rating: raterOf.get(entityId)!, changes }))
    : [];
  return { item, ratings, outputs, events: history };
}
