/**
 * MentalBench's released data set folder (`resources/dataset/` of its repository) as Concord's MentalBench items
 * (docs/mc-evaluation.md, "MentalBench's released folder"). Pure: the caller lists the files and reads them.
 *
 * The release keeps each case type in its own files, with the generating model in the file name:
 * - Type I (medical chart, single answer): `low/<D>/main_<generator>.json`;
 * - Type II (patient self-report, single answer): `medium/<D>/main_<generator>.json`;
 * - Type III (ambiguous, several answers): `high/<D>/<D'>/type3/main_<generator>.json`;
 * - Type IV (clear, single answer): `high/<D>/<D'>/type4/a_main_<generator>.json` and `b_main_…`.
 * Each file is one JSON object of cases `{key: {question, options, answer}}`. The `features/` files hold the
 * generation inputs, not cases, and are not read (MentalBench's evaluation scripts read `main` files only).
 * The disease of a case is the code MentalBench's scripts group their accuracy by: `D001` for Types I–II, the pair
 * `D001-D005` for Types III–IV.
 */
import type { CaseType } from "./items";

export interface ReleaseFile {
  type: CaseType;
  disease: string;
  /** The first disease of the pair (Types III–IV) or the disease (Types I–II): its cluster is the case's. */
  mainDisease: string;
  generator: string;
  /** Type IV's two files per pair: "a" or "b"; null otherwise. */
  variant: "a" | "b" | null;
}

const CODE = "D\\d{3}";
const GENERATOR = "([A-Za-z0-9.-]+)";
const PATTERNS: { re: RegExp; type: (m: RegExpExecArray) => CaseType }[] = [
  { re: new RegExp(`^(low)/(${CODE})/main_${GENERATOR}\\.json$`), type: () => "I" },
  { re: new RegExp(`^(medium)/(${CODE})/main_${GENERATOR}\\.json$`), type: () => "II" },
  { re: new RegExp(`^high/(${CODE})/(${CODE})/type3/main_${GENERATOR}\\.json$`), type: () => "III" },
  { re: new RegExp(`^high/(${CODE})/(${CODE})/type4/([ab])_main_${GENERATOR}\\.json$`), type: () => "IV" },
];

/** What a file of the release holds, from its path relative to the dataset folder (`/` separated); null if it holds no cases. */
export function releaseFile(relPath: string): ReleaseFile | null {
  for (const { re, type } of PATTERNS) {
    const m = re.exec(relPath);
    if (!m) continue;
    const t = type(m);
    if (t === "I" || t === "II")
      return { type: t, disease: m[2]!, mainDisease: m[2]!, generator: m[3]!, variant: null };
    if (t === "III")
      return { type: t, disease: `${m[1]}-${m[2]}`, mainDisease: m[1]!, generator: m[3]!, variant: null };
    return {
      type: t,
      disease: `${m[1]}-${m[2]}`,
      mainDisease: m[1]!,
      generator: m[4]!,
      variant: m[3] as "a" | "b",
    };
  }
  return null;
}

/**
 * The cluster of each of MentalBench's 23 disorders: the DSM-5 chapter its name (the release's
 * `knowledge_graph/EN/disorder.json`) belongs to. The release names no clusters; this grouping is Concord's, by the
 * chapters of DSM-5 (American Psychiatric Association, 2013), and a case of Types III–IV takes the cluster of the
 * first disease of its pair. `mc-import-mentalbench --no-clusters` leaves clusters out (then `mc-report --clusters`).
 */
export const DSM5_CLUSTERS: Readonly<Record<string, string>> = {
  D001: "neurodevelopmental", // ADHD, combined presentation
  D002: "neurodevelopmental", // ADHD, predominantly inattentive
  D003: "neurodevelopmental", // ADHD, predominantly hyperactive/impulsive
  D004: "schizophrenia-spectrum", // delusional disorder
  D005: "schizophrenia-spectrum", // schizophrenia
  D006: "schizophrenia-spectrum", // schizoaffective disorder, bipolar type
  D007: "schizophrenia-spectrum", // schizoaffective disorder, depressive type
  D008: "bipolar", // bipolar I
  D009: "bipolar", // bipolar II
  D010: "bipolar", // bipolar I with psychotic features
  D011: "anxiety", // generalized anxiety disorder
  D012: "anxiety", // specific phobia
  D013: "depressive", // major depressive disorder
  D014: "depressive", // persistent depressive disorder
  D015: "depressive", // major depressive disorder with psychotic features
  D016: "obsessive-compulsive", // OCD
  D017: "obsessive-compulsive", // body dysmorphic disorder
  D018: "trauma-stressor", // PTSD
  D019: "trauma-stressor", // acute stress disorder
  D020: "trauma-stressor", // adjustment disorder
  D021: "feeding-eating", // anorexia nervosa
  D022: "feeding-eating", // bulimia nervosa
  D023: "feeding-eating", // binge-eating disorder
};

/** One item in the layout `mc-run --items` reads (docs/mc-evaluation.md, "Items"). */
export interface ReleaseItem {
  id: string;
  question: string;
  options: string;
  answer: string;
  type: CaseType;
  disease: string;
  cluster?: string;
  generator: string;
  source: string;
}

export interface ReleaseProblem {
  line: number;
  message: string;
}

/** The 1-based line of the first `"key":` in a JSON text (for naming where a case is). */
function lineOfKey(text: string, key: string): number {
  const at = text.indexOf(`${JSON.stringify(key)}:`);
  if (at < 0) return 1;
  let line = 1;
  for (let i = text.indexOf("\n"); i >= 0 && i < at; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

/** The line and column of a JSON.parse failure, from V8's message ("… at position N" / "(line L column C)"). */
function jsonErrorLine(text: string, e: Error): number {
  const lc = /line (\d+) column/.exec(e.message);
  if (lc) return Number(lc[1]);
  const pos = /position (\d+)/.exec(e.message);
  if (!pos) return 1;
  let line = 1;
  const end = Math.min(Number(pos[1]), text.length);
  for (let i = 0; i < end; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/**
 * The items of one release file. Ids are `<case key>/<generator>` (Type IV: `<case key>/<a|b>/<generator>`): the
 * release uses each case key once per generator file, and Type IV's a and b files share their keys.
 */
export function releaseItems(
  file: ReleaseFile,
  source: string,
  text: string,
  options: { clusters: boolean },
): { items: ReleaseItem[]; problems: ReleaseProblem[] } {
  const problems: ReleaseProblem[] = [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (e) {
    return {
      items: [],
      problems: [{ line: jsonErrorLine(text, e as Error), message: `not JSON: ${(e as Error).message}` }],
    };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return {
      items: [],
      problems: [{ line: 1, message: "expected one JSON object of cases {key: {question, options, answer}}" }],
    };
  }
  const items: ReleaseItem[] = [];
  const cluster = options.clusters ? DSM5_CLUSTERS[file.mainDisease] : undefined;
  if (options.clusters && cluster === undefined)
    problems.push({ line: 1, message: `${file.mainDisease} is not one of MentalBench's 23 disorders (D001–D023)` });
  for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
    const v = value as Record<string, unknown> | null;
    const missing = ["question", "options", "answer"].filter(
      (f) => typeof v !== "object" || v === null || typeof v[f] !== "string" || (v[f] as string).trim() === "",
    );
    if (missing.length) {
      problems.push({
        line: lineOfKey(text, key),
        message: `case ${JSON.stringify(key)} has no text in ${missing.join(", ")}`,
      });
      continue;
    }
    items.push({
      id: file.variant ? `${key}/${file.variant}/${file.generator}` : `${key}/${file.generator}`,
      question: v!.question as string,
      options: v!.options as string,
      answer: v!.answer as string,
      type: file.type,
      disease: file.disease,
      ...(cluster !== undefined ? { cluster } : {}),
      generator: file.generator,
      source,
    });
  }
  if (items.length === 0 && problems.length === 0) problems.push({ line: 1, message: "the file holds no cases" });
  return { items, problems };
}
