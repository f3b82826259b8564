/**
 * Every coefficient of docs/statistics.md for one rating table, in the shape the `agreement` command prints with --json.
 * The snake_case key names are a documented interface (docs/statistics.md#the-agreement-command): scripts depend on them, so change them only
 * together with their readers.
 */
import { fleissKappa, gwetAc1, gwetAc2, percentAgreement } from "./chance-corrected";
import { cohenKappa, cohenWeightedKappa, confusionMatrix } from "./cohen";
import { krippendorffAlpha, type MeasurementLevel } from "./krippendorff";
import type { RatingTable } from "./rating-table";
import type { Estimate, IntervalEstimate } from "./result";

export type Scale = MeasurementLevel;
export type OrdinalWeights = "linear" | "quadratic";

export interface IntervalSummary {
  value: number | null;
  se: number | null;
  /** 95% Student-t interval, upper bound capped at 1 (irrCAC); null when the standard error is undefined. */
  ci95: [number, number] | null;
}

export interface AgreementSummary {
  /** Items with at least one rating. */
  n_items: number;
  n_raters: number;
  categories: string[];
  scale: Scale;
  /** Present when scale is ordinal or interval. */
  weights?: OrdinalWeights;
  /** A fraction in [0, 1]. */
  percent_agreement: number | null;
  /** Only with exactly two raters. */
  cohen_kappa?: number | null;
  gwet_ac1: IntervalSummary;
  fleiss_kappa: number | null;
  /** At the level given by `scale`. */
  krippendorff_alpha: number | null;
  /** Only with exactly two raters and an ordinal or interval scale. */
  cohen_kappa_weighted?: number | null;
  /** Only with an ordinal or interval scale. */
  gwet_ac2?: IntervalSummary;
  /** Only with exactly two raters: counts[k][l] = items labelled categories[k] by raters[0], categories[l] by raters[1]. */
  confusion?: { raters: [string, string]; categories: string[]; counts: number[][]; n_items: number };
  /** Why a coefficient is null, and notes about the input (e.g. collapsed duplicate rows). */
  warnings: string[];
}

export interface SummaryOptions {
  /** Default "nominal". */
  scale?: Scale;
  /** Weights of cohen_kappa_weighted and gwet_ac2 when scale is ordinal or interval; default "quadratic". */
  weights?: OrdinalWeights;
  /** Warnings about the input to report first (e.g. from parseRatingsCsv). */
  warnings?: readonly string[];
}

/**
 * Computes percent agreement, Cohen's kappa (two raters), Gwet's AC1, Fleiss' kappa, Krippendorff's alpha at the
 * chosen level, the confusion matrix (two raters) and, for ordinal or interval scales, Cohen's weighted kappa and
 * Gwet's AC2. An undefined coefficient is null and has a warning that says why.
 */
export function summariseAgreement(table: RatingTable, options: SummaryOptions = {}): AgreementSummary {
  const scale = options.scale ?? "nominal";
  const weighted = scale !== "nominal";
  const weights = options.weights ?? "quadratic";
  const warnings = [...(options.warnings ?? [])];
  const twoRaters = table.raters.length === 2;

  const number = (key: string, estimate: Estimate): number | null => {
    if (estimate.value === null) warnings.push(`${key}: ${estimate.reason}`);
    return estimate.value;
  };
  const interval = (key: string, estimate: IntervalEstimate): IntervalSummary => {
    if (estimate.value === null) warnings.push(`${key}: ${estimate.reason}`);
    else if (estimate.standardError === null) warnings.push(`${key}.se: ${estimate.standardErrorReason}`);
    return { value: estimate.value, se: estimate.standardError, ci95: estimate.confidenceInterval };
  };

  const percent = number("percent_agreement", percentAgreement(table));
  const cohen = twoRaters ? number("cohen_kappa", cohenKappa(table)) : undefined;
  const ac1 = interval("gwet_ac1", gwetAc1(table));
  const fleiss = number("fleiss_kappa", fleissKappa(table));
  const alpha = number("krippendorff_alpha", krippendorffAlpha(table, scale));
  const cohenWeighted =
    weighted && twoRaters ? number("cohen_kappa_weighted", cohenWeightedKappa(table, weights)) : undefined;
  const ac2 = weighted ? interval("gwet_ac2", gwetAc2(table, weights)) : undefined;
  const confusion = twoRaters ? confusionMatrix(table).value : null;

  return {
    n_items: table.items.length,
    n_raters: table.raters.length,
    categories: [...table.categories],
    scale,
    ...(weighted ? { weights } : {}),
    percent_agreement: percent,
    ...(cohen !== undefined ? { cohen_kappa: cohen } : {}),
    gwet_ac1: ac1,
    fleiss_kappa: fleiss,
    krippendorff_alpha: alpha,
    ...(cohenWeighted !== undefined ? { cohen_kappa_weighted: cohenWeighted } : {}),
    ...(ac2 !== undefined ? { gwet_ac2: ac2 } : {}),
    ...(confusion
      ? {
          confusion: {
            raters: confusion.raters,
            categories: [...confusion.categories],
            counts: confusion.counts,
            n_items: confusion.nItems,
          },
        }
      : {}),
    warnings,
  };
}
