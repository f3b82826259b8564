/**
 * Response features, the action rule and the judge-output parser (docs/judge-validation.md#response-features-and-the-action-rule, docs/formats.md#trajectoriesjsonl,
 * docs/evaluation.md#judge-parse-and-mapping, docs/judge-validation.md#label-normalisation). The judge (an LLM or a human rater) extracts features from a model's free-text answer; the action follows
 * from the features by a fixed rule, never from the judge's own opinion.
 */
import { pySplitLines, pyStrip } from "../../python-compat/text";

export const PRIMARY_ANSWERS = ["committed", "differential", "none"] as const;
export type PrimaryAnswer = (typeof PRIMARY_ANSWERS)[number];

export const INFO_REQUESTS = ["specific", "generic_only", "none"] as const;
export type InfoRequest = (typeof INFO_REQUESTS)[number];

/** Only the reference's first-parse re-judge emits it (docs/judge-validation.md#importing-responses); `judge.txt` has no CONTINGENCY feature. */
export const CONTINGENCIES = ["none", "explicit_conditional", "refinement_only"] as const;

export const ACTIONS = ["DIAGNOSE", "CLARIFY", "ABSTAIN"] as const;
export type Action = (typeof ACTIONS)[number];

/** The casing the reference writes in `judge_action` and `structured_action_raw.action` (docs/formats.md#trajectoriesjsonl). */
export type ReferenceAction = "Diagnose" | "Clarify" | "Abstain";

const REFERENCE_ACTION: Record<Action, ReferenceAction> = {
  DIAGNOSE: "Diagnose",
  CLARIFY: "Clarify",
  ABSTAIN: "Abstain",
};

export function toReferenceAction(action: Action): ReferenceAction {
  return REFERENCE_ACTION[action];
}

/** Reads an action in any casing (the scripts trim and lower-case it, docs/evaluation.md#compat-mode-the-reference-scripts); null if it is not one. */
export function parseAction(value: string | null | undefined): Action | null {
  if (value == null) return null;
  const upper = pyStrip(value).toUpperCase();
  return (ACTIONS as readonly string[]).includes(upper) ? (upper as Action) : null;
}

export function isPrimaryAnswer(value: string): value is PrimaryAnswer {
  return (PRIMARY_ANSWERS as readonly string[]).includes(value);
}

export function isInfoRequest(value: string): value is InfoRequest {
  return (INFO_REQUESTS as readonly string[]).includes(value);
}

export interface ResponseFeatures {
  primaryAnswer: PrimaryAnswer | null;
  infoRequest: InfoRequest | null;
  icdCodes: string[];
  diagnosisNames: string[];
}

/**
 * The action rule of docs/judge-validation.md, docs/evaluation.md#judge-parse-and-mapping: committed → CLARIFY if the request is specific, else DIAGNOSE;
 * differential or none → CLARIFY if specific, else ABSTAIN. A missing feature counts as `none`, as the reference's
 * `derive_action` does. With `isLastSection`, CLARIFY becomes ABSTAIN: there is nothing left to reveal.
 *
 * @example
 * actionFromFeatures({ primaryAnswer: "committed", infoRequest: "specific" }); // "CLARIFY"
 * actionFromFeatures({ primaryAnswer: "committed", infoRequest: "specific" }, { isLastSection: true }); // "ABSTAIN"
 */
export function actionFromFeatures(
  features: Pick<ResponseFeatures, "primaryAnswer" | "infoRequest">,
  options: { isLastSection?: boolean } = {},
): Action {
  const primary = features.primaryAnswer ?? "none";
  const specific = features.infoRequest === "specific";
  const action: Action =
    primary === "committed" ? (specific ? "CLARIFY" : "DIAGNOSE") : specific ? "CLARIFY" : "ABSTAIN";
  return action === "CLARIFY" && options.isLastSection ? "ABSTAIN" : action;
}

export type JudgeParseProblemKind =
  "empty_output" | "skipped_line" | "unknown_key" | "unknown_value" | "repeated_key" | "missing_key";

export interface JudgeParseProblem {
  kind: JudgeParseProblemKind;
  /** 1-based line number in the judge output (Python `splitlines` numbering); null for missing keys. */
  line: number | null;
  key: string | null;
  /** The trimmed line (or value) that caused the problem; "" when there is none. */
  text: string;
  message: string;
}

export interface ParsedJudgeOutput {
  features: ResponseFeatures;
  problems: JudgeParseProblem[];
}

const JUDGE_KEYS = ["PRIMARY_ANSWER", "INFO_REQUEST", "ICD_CODES", "DIAGNOSIS_NAMES"] as const;
type JudgeKey = (typeof JUDGE_KEYS)[number];

/** `ICD_CODES` / `DIAGNOSIS_NAMES`: null (keep the previous value) if empty or `empty` in any case. */
function parseList(value: string): string[] | null {
  if (value === "" || value.toLowerCase() === "empty") return null;
  return value
    .split(",")
    .map(pyStrip)
    .filter((item) => item !== "");
}

/**
 * Parses a judge's text output with the reference's exact rules (docs/evaluation.md#judge-parse-and-mapping, `src/judge.py`): per line, trim;
 * skip lines without `:`; split at the first `:`; key trimmed and upper-cased, value trimmed. PRIMARY_ANSWER and
 * INFO_REQUEST are lower-cased and kept only if in their domain; ICD_CODES and DIAGNOSIS_NAMES are comma-split,
 * trimmed, blanks dropped, and left as they were when the value is empty or `empty`.
 *
 * "Later lines win" only for values the reference accepts: a later unknown PRIMARY_ANSWER, or a later empty
 * ICD_CODES, leaves the earlier value in place (the reference only assigns accepted values). Everything it could
 * not use is listed in `problems`; the features are exactly what the reference would have produced.
 */
export function parseJudgeOutput(raw: string): ParsedJudgeOutput {
  const features: ResponseFeatures = { primaryAnswer: null, infoRequest: null, icdCodes: [], diagnosisNames: [] };
  const problems: JudgeParseProblem[] = [];
  const seenOn = new Map<JudgeKey, number[]>();

  if (pyStrip(raw) === "") {
    problems.push({ kind: "empty_output", line: null, key: null, text: "", message: "the judge output is empty" });
    return { features, problems };
  }

  pySplitLines(raw).forEach((rawLine, index) => {
    const lineNumber = index + 1;
    const line = pyStrip(rawLine);
    if (line === "") return;
    const colon = line.indexOf(":");
    if (colon < 0) {
      problems.push({
        kind: "skipped_line",
        line: lineNumber,
        key: null,
        text: line,
        message: `line ${lineNumber} has no ':' and was skipped`,
      });
      return;
    }
    const key = pyStrip(line.slice(0, colon)).toUpperCase();
    const value = pyStrip(line.slice(colon + 1));
    if (!(JUDGE_KEYS as readonly string[]).includes(key)) {
      problems.push({
        kind: "unknown_key",
        line: lineNumber,
        key,
        text: line,
        message: `line ${lineNumber}: unknown key ${JSON.stringify(key)} was ignored`,
      });
      return;
    }
    const judgeKey = key as JudgeKey;
    seenOn.set(judgeKey, [...(seenOn.get(judgeKey) ?? []), lineNumber]);

    if (judgeKey === "PRIMARY_ANSWER" || judgeKey === "INFO_REQUEST") {
      const lower = value.toLowerCase();
      if (judgeKey === "PRIMARY_ANSWER" && isPrimaryAnswer(lower)) features.primaryAnswer = lower;
      else if (judgeKey === "INFO_REQUEST" && isInfoRequest(lower)) features.infoRequest = lower;
      else {
        const domain = (judgeKey === "PRIMARY_ANSWER" ? PRIMARY_ANSWERS : INFO_REQUESTS).join(", ");
        problems.push({
          kind: "unknown_value",
          line: lineNumber,
          key: judgeKey,
          text: value,
          message: `line ${lineNumber}: ${judgeKey} ${JSON.stringify(value)} is not one of ${domain} and was ignored`,
        });
      }
      return;
    }
    const list = parseList(value);
    if (list === null) return;
    if (judgeKey === "ICD_CODES") features.icdCodes = list;
    else features.diagnosisNames = list;
  });

  for (const key of JUDGE_KEYS) {
    const lines = seenOn.get(key);
    if (!lines) {
      problems.push({ kind: "missing_key", line: null, key, text: "", message: `no ${key} line` });
    } else if (lines.length > 1) {
      problems.push({
        kind: "repeated_key",
        line: lines[lines.length - 1],
        key,
        text: "",
        message: `${key} appears on lines ${lines.join(", ")}; the last accepted value was kept`,
      });
    }
  }
  return { features, problems };
}

/** `structured_action_raw` as the reference writes it in trajectories (docs/formats.md#trajectoriesjsonl), keys in its order. */
export interface StructuredActionRaw {
  primary_answer: PrimaryAnswer | null;
  info_request: InfoRequest | null;
  icd_codes: string[];
  diagnosis_names: string[];
  action: ReferenceAction | null;
}

export function toStructuredActionRaw(features: ResponseFeatures, action: Action | null): StructuredActionRaw {
  return {
    primary_answer: features.primaryAnswer,
    info_request: features.infoRequest,
    icd_codes: [...features.icdCodes],
    diagnosis_names: [...features.diagnosisNames],
    action: action === null ? null : toReferenceAction(action),
  };
}

export interface JudgedResponse extends ParsedJudgeOutput {
  action: Action;
  structuredActionRaw: StructuredActionRaw;
}

/** Parse a judge output and map it to an action, as the reference's `run_judge` does for one step. */
export function judgeResponse(raw: string, options: { isLastSection: boolean }): JudgedResponse {
  const parsed = parseJudgeOutput(raw);
  const action = actionFromFeatures(parsed.features, options);
  return { ...parsed, action, structuredActionRaw: toStructuredActionRaw(parsed.features, action) };
}

const MISSING_LABELS = new Set(["", "nan", "null", "none/null"]);
const NONE_ALIASES = new Set(["no", "n/a", "na", "not_applicable", "not applicable"]);

/**
 * Label normalisation of the judge-validation scores (docs/judge-validation.md#label-normalisation): trim, lower-case; "", nan, null and none/null
 * are missing (null); no, n/a, na, not_applicable and not applicable mean `none`. Other values pass through.
 */
export function normaliseLabel(value: string | null | undefined): string | null {
  if (value == null) return null;
  const label = pyStrip(value).toLowerCase();
  if (MISSING_LABELS.has(label)) return null;
  return NONE_ALIASES.has(label) ? "none" : label;
}

/**
 * A rater's action in judge validation (docs/judge-validation.md#response-features-and-the-action-rule): the action rule without the last-section re-mapping, since
 * raters judge the response itself. Unlike the judge, a rater who left a feature blank casts no vote (null).
 */
export function raterAction(primaryAnswer: PrimaryAnswer | null, infoRequest: InfoRequest | null): Action | null {
  if (primaryAnswer === null || infoRequest === null) return null;
  return actionFromFeatures({ primaryAnswer, infoRequest });
}
