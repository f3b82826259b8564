/** The inputs of the evaluation metrics: trajectory files as the caller read them, and the gold records. */
import { parseIcd10 } from "../../icd10/icd10";
import { REFERENCE_NAMES } from "../../labels/labels";
import { readJsonl } from "../../formats/jsonl";
import { pyStrip } from "../../python-compat/text";

/** A trajectory file found under one of the `--runs` folders. */
export interface TrajectoryFile {
  /**
   * Path as the reference scripts would see it, "/"-separated, starting at the runs root: `runs/<folder>/…/<name>`.
   * A `--runs` folder that itself holds trajectories.jsonl is placed at `runs/<its name>/`.
   */
  path: string;
  text: string;
}

export const fileName = (path: string) => path.slice(path.lastIndexOf("/") + 1);
export const parentPath = (path: string) => path.slice(0, path.lastIndexOf("/"));
export const parentName = (path: string) => fileName(parentPath(path));

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A gold case as the paper's metrics read it (docs/formats.md#data_gtjson, docs/safe-psych.md#gold-labels-and-expert-action-labels). */
export interface GoldCase {
  id: string;
  sufficient: boolean;
  /** Earliest sufficient section, when sufficient and given. */
  tau: number | null;
  /** Canonical gold code, when sufficient and valid. */
  code: string | null;
  /** Both annotators agreed on sufficiency and diagnosis (paper appendix 9.2.0.5). */
  agreementCase: boolean;
}

const flagText = (v: unknown) => (typeof v === "string" ? pyStrip(v) : typeof v === "number" ? String(v) : "");
const isYes = (v: unknown) => ["1", "true", "yes"].includes(flagText(v).toLowerCase());

/**
 * Reads data_gt.json records leniently (reference-written files included): sufficiency `1`/`0`, τ a positive integer,
 * the code canonicalised. Records without a usable sufficiency are left out and counted.
 */
export function readGold(items: readonly unknown[]): {
  cases: Map<string, GoldCase>;
  unusable: number;
  warnings: string[];
} {
  const cases = new Map<string, GoldCase>();
  const warnings: string[] = [];
  let unusable = 0;
  let badTau = 0;
  let badCode = 0;
  for (const item of items) {
    if (!isObject(item) || (typeof item.id !== "string" && typeof item.id !== "number")) {
      unusable++;
      continue;
    }
    const id = String(item.id);
    const row = isObject(item.original_row) ? item.original_row : item;
    const sufficiency = flagText(row[REFERENCE_NAMES.sufficiency]);
    if (sufficiency !== "1" && sufficiency !== "0") {
      unusable++;
      continue;
    }
    const sufficient = sufficiency === "1";
    let tau: number | null = null;
    let code: string | null = null;
    if (sufficient) {
      const t = flagText(row[REFERENCE_NAMES.earliestSection]);
      tau = /^\d+$/.test(t) && Number(t) >= 1 ? Number(t) : null;
      if (tau === null) badTau++;
      const diagnosis = row[REFERENCE_NAMES.icd10];
      const p = parseIcd10(typeof diagnosis === "string" ? diagnosis : "");
      code = p.ok ? p.code : null;
      if (code === null) badCode++;
    }
    const agreementCase =
      isYes(row[REFERENCE_NAMES.sufficiencyAgreement]) && isYes(row[REFERENCE_NAMES.diagnosisAgreement]);
    cases.set(id, { id, sufficient, tau, code, agreementCase });
  }
  if (unusable > 0) warnings.push(`${unusable} gold records have no usable id or sufficiency and were left out`);
  if (badTau > 0) warnings.push(`${badTau} sufficient gold records have no earliest sufficient section (not timed)`);
  if (badCode > 0) warnings.push(`${badCode} sufficient gold records have no valid ICD-10 code (not scored)`);
  return { cases, unusable, warnings };
}

/** Records of a trajectory file: JSON Lines (`.jsonl`) or one JSON value (an array of records or one record). */
export function parseTrajectoryFile(file: TrajectoryFile): { records: unknown[]; badLines: number } {
  if (file.path.endsWith(".jsonl")) {
    const entries = readJsonl(file.text);
    const records = entries.flatMap((e) => ("value" in e ? [e.value] : []));
    return { records, badLines: entries.length - records.length };
  }
  try {
    const value = JSON.parse(file.text);
    return { records: Array.isArray(value) ? value : [value], badLines: 0 };
  } catch {
    return { records: [], badLines: 1 };
  }
}
