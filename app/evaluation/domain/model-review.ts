/**
 * Clinician review of model steps (docs/evaluation.md, "Clinician review of model steps"): which step of a
 * trajectory is reviewed, which sections the reviewer sees, who reviews what in which order, the reviewer's values,
 * and the two summaries the admin reads — how many steps of each failure were judged defensible, and the reviewers'
 * agreement with the project's statistics (app/stats). Pure: seeds are passed in.
 */
import { z } from "zod";
import { PyRandom } from "../../python-compat/random";
import { percentAgreement, gwetAc1 } from "../../stats/chance-corrected";
import { cohenKappa } from "../../stats/cohen";
import { buildRatingTable, type RatingRow } from "../../stats/rating-table";
import { TEXT_LIMITS, tooLongMessage } from "../../work-items/domain/text-limits";
import { FAILURE_FILTERS, type FailureFilter } from "./failures";

/** The scale: clinically defensible, yes or no (docs/evaluation.md, "Clinician review of model steps": why binary). */
export const DEFENSIBLE = ["yes", "no"] as const;
export type Defensible = (typeof DEFENSIBLE)[number];

/** The reviewer's values: one schema for the page and the server (parseDraftPost, schemaFieldErrors). */
export const ModelReviewValuesSchema = z.object({
  defensible: z.enum(DEFENSIBLE).nullable().default(null),
  reason: z.string().max(TEXT_LIMITS.comment, tooLongMessage("A reason", TEXT_LIMITS.comment)).default(""),
});
export type ModelReviewValues = z.infer<typeof ModelReviewValuesSchema>;

/** A submission needs the judgement and the reason why. */
export function checkModelReview(v: ModelReviewValues): Record<string, string> {
  const e: Record<string, string> = {};
  if (!v.defensible) e.defensible = "Say whether the step is clinically defensible.";
  if (!v.reason.trim()) e.reason = "Say why.";
  return e;
}

/** Most model steps one review may hold (a larger set is sent as a random sample: `limit`). */
export const MAX_REVIEW_ITEMS = 2000;

/**
 * The step of a trajectory a review shows: its first diagnosis (a premature diagnosis, a wrong code), else its last
 * step (where it abstained, or ended without a diagnosis).
 */
export function reviewedStep(t: { firstDiagnosis: number | null; stepsExecuted: number }): number {
  return t.firstDiagnosis ?? Math.max(1, t.stepsExecuted);
}

/**
 * How many sections of the note the model had seen at a step: all T under full information, else the step's section
 * (its recorded order, else its index), at most T.
 */
export function revealedSections(
  strategy: string,
  step: { stepIndex: number; sectionOrder: number | null },
  T: number,
) {
  if (strategy.startsWith("full_info")) return T;
  return Math.max(1, Math.min(T, step.sectionOrder ?? step.stepIndex));
}

export interface PlannedLabel {
  /** Index into the items given. */
  item: number;
  reviewer: string;
  /** The reviewer's own order, 0-based. */
  position: number;
}

/**
 * Who reviews which item, and in which order. Items go to the reviewers in turn (`perItem` distinct reviewers each,
 * so the load differs by at most `perItem` between reviewers); each reviewer's items are shuffled with `seed`
 * (Python's `random`, docs/formats.md, "Python-compatible behaviours"), so that nothing about a model, a strategy or
 * a seed is told by the order.
 */
export function planReviewLabels(items: number, reviewers: readonly string[], perItem: 1 | 2, seed: number) {
  if (reviewers.length < perItem) throw new RangeError("fewer reviewers than reviewers per item");
  const rng = new PyRandom(seed);
  const order = Array.from({ length: items }, (_, i) => i);
  rng.shuffle(order);
  const mine = new Map<string, number[]>(reviewers.map((r) => [r, []]));
  order.forEach((item, k) => {
    for (let j = 0; j < perItem; j++) mine.get(reviewers[(k * perItem + j) % reviewers.length]!)!.push(item);
  });
  const out: PlannedLabel[] = [];
  for (const reviewer of reviewers) {
    const list = mine.get(reviewer)!;
    rng.shuffle(list);
    list.forEach((item, position) => out.push({ item, reviewer, position }));
  }
  return out;
}

/** One submitted label, as the summaries read it. */
export interface SubmittedLabel {
  item: number;
  reviewer: string;
  defensible: Defensible;
}

export interface ReviewedItem {
  item: number;
  model: string;
  failures: readonly string[];
}

export interface DefensibleRow {
  failure: FailureFilter | "any";
  model: string;
  /** Items with at least one submitted label. */
  reviewed: number;
  /** Items every submitted label of which says defensible. */
  defensible: number;
  /** Items whose reviewers disagree. */
  split: number;
  /** defensible ÷ reviewed, or null when nothing was reviewed. */
  share: number | null;
}

/**
 * Of the reviewed steps of each failure and model, how many were judged defensible: an item counts as defensible
 * when every reviewer who submitted said yes, as split when they disagree. Rows per failure (in the case list's
 * order, then "any" for every item) and per model (then "all models").
 */
export function defensibleSummary(items: readonly ReviewedItem[], labels: readonly SubmittedLabel[]): DefensibleRow[] {
  const byItem = new Map<number, Defensible[]>();
  for (const l of labels) byItem.set(l.item, [...(byItem.get(l.item) ?? []), l.defensible]);
  const models = [...new Set(items.map((i) => i.model))].sort();
  const rows: DefensibleRow[] = [];
  for (const failure of [...FAILURE_FILTERS, "any"] as const)
    for (const model of [...models, ""]) {
      const chosen = items.filter(
        (i) => (failure === "any" || i.failures.includes(failure)) && (model === "" || i.model === model),
      );
      if (chosen.length === 0) continue;
      let reviewed = 0;
      let defensible = 0;
      let split = 0;
      for (const i of chosen) {
        const got = byItem.get(i.item);
        if (!got?.length) continue;
        reviewed++;
        if (got.every((d) => d === "yes")) defensible++;
        else if (got.some((d) => d === "yes")) split++;
      }
      rows.push({ failure, model, reviewed, defensible, split, share: reviewed ? defensible / reviewed : null });
    }
  return rows;
}

export interface ReviewAgreement {
  /** Items with two submitted labels. */
  items: number;
  percentAgreement: number | null;
  /** Gwet's AC1 over every pair of labels (any reviewers). */
  ac1: number | null;
  /** Cohen's κ, when exactly two reviewers labelled the items reviewed twice; null otherwise (`kappaReason`). */
  kappa: number | null;
  kappaReason: string | null;
}

/**
 * The reviewers' agreement on the items two of them submitted (docs/statistics.md): percent agreement and Gwet's
 * AC1 for any reviewers, Cohen's κ when exactly two reviewers labelled them, with the categories fixed to yes and no.
 */
export function reviewAgreement(labels: readonly SubmittedLabel[]): ReviewAgreement {
  const count = new Map<number, number>();
  for (const l of labels) count.set(l.item, (count.get(l.item) ?? 0) + 1);
  const rows: RatingRow[] = labels
    .filter((l) => (count.get(l.item) ?? 0) >= 2)
    .map((l) => ({ item: String(l.item), rater: l.reviewer, label: l.defensible }));
  const items = new Set(rows.map((r) => r.item)).size;
  if (items === 0)
    return {
      items,
      percentAgreement: null,
      ac1: null,
      kappa: null,
      kappaReason: "no step was reviewed by two reviewers",
    };
  const table = buildRatingTable(rows, { categories: DEFENSIBLE });
  const raters = new Set(rows.map((r) => r.rater)).size;
  const kappa = raters === 2 ? cohenKappa(table) : null;
  return {
    items,
    percentAgreement: percentAgreement(table).value,
    ac1: gwetAc1(table).value,
    kappa: kappa?.value ?? null,
    kappaReason: kappa
      ? kappa.value === null
        ? (kappa.reason ?? null)
        : null
      : "Cohen's κ needs exactly two reviewers",
  };
}
