/**
 * Rater quality of a Safe-Psych study (docs/rater-quality.md): the settings a study may switch on, and the report —
 * each annotator's self-consistency (test–retest: the first label against the second of the same case) and accuracy
 * against calibration references. The agreement figures are the study report's own functions
 * (app/study-report/domain/study-report-agreement.ts), applied to (first, second) or (reference, annotator) pairs in
 * place of (Annotator A, Annotator B), so each statistic means the same as in the inter-rater report.
 */
import { z } from "zod";
import type { CaseLabel } from "../../labels/labels";
import { parseIcd10 } from "../../icd10/icd10";
import {
  diagnosisAgreement,
  earliestSectionAgreement,
  NO_PAIRS,
  NO_SUFFICIENT_PAIRS,
  Reasons,
  sufficiencyAgreement,
  type SufficientPair,
} from "../../study-report/public";
import type { DiagnosisAgreement, EarliestSectionAgreement, SufficiencyAgreement } from "../../study-report/public";

const share = z.coerce
  .number({ message: "Give a share between 0 and 0.5, e.g. 0.10." })
  .min(0, "A share is at least 0.")
  .max(0.5, "At most half of the work can be retest or calibration cases (0.5).");
const whole = (what: string, max: number) =>
  z.coerce
    .number({ message: `${what} must be a whole number.` })
    .int(`${what} must be a whole number.`)
    .min(0, `${what} is at least 0.`)
    .max(max, `${what} is at most ${max}.`);

/** What a study can switch on; everything off (0, false, null) is a study without rater quality. */
export const QualitySettingsSchema = z.object({
  retestFraction: share,
  washoutCases: whole("The wash-out in cases", 10_000),
  washoutDays: whole("The wash-out in days", 365),
  seed: whole("The seed", 2 ** 31),
  calibrationRate: share,
  training: z.boolean(),
  accuracyThreshold: z.coerce
    .number({ message: "Give the accuracy threshold as a share between 0 and 1, e.g. 0.8." })
    .min(0, "The accuracy threshold is at least 0.")
    .max(1, "The accuracy threshold is at most 1.")
    .nullable(),
});
export type QualitySettings = z.infer<typeof QualitySettingsSchema>;

export const QUALITY_OFF: QualitySettings = {
  retestFraction: 0,
  washoutCases: 0,
  washoutDays: 0,
  seed: 1,
  calibrationRate: 0,
  training: false,
  accuracyThreshold: null,
};

/** Whether anything of rater quality is on: then the study's pages address and name items opaquely. */
export const qualityOn = (s: QualitySettings | null): boolean =>
  Boolean(s && (s.retestFraction > 0 || s.calibrationRate > 0 || s.training));

/** One pair of labels of one case, with the case's number of sections. */
export interface LabelPair {
  first: CaseLabel;
  second: CaseLabel;
  numSections: number;
}

export interface PairFigures {
  n: number;
  sufficiency: SufficiencyAgreement;
  diagnosis: DiagnosisAgreement;
  earliest_section: EarliestSectionAgreement;
  /** Why a figure is null, by its path. */
  reasons: Record<string, string>;
}

/** Sufficiency (% agreement, Cohen's κ, AC1 with its interval), diagnosis at three levels and earliest section. */
export function pairFigures(pairs: readonly LabelPair[]): PairFigures {
  const reasons = new Reasons();
  const sufficient: SufficientPair[] = pairs.flatMap((p) =>
    p.first.sufficiency === "sufficient" && p.second.sufficiency === "sufficient"
      ? [[p.first, p.second, p.numSections] as const]
      : [],
  );
  return {
    n: pairs.length,
    sufficiency: sufficiencyAgreement(
      pairs.map((p) => [p.first, p.second] as const),
      reasons,
    ),
    diagnosis: diagnosisAgreement(sufficient, reasons, []),
    earliest_section: earliestSectionAgreement(sufficient, reasons),
    reasons: reasons.byPath,
  };
}

export interface AnnotatorPairs {
  annotator: string;
  pairs: LabelPair[];
}

export interface RetestReport {
  annotators: ({ annotator: string } & PairFigures)[];
  pooled: PairFigures;
}

/** Why a test–retest figure is empty, in the report's own words (not the inter-rater report's "primary annotations"). */
export const NO_RETEST = "no retest has been submitted yet";
export const NO_SUFFICIENT_RETEST = "no retest was called sufficient both times";
const RETEST_WORDING: Record<string, string> = { [NO_PAIRS]: NO_RETEST, [NO_SUFFICIENT_PAIRS]: NO_SUFFICIENT_RETEST };

/** pairFigures over (first label, retest label) pairs, its reasons worded for a retest. */
function retestFigures(pairs: readonly LabelPair[]): PairFigures {
  const figures = pairFigures(pairs);
  const reasons = Object.fromEntries(
    Object.entries(figures.reasons).map(([path, reason]) => [path, RETEST_WORDING[reason] ?? reason]),
  );
  return { ...figures, reasons };
}

/** Test–retest per annotator and pooled over annotators (each pair is one annotator's first and second label). */
export function retestReport(input: readonly AnnotatorPairs[]): RetestReport {
  return {
    annotators: input.map((a) => ({ annotator: a.annotator, ...retestFigures(a.pairs) })),
    pooled: retestFigures(input.flatMap((a) => a.pairs)),
  };
}

export interface Accuracy {
  n: number;
  n_correct: number;
  accuracy: number | null;
}

const accuracyOf = (hits: readonly boolean[]): Accuracy => ({
  n: hits.length,
  n_correct: hits.filter(Boolean).length,
  accuracy: hits.length ? hits.filter(Boolean).length / hits.length : null,
});

export interface CalibrationAccuracy {
  annotator: string;
  n: number;
  sufficiency: Accuracy;
  /** Over the cases both the reference and the annotator call sufficient, as in diagnosis agreement. */
  diagnosis_level: Accuracy;
  category: Accuracy;
  group: Accuracy;
  earliest_section: Accuracy;
  /** The figures below the study's threshold (sufficiency and diagnosis level), empty without a threshold. */
  below: ("sufficiency" | "diagnosis_level")[];
}

/**
 * Accuracy against the reference: the share of calibration cases where the annotator's label equals the reference —
 * sufficiency over all of them; diagnosis (code at diagnosis level, category, WHO block) and the earliest section
 * over the cases both call sufficient. `pairs` hold the reference as `first` and the annotator's label as `second`.
 */
export function calibrationAccuracy(
  annotator: string,
  pairs: readonly LabelPair[],
  threshold: number | null,
): CalibrationAccuracy {
  const both = pairs.flatMap((p) =>
    p.first.sufficiency === "sufficient" && p.second.sufficiency === "sufficient" ? [[p.first, p.second] as const] : [],
  );
  const level = (f: (code: ReturnType<typeof parseIcd10>) => string | null) =>
    accuracyOf(
      both.flatMap(([r, a]) => {
        const x = parseIcd10(r.icd10);
        const y = parseIcd10(a.icd10);
        const fx = f(x);
        const fy = f(y);
        return fx === null || fy === null ? [] : [fx === fy];
      }),
    );
  const result: CalibrationAccuracy = {
    annotator,
    n: pairs.length,
    sufficiency: accuracyOf(pairs.map((p) => p.first.sufficiency === p.second.sufficiency)),
    diagnosis_level: level((p) => (p.ok ? p.diagnosisLevel : null)),
    category: level((p) => (p.ok ? p.category : null)),
    group: level((p) => (p.ok ? p.block : null)),
    earliest_section: accuracyOf(both.map(([r, a]) => r.earliestSection === a.earliestSection)),
    below: [],
  };
  if (threshold !== null)
    for (const key of ["sufficiency", "diagnosis_level"] as const) {
      const a = result[key].accuracy;
      if (a !== null && a < threshold) result.below.push(key);
    }
  return result;
}
