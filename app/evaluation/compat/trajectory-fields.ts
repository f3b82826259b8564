/** The step fields several evaluation scripts read the same way: the action A, the code X, and a row of match flags. */
import {
  compatCategory,
  compatDiagnosisLevel,
  compatGroup,
  type CompatGroupVariant,
  compatMatches,
  compatNormalizeIcd10,
} from "../../icd10/icd10";
import { get, isDict, normalizeText, type Py, ScriptCrash, pyTruthy, typeName } from "./python-semantics";

/** Action A (docs/evaluation.md#compat-mode-the-reference-scripts): re-judge overrides, then judge_action; the seed script checks structured_action_raw first. */
export function actionA(step: Py, withStructured = false): string {
  if (pyTruthy(get(step, "new_judge_action"))) return normalizeText(get(step, "new_judge_action")).toLowerCase();
  const nj = get(step, "new_judge_output", {});
  if (pyTruthy(get(nj, "action"))) return normalizeText(get(nj, "action")).toLowerCase();
  if (withStructured) {
    const structured = get(step, "structured_action_raw");
    if (isDict(structured) && pyTruthy(get(structured, "action")))
      return normalizeText(get(structured, "action")).toLowerCase();
  }
  return normalizeText(get(step, "judge_action")).toLowerCase();
}

const CODE_FIELD = /predicted_icd10_codes:\s*(.*)/i;
// Python 3's \b, \w and \d are Unicode-aware: word characters are letters, digits and "_".
const CODE_PATTERN = /(?<![\p{L}\p{N}_])([A-Za-z]\p{Nd}{2}(?:\.[0-9A-Za-z]+)?)(?![\p{L}\p{N}_])/gu;

/** X (docs/evaluation.md#compat-mode-the-reference-scripts): the first code-like token of a judge output (after `predicted_icd10_codes:` if present), N-normalised. */
export function extractCodeX(text: Py): string | null {
  if (!pyTruthy(text)) return null;
  if (typeof text !== "string")
    throw new ScriptCrash(`TypeError: expected string or bytes-like object, got '${typeName(text)}'`);
  const field = CODE_FIELD.exec(text);
  const haystack = field ? field[1] : text;
  const first = [...haystack.matchAll(CODE_PATTERN)][0];
  return first ? compatNormalizeIcd10(first[1]) : null;
}

export function matchRow(gt: string | null, pred: string | null, variant: CompatGroupVariant) {
  const m = compatMatches(gt, pred, variant);
  return {
    gt_raw: gt,
    pred_raw: pred,
    gt_diagnosis_level: compatDiagnosisLevel(gt),
    pred_diagnosis_level: compatDiagnosisLevel(pred),
    gt_3char: compatCategory(gt),
    pred_3char: compatCategory(pred),
    gt_high_class: compatGroup(gt, variant),
    pred_high_class: compatGroup(pred, variant),
    match_diagnosis_level: m.diagnosisLevel ? 1 : 0,
    match_3char: m.category ? 1 : 0,
    match_high_class: m.block ? 1 : 0,
  };
}
