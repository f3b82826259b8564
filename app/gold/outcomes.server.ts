/**
 * From two annotations to a case outcome (docs/safe-psych.md#disagreement-and-adjudication): agreed cases get their gold label derived at once, disputed ones
 * go to the adjudication queue with their reason. Runs inside the transaction that locks the second annotation.
 */
import { randomInt } from "node:crypto";
import { asc, eq } from "drizzle-orm";
import { annotations, caseOutcomes, studies } from "../../db/schema";
import { visibleCases, visibleStudies } from "../../db/schema-visible";
import { annotatorOrder, MAX_ANNOTATOR_ORDER_SEED } from "../adjudication/public";
import { resolvePair } from "./domain/gold";
import { type CaseLabel, type MissingInfoKey } from "../labels/labels";
import type { DbOrTx } from "../platform/db.server";
import { recordEvent } from "../audit/audit.server";

/** An annotation row as a CaseLabel (only for submitted/locked rows, which passed checkCaseLabel). */
export function labelOfAnnotation(
  row: Pick<
    typeof annotations.$inferSelect,
    "sufficiency" | "icd10" | "earliestSection" | "missingInfo" | "missingOther"
  >,
): CaseLabel {
  if (row.sufficiency === "sufficient")
    return { sufficiency: "sufficient", icd10: row.icd10 ?? "", earliestSection: row.earliestSection ?? 0 };
  const missingInfo = row.missingInfo as MissingInfoKey[];
  return {
    sufficiency: "insufficient",
    missingInfo,
    missingInfoOther: missingInfo.includes("other") ? row.missingOther : null,
  };
}

/** The study's A/B order seed, drawn and stored on first use (studies made before it was recorded have none). */
function studyAnnotatorOrderSeed(tx: DbOrTx, studyId: number): number {
  const row = tx
    .select({ seed: visibleStudies.annotatorOrderSeed })
    .from(visibleStudies)
    .where(eq(visibleStudies.id, studyId))
    .get();
  if (row?.seed != null) return row.seed;
  const seed = randomInt(1, MAX_ANNOTATOR_ORDER_SEED);
  tx.update(studies).set({ annotatorOrderSeed: seed }).where(eq(studies.id, studyId)).run();
  return seed;
}

function caseExternalId(tx: DbOrTx, caseId: number): string {
  return tx.select({ externalId: visibleCases.externalId }).from(visibleCases).where(eq(visibleCases.id, caseId)).get()!
    .externalId;
}

export function onCaseAnnotationsComplete(tx: DbOrTx, input: { caseId: number; studyId: number; now: number }): void {
  const rows = tx
    .select()
    .from(annotations)
    .where(eq(annotations.caseId, input.caseId))
    .orderBy(asc(annotations.id))
    .all();
  if (rows.length !== 2) throw new Error(`case ${input.caseId} has ${rows.length} annotations; expected 2`);
  const [first, second] = rows as [(typeof rows)[0], (typeof rows)[0]];
  const outcome = resolvePair(labelOfAnnotation(first), labelOfAnnotation(second));
  // "Annotator A/B, order randomised per case", from the study's recorded seed (docs/decisions/0002-ab-order-per-case.md):
  // drawn on the study's first complete case, so the same data give the same order after a restore.
  const order = annotatorOrder(studyAnnotatorOrderSeed(tx, input.studyId), caseExternalId(tx, input.caseId), [
    first.id,
    second.id,
  ]);
  const values = {
    studyId: input.studyId,
    status: outcome.status,
    disputeReason: outcome.status === "disputed" ? outcome.reason : null,
    sufficiencyAgreement: outcome.agreement.sufficiency,
    diagnosisAgreement: outcome.agreement.diagnosis,
    gold: outcome.status === "agreed" ? outcome.gold : null,
    annotatorOrder: order,
    disputedAt: outcome.status === "disputed" ? input.now : null,
    updatedAt: input.now,
  };
  tx.insert(caseOutcomes)
    .values({ caseId: input.caseId, ...values })
    .run();
  recordEvent(tx, {
    actorId: null,
    entity: "case_outcome",
    entityId: input.caseId,
    studyId: input.studyId,
    caseId: input.caseId,
    action: outcome.status === "agreed" ? "gold_derived" : "disputed",
    changes: outcome.status === "agreed" ? { gold: [null, outcome.gold] } : { reason: outcome.reason },
    at: input.now,
  });
}
