/**
 * The expert's side of MENTAT (docs/mentat.md#option-ratings): their questions and option ratings (drafts, atomic
 * submission, revisions, audit) through the work-item engine.
 *
 * Blinding: everything an expert loads goes through getRaterQuestion / listRaterQuestions, which select the expert's
 * own rating only and never the intended answer, other experts' ratings or identities, or fitted labels. Ownership is
 * part of every rater query (panel membership and the rater's id), so another question simply is not found.
 */
import { and, asc, eq, not, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { notPending } from "../platform/import-runs.server";
import { mentatBankRaters, mentatRatings } from "../../db/schema";
import { visibleMentatBanks, visibleMentatQuestions, visibleMentatRatings } from "../../db/schema-visible";
import {
  OPTION_COUNT,
  type ExpertWorkState,
  type Gender,
  type MentatDomain,
} from "../expert-panel/domain/expert-scales";
import { gendersOf, raterPresentation, renderQuestion, type QuestionTexts } from "./domain/mentat";
import type { Db, DbOrTx } from "../platform/db.server";
import { nextOpenItem, previousItem, progressOf, type SaveResult } from "../work-items/domain/work-item";
import { saveWorkItem, updateAtVersion, type WorkItemAdapter } from "../work-items/engine.server";
import { domainsOf } from "./banks.server";

/** The expert's own rating of a question, once it is visible (an import still writing it hides it: the view). */
function ownRating(questionId: number | SQLiteColumn, userId: string): SQL | undefined {
  return and(eq(visibleMentatRatings.questionId, questionId), eq(visibleMentatRatings.raterId, userId));
}

export interface RaterQuestionRow {
  questionId: number;
  bankId: number;
  bankName: string;
  externalId: string;
  position: number;
  domain: MentatDomain;
  state: ExpertWorkState;
  updatedAt: number | null;
}

/** The questions an expert is asked to rate: the preference-domain questions of the banks whose panel they are on. */
export function listRaterQuestions(db: Db, userId: string): RaterQuestionRow[] {
  const rows = db
    .select({
      questionId: visibleMentatQuestions.id,
      bankId: visibleMentatBanks.id,
      bankName: visibleMentatBanks.name,
      preferenceDomains: visibleMentatBanks.preferenceDomains,
      externalId: visibleMentatQuestions.externalId,
      position: visibleMentatQuestions.position,
      domain: visibleMentatQuestions.domain,
      status: visibleMentatRatings.status,
      updatedAt: visibleMentatRatings.updatedAt,
    })
    .from(mentatBankRaters)
    .innerJoin(visibleMentatBanks, eq(visibleMentatBanks.id, mentatBankRaters.bankId))
    .innerJoin(visibleMentatQuestions, eq(visibleMentatQuestions.bankId, visibleMentatBanks.id))
    .leftJoin(visibleMentatRatings, ownRating(visibleMentatQuestions.id, userId))
    .where(eq(mentatBankRaters.raterId, userId))
    .orderBy(asc(visibleMentatBanks.name), asc(visibleMentatQuestions.position))
    .all();
  return rows
    .filter((r) => domainsOf(r.preferenceDomains).includes(r.domain as MentatDomain))
    .map(({ preferenceDomains: _, status, ...r }) => ({
      ...r,
      domain: r.domain as MentatDomain,
      state: (status ?? "not_started") as ExpertWorkState,
    }));
}

export interface RaterQuestionView {
  question: {
    id: number;
    externalId: string;
    bankName: string;
    domain: MentatDomain;
    /** The question as this expert sees it (their gender variant, other demographics left out). */
    text: string;
    /** The options in this expert's order. */
    options: string[];
  };
  state: ExpertWorkState;
  /** This expert's scores, in the order of `options` (null = not rated yet). */
  scores: (number | null)[];
  comment: string;
  version: number;
  updatedAt: number | null;
  nextQuestionId: number | null;
  previousQuestionId: number | null;
  progress: { done: number; total: number };
}

interface OwnedQuestion {
  id: number;
  bankId: number;
  bankName: string;
  seed: number;
  externalId: string;
  domain: MentatDomain;
  texts: QuestionTexts;
  options: string[];
}

/** The question if the expert is on its bank's panel and it is a preference-domain question; else null. */
function findOwnedQuestion(db: DbOrTx, userId: string, questionId: number): OwnedQuestion | null {
  const row = db
    .select({
      id: visibleMentatQuestions.id,
      bankId: visibleMentatBanks.id,
      bankName: visibleMentatBanks.name,
      seed: visibleMentatBanks.seed,
      preferenceDomains: visibleMentatBanks.preferenceDomains,
      externalId: visibleMentatQuestions.externalId,
      domain: visibleMentatQuestions.domain,
      texts: visibleMentatQuestions.texts,
      options: visibleMentatQuestions.options,
    })
    .from(visibleMentatQuestions)
    .innerJoin(visibleMentatBanks, eq(visibleMentatBanks.id, visibleMentatQuestions.bankId))
    .innerJoin(
      mentatBankRaters,
      and(eq(mentatBankRaters.bankId, visibleMentatBanks.id), eq(mentatBankRaters.raterId, userId)),
    )
    .where(eq(visibleMentatQuestions.id, questionId))
    .get();
  if (!row || !domainsOf(row.preferenceDomains).includes(row.domain as MentatDomain)) return null;
  return {
    id: row.id,
    bankId: row.bankId,
    bankName: row.bankName,
    seed: row.seed,
    externalId: row.externalId,
    domain: row.domain as MentatDomain,
    texts: row.texts,
    options: row.options,
  };
}

function presentationFor(
  q: OwnedQuestion,
  userId: string,
  stored?: { optionOrder: number[]; shownGender: string | null },
) {
  if (stored) return { optionOrder: stored.optionOrder, gender: stored.shownGender as Gender | null };
  return raterPresentation(q.seed, q.externalId, userId, gendersOf(q.texts));
}

/** One question for an expert, blinded: their own rating only; null when it is not theirs to rate. */
export function getRaterQuestion(db: Db, input: { userId: string; questionId: number }): RaterQuestionView | null {
  const q = findOwnedQuestion(db, input.userId, input.questionId);
  if (!q) return null;
  const row = db.select().from(visibleMentatRatings).where(ownRating(q.id, input.userId)).get();
  const { optionOrder, gender } = presentationFor(q, input.userId, row);
  const scores: (number | null)[] = row ? row.scores : new Array(OPTION_COUNT).fill(null);
  const mine = listRaterQuestions(db, input.userId);
  const at = mine.findIndex((r) => r.questionId === q.id);
  return {
    question: {
      id: q.id,
      externalId: q.externalId,
      bankName: q.bankName,
      domain: q.domain,
      text: renderQuestion(q.texts, { gender, age: null, race: null }),
      options: optionOrder.map((i) => q.options[i]!),
    },
    state: (row?.status ?? "not_started") as ExpertWorkState,
    scores: optionOrder.map((i) => scores[i] ?? null),
    comment: row?.comment ?? "",
    version: row?.version ?? 0,
    updatedAt: row?.updatedAt ?? null,
    nextQuestionId: nextOpenItem(mine, at)?.questionId ?? null,
    previousQuestionId: previousItem(mine, at)?.questionId ?? null,
    progress: progressOf(mine),
  };
}

// The rating's values: one schema for the page and the server (app/mentat/domain/option-rating-values.ts).
import { OptionRatingSchema, type OptionRatingValues } from "./domain/option-rating-values";
export { OptionRatingSchema, type OptionRatingValues };

export type RatingSaveResult = SaveResult;

type RatingRow = typeof mentatRatings.$inferSelect;

/** A question the expert may rate, their own rating row, and the presentation (option order, gender) they see. */
interface RatingItem {
  q: OwnedQuestion;
  row: RatingRow | undefined;
  optionOrder: number[];
  gender: Gender | null;
}

/**
 * The option-rating workspace's adapter of the work-item engine (docs/architecture.md, "The work-item engine").
 * The page sends scores in the order the expert saw the options; they are stored in the bank's order.
 */
const optionRatingWork: WorkItemAdapter<RatingItem, RatingRow, OptionRatingValues> = {
  guidelines: (item) => ({ scope: "mentat_bank", scopeId: item.q.bankId }),
  entity: "mentat_rating",
  noun: "rating",
  find(tx, userId, questionId) {
    const q = findOwnedQuestion(tx, userId, questionId);
    if (!q) return null;
    const row = tx.select().from(visibleMentatRatings).where(ownRating(q.id, userId)).get();
    return { q, row, ...presentationFor(q, userId, row) };
  },
  row: (_tx, _userId, item) => item.row,
  meta: (r) => ({ id: r.id, state: r.status, version: r.version, savedAt: r.updatedAt }),
  valuesOf: (row) =>
    row ? { scores: row.scores, comment: row.comment } : { scores: new Array(OPTION_COUNT).fill(null), comment: "" },
  normalise(values, item) {
    const scores: (number | null)[] = new Array(OPTION_COUNT).fill(null);
    item.optionOrder.forEach((original, shown) => (scores[original] = values.scores[shown] ?? null));
    return { ...values, scores };
  },
  check(_tx, item, values) {
    const missing = values.scores.map((s, i) => (s === null ? i : -1)).filter((i) => i >= 0);
    if (!missing.length) return { ok: true, values };
    // Field names follow the page's order, like the values it sent.
    const shownOrder = item.optionOrder;
    return {
      ok: false,
      message: `Rate every option before submitting (${missing.length} not rated yet). 0 is fine for an option you would never choose.`,
      errors: Object.fromEntries(missing.map((i) => [`score${shownOrder.indexOf(i)}`, "Not rated yet."])),
    };
  },
  audited: (v) => ({ scores: v.scores, comment: v.comment }),
  freeText: ["comment"],
  write(tx, { item, row, userId, values, status, version, now }) {
    const columns = {
      status,
      scores: values.scores,
      comment: values.comment,
      version,
      updatedAt: now,
      submittedAt: status === "submitted" ? now : (row?.submittedAt ?? null),
    };
    if (!row) {
      // A rating of this question that `mentat-import-ratings` is still writing for this expert (hidden until its last
      // transaction) gives way to the expert's own save; the import then refuses (docs/reliability.md, "Imports that
      // add rows to an existing parent").
      tx.delete(mentatRatings)
        .where(
          and(
            eq(mentatRatings.questionId, item.q.id),
            eq(mentatRatings.raterId, userId),
            not(notPending(mentatRatings.importRun)),
          ),
        )
        .run();
      return tx
        .insert(mentatRatings)
        .values({
          questionId: item.q.id,
          raterId: userId,
          optionOrder: item.optionOrder,
          shownGender: item.gender,
          ...columns,
        })
        .returning({ id: mentatRatings.id })
        .get().id;
    }
    return updateAtVersion(tx, mentatRatings, row.id, row.version, columns) ? row.id : null;
  },
  // The first save records what the expert was shown.
  auditContext: (item, row) =>
    row ? {} : { detail: { optionOrder: [null, item.optionOrder], shownGender: [null, item.gender] } },
};

/**
 * Saves an expert's ratings of one question: a draft (incomplete allowed, only before the first submission) or a
 * submission (all five scores 0–100), which may be revised later. `version` is the version the page read (0 before
 * the first save): a stale one is refused with 409. The option order and gender shown are recorded on first save.
 * Every change appends an audit event in the same IMMEDIATE transaction.
 */
export function saveOptionRating(
  db: Db,
  input: {
    userId: string;
    questionId: number;
    values: OptionRatingValues;
    version: number;
    intent: "draft" | "submit";
    activeMs?: number;
    now?: number;
  },
): RatingSaveResult {
  return saveWorkItem(db, optionRatingWork, { ...input, itemId: input.questionId });
}
