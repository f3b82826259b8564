/** The evaluation export of a MENTAT variant set (docs/mentat.md#evaluation-records). */
import { and, asc, eq } from "drizzle-orm";
import { mentatDatasets, mentatVariants } from "../../db/schema";
import type { Gender, VariantDimension } from "../expert-panel/domain/expert-scales";
import { evaluationRecord, intendedLabels, type QuestionLabels, type Variant } from "./domain/mentat";
import type { Db } from "../platform/db.server";
import { getBank } from "./banks.server";
import { loadQuestions } from "./questions.server";
import { getLatestFit } from "./fits.server";

export type ExportResult =
  | { ok: true; text: string; count: number; filename: string; warnings: string[] }
  | { ok: false; status: 404 | 409; message: string };

/**
 * The evaluation records of one variant set as JSONL (core/mentat evaluationRecord), in the set's order. Questions of
 * the preference domains carry the latest fit's labels and bounds; the others the intended answer. Refused when a
 * preference-domain question has no fitted label, unless `allowIntended` (then it keeps its intended answer and
 * the record says so in label_source).
 */
export function exportDataset(
  db: Db,
  input: { bankId: number; dimension: VariantDimension; allowIntended?: boolean },
): ExportResult {
  const bank = getBank(db, input.bankId);
  if (!bank) return { ok: false, status: 404, message: "No such bank." };
  const dataset = db
    .select()
    .from(mentatDatasets)
    .where(and(eq(mentatDatasets.bankId, bank.id), eq(mentatDatasets.dimension, input.dimension)))
    .get();
  if (!dataset)
    return {
      ok: false,
      status: 404,
      message: `The ${input.dimension} set has not been expanded yet. Expand it first.`,
    };
  const questions = new Map(loadQuestions(db, bank.id).map((q) => [q.id, q]));
  const fit = getLatestFit(db, bank.id);
  const fitted = new Map((fit?.result.labels.questions ?? []).map((q) => [q.question, q]));
  const warnings: string[] = [];
  if (fit?.stale) warnings.push("Ratings changed after the latest fit; run the fit again for current labels.");
  const labelsFor = new Map<number, QuestionLabels>();
  const unlabelled: string[] = [];
  for (const q of questions.values()) {
    const f = fitted.get(q.externalId);
    if (bank.preferenceDomains.includes(q.domain) && f)
      labelsFor.set(q.id, { source: "preference", labels: f.labels, lower: f.lower, upper: f.upper });
    else {
      if (bank.preferenceDomains.includes(q.domain)) unlabelled.push(q.externalId);
      labelsFor.set(q.id, intendedLabels(q.answer));
    }
  }
  if (unlabelled.length && !input.allowIntended)
    return {
      ok: false,
      status: 409,
      message: `${unlabelled.length} ${bank.preferenceDomains.join(
        "/",
      )} question(s) have no fitted preference label (${unlabelled.slice(0, 5).join(", ")}${
        unlabelled.length > 5 ? ", …" : ""
      }). Run the fit, or export with their intended answers.`,
    };
  if (unlabelled.length)
    warnings.push(`${unlabelled.length} preference-domain question(s) keep their intended answer (no fitted label).`);
  const variants = db
    .select()
    .from(mentatVariants)
    .where(eq(mentatVariants.datasetId, dataset.id))
    .orderBy(asc(mentatVariants.position))
    .all();
  const lines = variants.map((v) => {
    const q = questions.get(v.questionId)!;
    const variant: Variant = {
      variantId: v.variantId,
      questionId: q.externalId,
      dimension: input.dimension,
      gender: v.gender as Gender | null,
      age: v.age,
      race: v.race,
      text: v.text,
    };
    return JSON.stringify(evaluationRecord(variant, q, labelsFor.get(q.id)!, bank.seed));
  });
  const slug = bank.name.replace(/[^A-Za-z0-9._-]+/g, "_");
  return {
    ok: true,
    text: lines.join("\n") + (lines.length ? "\n" : ""),
    count: lines.length,
    filename: `${slug}.${input.dimension}.jsonl`,
    warnings,
  };
}
