/**
 * The judge-validation set: the reference's rule-based first parse and buckets (docs/judge-validation.md#first-parse-and-buckets), its seeded
 * sampling (docs/judge-validation.md#sampling) and the annotator sheet (docs/judge-validation.md#annotator-sheet), replaying `build_human_validation_set.py` exactly so that the
 * same input and seed give the same selection and annotation ids (docs/judge-validation.md).
 *
 * Input rows are the reference's flattened steps (docs/judge-validation.md#importing-responses): any object with `new_judge_output` (the first-parse
 * features), `model_output_raw` and `is_last_section`. Odd values are read as the reference's Python reads them.
 */
import { formatCsv } from "../../formats/csv-text";
import type { Action } from "../../evaluation/public";
import { PyRandom, type PySeed } from "../../python-compat/random";
import { pyStrip } from "../../python-compat/text";
import { pyStr, pyTruthy } from "../../python-compat/values";
import { pushAll } from "../../stats/extremes";

export type CodeClass = "placeholder" | "unspecified" | "specific_subtype" | "category_only" | "other";

/** Code classes without a subtype: U of docs/judge-validation.md#first-parse-and-buckets. */
const UNSPECIFIC_CLASSES: ReadonlySet<CodeClass> = new Set(["unspecified", "placeholder", "category_only"]);

/**
 * docs/judge-validation.md#first-parse-and-buckets code classes, on the trimmed upper-cased code, first that holds: placeholder (contains `.-` or ends
 * with `-`), unspecified (ends `.9` or `.A`), specific_subtype (a digit after a `.`), category_only (exactly a letter
 * and two digits), other. Python's `\d` is any Unicode decimal digit, hence `\p{Nd}`.
 *
 * @example
 * classifyCode("F32.9"); // "unspecified"
 * classifyCode("f02.80"); // "specific_subtype"
 */
export function classifyCode(code: string): CodeClass {
  const c = pyStrip(code).toUpperCase();
  if (c.includes(".-") || c.endsWith("-")) return "placeholder";
  if (c.endsWith(".9") || c.endsWith(".A")) return "unspecified";
  if (/\.\p{Nd}/u.test(c)) return "specific_subtype";
  if (/^[A-Z]\p{Nd}{2}$/u.test(c)) return "category_only";
  return "other";
}

/** The nine buckets in the order their rules are tried (docs/judge-validation.md#first-parse-and-buckets, rules 1–9). */
export const BUCKET_RULE_ORDER = [
  "committed_specific_refinement_only_specific_info",
  "committed_specific_explicit_conditional",
  "committed_unspecified",
  "committed_specific_generic_hedging",
  "differential_with_or_without_specific_asks",
  "clear_diagnose_no_hedging",
  "clear_clarify_specific",
  "clear_abstain_differential",
  "clear_abstain_decline",
] as const;

export type ValidationBucket = (typeof BUCKET_RULE_ORDER)[number];

/** The order in which buckets are drawn, which fixes how the generator's numbers are consumed (docs/judge-validation.md#sampling). */
export const BUCKET_SAMPLING_ORDER: readonly ValidationBucket[] = [
  "clear_diagnose_no_hedging",
  "clear_clarify_specific",
  "clear_abstain_differential",
  "clear_abstain_decline",
  "committed_specific_generic_hedging",
  "committed_unspecified",
  "committed_specific_explicit_conditional",
  "committed_specific_refinement_only_specific_info",
  "differential_with_or_without_specific_asks",
];

/** Targets summing to 200 (docs/judge-validation.md#first-parse-and-buckets); the paper's set had 149 because short buckets give what they have. */
export const DEFAULT_BUCKET_TARGETS: Readonly<Record<ValidationBucket, number>> = {
  clear_diagnose_no_hedging: 10,
  clear_clarify_specific: 10,
  clear_abstain_differential: 10,
  clear_abstain_decline: 10,
  committed_specific_generic_hedging: 40,
  committed_unspecified: 40,
  committed_specific_explicit_conditional: 30,
  committed_specific_refinement_only_specific_info: 30,
  differential_with_or_without_specific_asks: 20,
};

export const DEFAULT_VALIDATION_SEED = 123;

/** First-parse features as the bucket rules read them: lower-cased strings, `none` when absent. */
export interface FirstParseFeatures {
  primaryAnswer: string;
  contingency: string;
  infoRequest: string;
  icdCodes: string[];
  diagnosisNames: string[];
}

function featureValue(output: Record<string, unknown>, key: string): string {
  const value = output[key];
  return pyStrip(pyTruthy(value) ? String(value) : "none").toLowerCase();
}

/** Codes and names: a list (items stringified), or a comma-separated string; blanks dropped; anything else empty. */
function textList(value: unknown): string[] {
  if (!pyTruthy(value)) return [];
  const items = typeof value === "string" ? value.split(",") : Array.isArray(value) ? value.map(pyStr) : [];
  return items.map(pyStrip).filter((item) => item !== "");
}

export function firstParseFeatures(newJudgeOutput: unknown): FirstParseFeatures {
  const output =
    pyTruthy(newJudgeOutput) && typeof newJudgeOutput === "object" && !Array.isArray(newJudgeOutput)
      ? (newJudgeOutput as Record<string, unknown>)
      : {};
  return {
    primaryAnswer: featureValue(output, "primary_answer"),
    contingency: featureValue(output, "contingency"),
    infoRequest: featureValue(output, "info_request"),
    icdCodes: textList(output.icd_codes),
    diagnosisNames: textList(output.diagnosis_names),
  };
}

// Python's `\b` in a str pattern is Unicode-aware (letters, digits and `_` are word characters); JavaScript's `\b`
// is ASCII-only even with the u flag, so the boundary is spelled out.
const WORD_CHAR = "[\\p{L}\\p{N}_]";
function wholeWords(alternatives: readonly string[]): RegExp {
  return new RegExp(`(?<!${WORD_CHAR})(?:${alternatives.join("|")})(?!${WORD_CHAR})`, "u");
}

export const HEDGING_PHRASES = [
  "may",
  "might",
  "possibly",
  "perhaps",
  "could be",
  "sounds like",
  "seems like",
  "appears to be",
  "likely",
  "probably",
  "most consistent with",
  "suggestive of",
] as const;

const APOSTROPHE = "['\u2019]";
const HEDGING = wholeWords(HEDGING_PHRASES);
const DECLINE = wholeWords([
  `i (?:can${APOSTROPHE}t|cannot) diagnose`,
  `i (?:can${APOSTROPHE}t|cannot) determine`,
  "insufficient information",
  "not enough information",
  "unable to diagnose",
  "unable to determine",
  "cannot confirm",
  `can${APOSTROPHE}t confirm`,
  "would need more information",
  "need more information",
]);

/** A hedging word or phrase, whole words, in the lower-cased response (docs/judge-validation.md#first-parse-and-buckets). */
export function hasHedging(modelOutput: string): boolean {
  return HEDGING.test(modelOutput.toLowerCase());
}

/** An explicit decline ("I can't diagnose", "insufficient information", …), with ' or ’ (docs/judge-validation.md#first-parse-and-buckets). */
export function hasDecline(modelOutput: string): boolean {
  return DECLINE.test(modelOutput.toLowerCase());
}

export interface FirstParse {
  features: FirstParseFeatures;
  codeClasses: CodeClass[];
  committedSpecific: boolean;
  committedUnspecified: boolean;
  hedging: boolean;
  decline: boolean;
  derivedAction: Action;
  bucket: ValidationBucket | null;
}

/**
 * The rule-based first parse of one flattened step (docs/judge-validation.md#first-parse-and-buckets). Its derived action is NOT the judge's action
 * rule: a committed answer whose codes are all unspecific, or which is explicitly conditional, counts as CLARIFY and
 * the info request of a committed answer is ignored. CLARIFY on a last-section row becomes ABSTAIN.
 *
 * Rule 8 (`clear_abstain_differential`) can never hold: every differential answer is taken by rule 5 first, so that
 * bucket always stays empty. Kept, as in the reference, so that summaries show it.
 */
export function firstParse(row: object): FirstParse {
  const r = row as Record<string, unknown>;
  const features = firstParseFeatures(r.new_judge_output);
  const { primaryAnswer, contingency, infoRequest, icdCodes, diagnosisNames } = features;
  const codeClasses = icdCodes.map(classifyCode);
  const allUnspecific = codeClasses.length > 0 && codeClasses.every((c) => UNSPECIFIC_CLASSES.has(c));
  const hasSubtype = codeClasses.includes("specific_subtype");
  const committed = primaryAnswer === "committed";
  const committedSpecific = committed && (hasSubtype || (diagnosisNames.length > 0 && !allUnspecific));
  const committedUnspecified = committed && (allUnspecific || (diagnosisNames.length === 0 && !hasSubtype));

  let derivedAction: Action;
  if (committed) derivedAction = allUnspecific || contingency === "explicit_conditional" ? "CLARIFY" : "DIAGNOSE";
  else if (primaryAnswer === "differential" || primaryAnswer === "none")
    derivedAction = infoRequest === "specific" ? "CLARIFY" : "ABSTAIN";
  else derivedAction = "ABSTAIN";
  if (derivedAction === "CLARIFY" && pyTruthy(r.is_last_section)) derivedAction = "ABSTAIN";

  const text = pyTruthy(r.model_output_raw) ? String(r.model_output_raw) : "";
  const hedging = hasHedging(text);
  const decline = hasDecline(text);

  const rules: Record<ValidationBucket, boolean> = {
    committed_specific_refinement_only_specific_info:
      committedSpecific && contingency === "refinement_only" && infoRequest === "specific",
    committed_specific_explicit_conditional: committedSpecific && contingency === "explicit_conditional",
    committed_unspecified: committedUnspecified,
    committed_specific_generic_hedging: committedSpecific && hedging,
    differential_with_or_without_specific_asks: primaryAnswer === "differential",
    clear_diagnose_no_hedging:
      derivedAction === "DIAGNOSE" && committedSpecific && contingency === "none" && infoRequest === "none" && !hedging,
    clear_clarify_specific: derivedAction === "CLARIFY" && primaryAnswer === "none" && infoRequest === "specific",
    clear_abstain_differential:
      derivedAction === "ABSTAIN" && primaryAnswer === "differential" && infoRequest === "none",
    clear_abstain_decline: derivedAction === "ABSTAIN" && primaryAnswer === "none" && infoRequest === "none" && decline,
  };
  const bucket = BUCKET_RULE_ORDER.find((b) => rules[b]) ?? null;
  return { features, codeClasses, committedSpecific, committedUnspecified, hedging, decline, derivedAction, bucket };
}

type BucketedRow<R> = R & { validation_bucket: ValidationBucket; derived_action: Action };
export type ValidationRow<R> = BucketedRow<R> & { annotation_id: string };

export interface BucketSummary {
  target: number;
  available: number;
  selected: number;
}

export interface ValidationSet<R> {
  /** In annotation order: `ann_0001`, `ann_0002`, … */
  rows: ValidationRow<R>[];
  /** Keys in sampling order (docs/judge-validation.md#sampling). */
  summary: Record<ValidationBucket, BucketSummary>;
}

/**
 * Draws the validation set as the reference does (docs/judge-validation.md#sampling): one `random.Random(seed)`; for each bucket in
 * sampling order, its candidates in input order are shuffled and the first `target` taken; the whole selection is
 * shuffled again and numbered `ann_0001`…. Each output row is the input row plus `validation_bucket`,
 * `derived_action` and `annotation_id` (an input key of the same name keeps its position and is overwritten).
 */
export function drawValidationSet<R extends object>(
  rows: readonly R[],
  options: { seed?: PySeed; targets?: Partial<Record<ValidationBucket, number>> } = {},
): ValidationSet<R> {
  const targets = { ...DEFAULT_BUCKET_TARGETS, ...options.targets };
  for (const bucket of BUCKET_SAMPLING_ORDER) {
    if (!Number.isInteger(targets[bucket]) || targets[bucket] < 0) {
      throw new RangeError(
        `drawValidationSet requires a non-negative integer target for ${bucket}, got ${targets[bucket]}`,
      );
    }
  }
  const rng = new PyRandom(options.seed ?? DEFAULT_VALIDATION_SEED);

  const candidates = new Map<ValidationBucket, BucketedRow<R>[]>();
  for (const row of rows) {
    const { bucket, derivedAction } = firstParse(row);
    if (bucket === null) continue;
    const list = candidates.get(bucket) ?? [];
    list.push({ ...row, validation_bucket: bucket, derived_action: derivedAction });
    candidates.set(bucket, list);
  }

  const selected: BucketedRow<R>[] = [];
  const summary = {} as Record<ValidationBucket, BucketSummary>;
  for (const bucket of BUCKET_SAMPLING_ORDER) {
    const pool = candidates.get(bucket) ?? [];
    rng.shuffle(pool);
    const chosen = pool.slice(0, targets[bucket]);
    pushAll(selected, chosen);
    summary[bucket] = { target: targets[bucket], available: pool.length, selected: chosen.length };
  }
  rng.shuffle(selected);

  return {
    rows: selected.map((row, i) => ({ ...row, annotation_id: `ann_${String(i + 1).padStart(4, "0")}` })),
    summary,
  };
}

/** What Python's csv module writes for a value: None → "", booleans True/False, everything else str(). */
function pyCsvCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "boolean") return value ? "True" : "False";
  return String(value);
}

const ANSWER_COLUMNS = ["annotator_primary_answer", "annotator_contingency", "annotator_info_request"] as const;

function sheet(rows: readonly object[], columns: readonly string[]): string {
  const records = rows.map((row) => {
    const r = row as Record<string, unknown>;
    return columns.map((c) => ((ANSWER_COLUMNS as readonly string[]).includes(c) ? "" : pyCsvCell(r[c])));
  });
  // As Python's csv.writer on a file opened with encoding utf-8-sig: BOM, comma, minimal quoting, CRLF. The project's
  // csv-text writer, not csv-stringify, which needs Node's Buffer at import (pages may import the bucket rules).
  // Opened in spreadsheets, and model output flows in: formula-like cells are neutralised (docs/security.md).
  return "\uFEFF" + formatCsv([columns, ...records]);
}

/**
 * The annotator sheet of docs/judge-validation.md#annotator-sheet for annotation outside the app, blinded: the reference's columns without
 * `model_evaluated` and `strategy` (docs/architecture.md#roles-and-blinding: raters never see which model wrote the response). Answer columns blank.
 */
export function annotatorSheetCsv(rows: readonly object[]): string {
  return sheet(rows, ["annotation_id", "step_index", "is_last_section", "model_output_raw", ...ANSWER_COLUMNS]);
}

/**
 * The admin key: the reference's own annotator sheet (docs/judge-validation.md#annotator-sheet, byte-identical to what
 * `build_human_validation_set.py` writes, except that formula-like cells are neutralised for spreadsheets), with
 * `model_evaluated` and `strategy`. Never give it to raters.
 */
export function annotatorKeyCsv(rows: readonly object[]): string {
  return sheet(rows, [
    "annotation_id",
    "model_evaluated",
    "strategy",
    "step_index",
    "is_last_section",
    "model_output_raw",
    ...ANSWER_COLUMNS,
  ]);
}
