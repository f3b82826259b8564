/** Admin views of a MENTAT bank's questions and its demographic variant sets (docs/mentat.md#variants). */
import { and, asc, count, eq, inArray, sql } from "drizzle-orm";
import { createHash } from "node:crypto";
import { mentatDatasets, mentatVariants } from "../../db/schema";
import { visibleMentatQuestions, visibleMentatRatings } from "../../db/schema-visible";
import {
  DEFAULT_AGES,
  DEFAULT_RACES,
  type Gender,
  type MentatDomain,
  type VariantDimension,
} from "../expert-panel/domain/expert-scales";
import {
  checkExpansionParams,
  expandVariants,
  gendersOf,
  type ExpansionParams,
  type QuestionTexts,
  type Variant,
} from "./domain/mentat";
import type { Db, DbOrTx } from "../platform/db.server";
import { finishWindow, prefixRange, readWindow, type ListWindow, type WindowSpec } from "../platform/list-window";
import { keyset } from "../platform/list-window.server";
import { recordEvent } from "../audit/audit.server";
import { writeTransaction } from "../work-items/engine.server";
import { ServiceError } from "../platform/service-error";
import { getBank, type BankSummary } from "./banks.server";

export interface QuestionRow {
  id: number;
  externalId: string;
  position: number;
  domain: MentatDomain;
  preference: boolean;
  genders: Gender[];
  hasAge: boolean;
  hasRace: boolean;
  submitted: number;
}

export function listBankQuestions(db: Db, bankId: number): QuestionRow[] {
  const bank = getBank(db, bankId);
  if (!bank) return [];
  const questions = db
    .select()
    .from(visibleMentatQuestions)
    .where(eq(visibleMentatQuestions.bankId, bankId))
    .orderBy(asc(visibleMentatQuestions.position))
    .all();
  const ratings = questions.length
    ? db
        .select({ questionId: visibleMentatRatings.questionId })
        .from(visibleMentatRatings)
        .where(
          and(
            inArray(
              visibleMentatRatings.questionId,
              questions.map((q) => q.id),
            ),
            eq(visibleMentatRatings.status, "submitted"),
          ),
        )
        .all()
    : [];
  return questions.map((q) =>
    questionRow(bank.preferenceDomains, q, ratings.filter((r) => r.questionId === q.id).length),
  );
}

function questionRow(
  preferenceDomains: readonly MentatDomain[],
  q: { id: number; externalId: string; position: number; domain: string; texts: unknown },
  submitted: number,
): QuestionRow {
  const texts = q.texts as QuestionTexts;
  const base = texts.nonbinary ?? texts.neutral ?? texts.male ?? texts.female ?? "";
  return {
    id: q.id,
    externalId: q.externalId,
    position: q.position,
    domain: q.domain as MentatDomain,
    preference: preferenceDomains.includes(q.domain as MentatDomain),
    genders: gendersOf(texts),
    hasAge: base.includes("<AGE>"),
    hasRace: base.includes("<NAT>"),
    submitted,
  };
}

export function loadQuestions(db: DbOrTx, bankId: number) {
  return db
    .select()
    .from(visibleMentatQuestions)
    .where(eq(visibleMentatQuestions.bankId, bankId))
    .orderBy(asc(visibleMentatQuestions.position))
    .all()
    .map((q) => ({
      id: q.id,
      externalId: q.externalId,
      domain: q.domain as MentatDomain,
      texts: q.texts as QuestionTexts,
      options: q.options as string[],
      answer: q.intendedAnswer,
    }));
}

export interface DatasetSummary {
  id: number;
  dimension: VariantDimension;
  params: ExpansionParams;
  count: number;
  contentHash: string;
  createdAt: number;
}

export function listDatasets(db: Db, bankId: number): DatasetSummary[] {
  const order = ["base", "gender", "age", "race"];
  return db
    .select()
    .from(mentatDatasets)
    .where(eq(mentatDatasets.bankId, bankId))
    .all()
    .map((d) => ({
      id: d.id,
      dimension: d.dimension as VariantDimension,
      params: d.params,
      count: d.count,
      contentHash: d.contentHash,
      createdAt: d.createdAt,
    }))
    .sort((a, b) => order.indexOf(a.dimension) - order.indexOf(b.dimension));
}

function variantsHash(variants: Variant[]): string {
  return createHash("sha256")
    .update(variants.map((v) => JSON.stringify([v.variantId, v.text])).join("\n"))
    .digest("hex");
}

export const BANK_QUESTIONS_WINDOW = {
  prefix: "",
  sorts: ["position", "externalId"],
  defaultSort: "position",
  filters: ["q", "domain"],
} as const satisfies WindowSpec<string, string>;

/**
 * A window of a bank's questions (docs/architecture.md, "Pages are windows"): by position
 * (mentat_questions_bank_pos_idx) or question id (mentat_questions_bank_external_idx, whose range is also the id
 * prefix filter), optionally of one domain; the submitted ratings are counted for the window's rows only.
 */
export function bankQuestionsWindow(
  db: Db,
  bank: Pick<BankSummary, "id" | "preferenceDomains" | "numQuestions">,
  params: URLSearchParams,
): ListWindow<QuestionRow, (typeof BANK_QUESTIONS_WINDOW.sorts)[number], "q" | "domain"> {
  const w = readWindow(params, BANK_QUESTIONS_WINDOW, 2);
  const bankId = bank.id;
  const q = visibleMentatQuestions;
  const byId = w.sort === "externalId";
  const k = keyset(w, byId ? [q.externalId, q.id] : [q.position, q.id]);
  const [lo, hi] = prefixRange(w.filters.q);
  const filter = and(
    eq(q.bankId, bankId),
    w.filters.domain ? eq(q.domain, w.filters.domain) : undefined,
    w.filters.q ? sql`${q.externalId} >= ${lo} and ${q.externalId} < ${hi}` : undefined,
  );
  const rows = db
    .select({
      id: q.id,
      externalId: q.externalId,
      position: q.position,
      domain: q.domain,
      texts: q.texts,
      submitted: sql<number>`(select count(*) from visible_mentat_ratings r where r.question_id = "visible_mentat_questions"."id" and r.status = 'submitted')`,
    })
    .from(q)
    .where(and(filter, k.where))
    .orderBy(...k.orderBy)
    .limit(k.limit)
    .all()
    .map((r) => questionRow(bank.preferenceDomains, r, r.submitted));
  const total =
    !w.filters.q && !w.filters.domain ? bank.numQuestions : db.select({ n: count() }).from(q).where(filter).get()!.n;
  return finishWindow(w, rows, total, (r) => (byId ? [r.externalId, r.id] : [r.position, r.id]));
}

/**
 * Expands a bank into one demographic variant set (core/mentat expandVariants) and stores it, replacing an earlier
 * set of the same dimension. The same questions and parameters always give the same set (same ids, order, hash).
 */
export function expandBank(
  db: Db,
  input: {
    bankId: number;
    dimension: VariantDimension;
    params?: ExpansionParams;
    actorId: string | null;
    now?: number;
  },
): DatasetSummary & { replaced: boolean; unchanged: boolean } {
  const params = {
    ages: [...(input.params?.ages ?? DEFAULT_AGES)],
    races: [...(input.params?.races ?? DEFAULT_RACES)],
  };
  const problem = checkExpansionParams(params);
  if (problem) throw new ServiceError(problem, "params");
  const now = input.now ?? Date.now();
  return writeTransaction(db, (tx) => {
    const questions = loadQuestions(tx, input.bankId);
    if (questions.length === 0) throw new ServiceError("The bank has no questions to expand.", "bank");
    const variants = expandVariants(questions, input.dimension, params);
    const contentHash = variantsHash(variants);
    const old = tx
      .select()
      .from(mentatDatasets)
      .where(and(eq(mentatDatasets.bankId, input.bankId), eq(mentatDatasets.dimension, input.dimension)))
      .get();
    const storedParams: Record<string, unknown> =
      input.dimension === "age" ? { ages: params.ages } : input.dimension === "race" ? { races: params.races } : {};
    if (old && old.contentHash === contentHash && JSON.stringify(old.params) === JSON.stringify(storedParams))
      return {
        id: old.id,
        dimension: input.dimension,
        params: old.params,
        count: old.count,
        contentHash,
        createdAt: old.createdAt,
        replaced: false,
        unchanged: true,
      };
    let id: number;
    if (old) {
      tx.delete(mentatVariants).where(eq(mentatVariants.datasetId, old.id)).run();
      tx.update(mentatDatasets)
        .set({ params: storedParams, contentHash, count: variants.length, createdAt: now, createdBy: input.actorId })
        .where(eq(mentatDatasets.id, old.id))
        .run();
      id = old.id;
    } else {
      id = tx
        .insert(mentatDatasets)
        .values({
          bankId: input.bankId,
          dimension: input.dimension,
          params: storedParams,
          contentHash,
          count: variants.length,
          createdAt: now,
          createdBy: input.actorId,
        })
        .returning({ id: mentatDatasets.id })
        .get().id;
    }
    const questionId = new Map(questions.map((q) => [q.externalId, q.id]));
    variants.forEach((v, position) =>
      tx
        .insert(mentatVariants)
        .values({
          datasetId: id,
          questionId: questionId.get(v.questionId)!,
          variantId: v.variantId,
          position,
          gender: v.gender,
          age: v.age,
          race: v.race,
          text: v.text,
        })
        .run(),
    );
    recordEvent(tx, {
      actorId: input.actorId,
      entity: "mentat_dataset",
      entityId: id,
      action: old ? "replace" : "create",
      changes: {
        bankId: input.bankId,
        dimension: input.dimension,
        count: variants.length,
        contentHash: old ? [old.contentHash, contentHash] : contentHash,
      },
      at: now,
    });
    return {
      id,
      dimension: input.dimension,
      params: storedParams,
      count: variants.length,
      contentHash,
      createdAt: now,
      replaced: Boolean(old),
      unchanged: false,
    };
  });
}
