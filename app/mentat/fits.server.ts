/** Bradley–Terry label fits of a bank's submitted ratings (docs/mentat.md#preference-labels). */
import { and, desc, eq } from "drizzle-orm";
import { z } from "zod";
import { mentatBanks, mentatFits, mentatQuestions, mentatRatings, users } from "../../db/schema";
import {
  fitPreferenceLabels,
  HBT_DEFAULTS,
  type AnnotationRow,
  type PreferenceLabels,
  type RaterEffects,
} from "./domain/bradley-terry";
import { OPTION_COUNT, type MentatDomain } from "../expert-panel/domain/expert-scales";
import { annotationRowsHash, optionAgreement, type QuestionAgreement } from "./domain/mentat";
import type { Db, DbOrTx } from "../platform/db.server";
import { recordEvent } from "../audit/audit.server";
import { writeTransaction } from "../work-items/engine.server";
import { ServiceError } from "../platform/service-error";
import { domainsOf } from "./banks.server";

/** The submitted ratings of a bank's preference-domain questions, as annotation rows (question id, username, scores a–e). */
export function bankAnnotationRows(db: DbOrTx, bankId: number): AnnotationRow[] {
  const bank = db.select().from(mentatBanks).where(eq(mentatBanks.id, bankId)).get();
  if (!bank) return [];
  const domains = domainsOf(bank.preferenceDomains);
  return db
    .select({
      question: mentatQuestions.externalId,
      domain: mentatQuestions.domain,
      rater: users.username,
      scores: mentatRatings.scores,
    })
    .from(mentatRatings)
    .innerJoin(mentatQuestions, eq(mentatQuestions.id, mentatRatings.questionId))
    .innerJoin(users, eq(users.id, mentatRatings.raterId))
    .where(and(eq(mentatQuestions.bankId, bankId), eq(mentatRatings.status, "submitted")))
    .all()
    .filter((r) => domains.includes(r.domain as MentatDomain))
    .map((r) => ({ question: r.question, rater: r.rater, scores: r.scores as number[] }));
}

export interface FitOptions {
  raterEffects?: RaterEffects;
  penalty?: number;
  strengthPenalty?: number;
  bootstrap?: number;
  seed?: number;
}

export interface MentatFitResult {
  labels: PreferenceLabels;
  agreement: QuestionAgreement[];
  nRows: number;
}

export interface FitSummary {
  id: number;
  createdAt: number;
  params: Required<FitOptions>;
  inputHash: string;
  /** True when the submitted ratings differ from those the fit used. */
  stale: boolean;
  result: MentatFitResult;
}

export const FitOptionsSchema = z.object({
  raterEffects: z.enum(["none", "slope", "slope+offset"]).default(HBT_DEFAULTS.raterEffects),
  penalty: z.coerce.number().min(0).max(1000).default(HBT_DEFAULTS.penalty),
  strengthPenalty: z.coerce.number().min(0).max(1000).default(HBT_DEFAULTS.strengthPenalty),
  bootstrap: z.coerce.number().int().min(0).max(10_000).default(200),
  seed: z.coerce
    .number()
    .int()
    .min(0)
    .max(2 ** 31 - 1)
    .default(0),
});

/**
 * Fits preference labels to the bank's submitted ratings (core/bradley-terry fitPreferenceLabels) with Krippendorff's
 * α per question, and stores the fit. Runs synchronously: about 20–50 ms per refit for MENTAT-sized banks.
 */
export function runBankFit(
  db: Db,
  input: {
    bankId: number;
    options?: FitOptions;
    actorId: string | null;
    now?: number;
    onReplicate?: (done: number, total: number) => void;
  },
): FitSummary {
  const params = FitOptionsSchema.parse(input.options ?? {});
  const rows = bankAnnotationRows(db, input.bankId);
  if (rows.length === 0) throw new ServiceError("No submitted ratings yet: there is nothing to fit.", "fit", 409);
  const labels = fitPreferenceLabels(rows, OPTION_COUNT, { ...params, onReplicate: input.onReplicate });
  const result: MentatFitResult = { labels, agreement: optionAgreement(rows), nRows: rows.length };
  const inputHash = annotationRowsHash(rows);
  const now = input.now ?? Date.now();
  const id = writeTransaction(db, (tx) => {
    const id = tx
      .insert(mentatFits)
      .values({
        bankId: input.bankId,
        params,
        inputHash,
        result,
        createdAt: now,
        createdBy: input.actorId,
      })
      .returning({ id: mentatFits.id })
      .get().id;
    recordEvent(tx, {
      actorId: input.actorId,
      entity: "mentat_fit",
      entityId: id,
      action: "fit",
      changes: { bankId: input.bankId, rows: rows.length, inputHash, ...params },
      at: now,
    });
    return id;
  });
  return { id, createdAt: now, params, inputHash, stale: false, result };
}

export function getLatestFit(db: Db, bankId: number): FitSummary | null {
  const row = db.select().from(mentatFits).where(eq(mentatFits.bankId, bankId)).orderBy(desc(mentatFits.id)).get();
  if (!row) return null;
  return {
    id: row.id,
    createdAt: row.createdAt,
    params: row.params as Required<FitOptions>,
    inputHash: row.inputHash,
    stale: annotationRowsHash(bankAnnotationRows(db, bankId)) !== row.inputHash,
    result: row.result as MentatFitResult,
  };
}
