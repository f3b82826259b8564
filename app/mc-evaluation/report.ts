/**
 * The report of multiple-choice runs (docs/mc-evaluation.md, "Reports"): read run folders, score each (model, seed)
 * run, and lay the scores out as each paper's tables. Pure apart from reading the folders; writing files and
 * figures is report-files.server.ts.
 */
import { createHash } from "node:crypto";
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { parsePythonCsv as parseCsv } from "../formats/csv-text";
import { forEachFileLine } from "../platform/line-file.server";
import {
  ageBands,
  demographicDrift,
  type ConditionAccuracy,
  type DimensionDrift,
  type DriftOptions,
} from "./domain/drift";
import { ResponseRecordSchema, type ResponseRecord, type ScoredRecord } from "./domain/records";
import { mentalBenchReading, mentatReading, type Reading } from "./domain/parse";
import { CASE_TYPES } from "./domain/items";
import {
  mentalBenchScores,
  mentatRows,
  mentatScores,
  type MentalBenchScores,
  type MentatScores,
  type ParseCounts,
} from "./domain/scores";
import { MAX_RESPONSE_LINE_BYTES, MC_RESPONSES, MC_RUN_JSON } from "./run";

const RunJsonSchema = z.object({
  format: z.literal("concord-mc-run/1"),
  model: z.object({ name: z.string(), key: z.string(), base_url: z.string() }),
  items_format: z.enum(["mentat", "mentalbench"]),
  seed: z.number(),
  decoding: z.record(z.string(), z.unknown()),
  mentalbench_style: z.string(),
  few_shot: z.unknown(),
  prompts: z.record(z.string(), z.string()),
  num_items: z.number(),
  status: z.string(),
  answered: z.number(),
});
export type RunSummaryJson = z.infer<typeof RunJsonSchema>;

/** A run folder that cannot be read, with FILE:LINE where a line is at fault. */
export class RunReadError extends Error {}

export interface LoadedRun {
  dir: string;
  run: RunSummaryJson;
  /** Every answered item, without its prompt and raw answer (scoring needs neither). */
  records: ScoredRecord[];
  /** sha256 of the responses file's bytes, for the report's manifest ("" when there is none). */
  responsesSha256: string;
}

function fileSha256(path: string): string {
  const hash = createHash("sha256");
  const fd = openSync(path, "r");
  try {
    const buffer = Buffer.allocUnsafe(1 << 20);
    for (let n = readSync(fd, buffer, 0, buffer.length, null); n > 0; n = readSync(fd, buffer, 0, buffer.length, null))
      hash.update(buffer.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  return hash.digest("hex");
}

/**
 * Reads a run folder, checking its responses file against its run.json (docs/mc-evaluation.md, "Reports"): the file
 * is read a line at a time (memory bounded by MAX_RESPONSE_LINE_BYTES and the number of items, not by the file);
 * a line that is not a record of the run's kind, a last line cut short, an item answered twice (both lines named),
 * or a count of answered items that disagrees with what run.json says (more than the run's items; not all of them
 * when it says complete; another count than it recorded when a session ended) is refused as FILE:LINE.
 */
export function readRunFolder(dir: string, reading: Reading = "concord"): LoadedRun {
  const read = readerOf(reading);
  const runPath = join(dir, MC_RUN_JSON);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(runPath, "utf8"));
  } catch (e) {
    throw new RunReadError(`${runPath}:1: ${(e as Error).message}`);
  }
  const run = RunJsonSchema.safeParse(json);
  if (!run.success)
    throw new RunReadError(
      `${runPath}:1: not a multiple-choice run.json (${run.error.issues[0]?.path.join(".")}: ${
        run.error.issues[0]?.message
      })`,
    );
  const responsesPath = join(dir, MC_RESPONSES);
  const records: ScoredRecord[] = [];
  const seen = new Map<string, number>();
  const fail = (line: number, message: string): never => {
    throw new RunReadError(`${responsesPath}:${line}: ${message}`);
  };
  let sha = createHash("sha256").digest("hex");
  if (existsSync(responsesPath)) {
    try {
      forEachFileLine(responsesPath, MAX_RESPONSE_LINE_BYTES, (l) => {
        if ("problem" in l) return fail(l.line, l.problem);
        if (l.text.trim() === "") return;
        let value: unknown;
        try {
          value = JSON.parse(l.text);
        } catch {
          return fail(
            l.line,
            l.terminated
              ? "not valid JSON"
              : "the last line is cut short (a run stopped while writing it); rerun mc-run with the same options to resume, which repairs it",
          );
        }
        const r = ResponseRecordSchema.safeParse(value);
        if (!r.success) {
          const issue = r.error.issues[0];
          return fail(l.line, `${issue?.path.join(".")}: ${issue?.message}`);
        }
        const { messages: _messages, raw, ...record } = r.data;
        if (read) record.parse = read(raw);
        if (record.facts.kind !== run.data.items_format)
          return fail(l.line, `a ${record.facts.kind} record in a ${run.data.items_format} run`);
        const earlier = seen.get(record.item_id);
        if (earlier !== undefined)
          return fail(l.line, `item ${JSON.stringify(record.item_id)} is answered twice (first at line ${earlier})`);
        seen.set(record.item_id, l.line);
        records.push(record);
      });
      sha = fileSha256(responsesPath);
    } catch (e) {
      if (e instanceof RunReadError) throw e;
      throw new RunReadError(
        `cannot read ${responsesPath}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      );
    }
  }
  const { status, answered, num_items: items } = run.data;
  const n = records.length;
  const disagree = (says: string) =>
    new RunReadError(
      `${responsesPath}: ${n} answered item${n === 1 ? "" : "s"}, but ${runPath} says ${says}; the run folder is damaged or was changed by hand`,
    );
  if (n > items) throw disagree(`the run has ${items} items`);
  if (status === "complete" && (n !== items || answered !== items))
    throw disagree(`it is complete with ${answered} of ${items}`);
  // A session that ended recorded its count; a killed one ("running") recorded it when it started and answered more.
  if (status === "incomplete" && n !== answered) throw disagree(`${answered} of ${items} were answered`);
  if (status === "running" && n < answered) throw disagree(`at least ${answered} of ${items} were answered`);
  return { dir, run: run.data, records, responsesSha256: sha };
}

/** Run folders at `root` or one or two levels below it, sorted by path. */
export function findMcRunFolders(root: string): string[] {
  const found: string[] = [];
  const visit = (dir: string, depth: number) => {
    if (existsSync(join(dir, MC_RUN_JSON))) {
      found.push(dir);
      return;
    }
    if (depth >= 2) return;
    for (const name of readdirSync(dir).sort()) {
      const sub = join(dir, name);
      if (statSync(sub).isDirectory()) visit(sub, depth + 1);
    }
  };
  if (existsSync(root) && statSync(root).isDirectory()) visit(root, 0);
  return found.sort();
}

export interface RunEntry {
  model: string;
  seed: number;
  format: "mentat" | "mentalbench";
  dir: string;
  status: string;
  answered: number;
  num_items: number;
  decoding: Record<string, unknown>;
  mentalbench_style: string;
  few_shot: unknown;
  prompts: Record<string, string>;
  parse: ParseCounts;
}

export interface McReport {
  format: "concord-mc-report/1";
  /** Unparsed answers are left out of `accuracy` and counted; `accuracy_all` and `reference_*` count them wrong. */
  scoring: string;
  /** Whose reading of the answers the scores use (readRunFolder's reading; docs/mc-evaluation.md, "Readings"). */
  reading: Reading;
  runs: RunEntry[];
  mentalbench: { model: string; seed: number; scores: MentalBenchScores }[];
  mentat: {
    model: string;
    seed: number;
    scores: MentatScores;
    drift: DimensionDrift[];
    age_bands: ConditionAccuracy[];
  }[];
  drift_options: DriftOptions;
}

/** Reads a `disease,cluster` CSV (header row required); problems as `line N: reason`. */
export function parseClusters(text: string): {
  clusters: Map<string, string>;
  errors: { line: number; message: string }[];
} {
  const errors: { line: number; message: string }[] = [];
  const clusters = new Map<string, string>();
  let rows: string[][];
  try {
    rows = parseCsv(text.replace(/^\uFEFF/, "")).filter((r) => !(r.length === 1 && r[0] === ""));
  } catch (e) {
    return { clusters, errors: [{ line: 1, message: (e as Error).message }] };
  }
  const header = (rows[0] ?? []).map((h) => h.trim().toLowerCase());
  const d = header.indexOf("disease");
  const c = header.indexOf("cluster");
  if (d < 0 || c < 0) return { clusters, errors: [{ line: 1, message: "needs the columns disease and cluster" }] };
  const Row = z.object({ disease: z.string().trim().min(1), cluster: z.string().trim().min(1) });
  rows.slice(1).forEach((row, i) => {
    const parsed = Row.safeParse({ disease: row[d] ?? "", cluster: row[c] ?? "" });
    if (!parsed.success) errors.push({ line: i + 2, message: "disease and cluster must not be empty" });
    else if (clusters.has(parsed.data.disease))
      errors.push({ line: i + 2, message: `disease ${parsed.data.disease} listed twice` });
    else clusters.set(parsed.data.disease, parsed.data.cluster);
  });
  return { clusters, errors };
}

/** What each reading is, for the report's heading. */
export const READING_NOTES: Record<Reading, string> = {
  concord: "Concord's parser (statuses ambiguous, refused, empty are not scored)",
  mentat:
    "MENTAT's code (eval_openai.py): the answer's first character, A when it is not A–E — every non-empty answer is scored",
  mentalbench: "MentalBench's code (extract_answer): the first run of A–D anywhere; none found is not scored",
};

/**
 * How `reading` reads one raw answer: null for `concord`, which keeps the parse mc-run recorded (Concord's parser,
 * with the item's options); `mentat` and `mentalbench` read the raw text as the papers' code does (domain/parse.ts:
 * mentatReading, mentalBenchReading).
 */
function readerOf(reading: Reading): ((raw: string) => ScoredRecord["parse"]) | null {
  return reading === "concord" ? null : reading === "mentat" ? mentatReading : mentalBenchReading;
}

/** Records (with their raw answers) as `reading` reads them, without the raw text (readRunFolder does the same). */
export function readRecords(records: readonly ResponseRecord[], reading: Reading): ScoredRecord[] {
  const read = readerOf(reading);
  return records.map(({ messages: _messages, raw, ...record }) => (read ? { ...record, parse: read(raw) } : record));
}

export const SCORING_NOTE =
  "accuracy: over parsed answers; accuracy_all: unparsed answers counted wrong (the papers' convention; their " +
  "numbers with their own --reading); " +
  "reference_accuracy: MentalBench's own answer reader and rule";

/**
 * `clusters` maps a disease to its diagnostic cluster for items that carry none (mc-report --clusters), so that the
 * per-cluster table can be made for item files without a cluster column.
 */
export function buildReport(
  runs: readonly LoadedRun[],
  driftOptions: DriftOptions,
  clusters: ReadonlyMap<string, string> = new Map(),
  /** The reading `runs` were read with (readRunFolder); recorded in the report. */
  reading: Reading = "concord",
): McReport {
  const sorted = [...runs].sort(
    (a, b) =>
      (a.run.model.key < b.run.model.key ? -1 : a.run.model.key > b.run.model.key ? 1 : 0) ||
      a.run.seed - b.run.seed ||
      (a.run.items_format < b.run.items_format ? -1 : 1),
  );
  const report: McReport = {
    format: "concord-mc-report/1",
    scoring: SCORING_NOTE,
    reading,
    runs: [],
    mentalbench: [],
    mentat: [],
    drift_options: driftOptions,
  };
  for (const r of sorted) {
    const parse: ParseCounts = { parsed: 0, ambiguous: 0, refused: 0, empty: 0 };
    for (const rec of r.records) parse[rec.parse.status]++;
    const model = r.run.model.key;
    report.runs.push({
      model,
      seed: r.run.seed,
      format: r.run.items_format,
      dir: r.dir,
      status: r.run.status,
      answered: r.records.length,
      num_items: r.run.num_items,
      decoding: r.run.decoding,
      mentalbench_style: r.run.mentalbench_style,
      few_shot: r.run.few_shot,
      prompts: r.run.prompts,
      parse,
    });
    if (r.run.items_format === "mentalbench") {
      const records = clusters.size
        ? r.records.map((rec) =>
            rec.facts.kind === "mentalbench" && rec.facts.cluster === null && clusters.has(rec.facts.disease)
              ? { ...rec, facts: { ...rec.facts, cluster: clusters.get(rec.facts.disease)! } }
              : rec,
          )
        : r.records;
      report.mentalbench.push({ model, seed: r.run.seed, scores: mentalBenchScores(records) });
    } else {
      report.mentat.push({
        model,
        seed: r.run.seed,
        scores: mentatScores(r.records),
        drift: demographicDrift(mentatRows(r.records), driftOptions),
        age_bands: ageBands(mentatRows(r.records), driftOptions),
      });
    }
  }
  return report;
}

// ---------------------------------------------------------------------------------------------------------------
// Tables: rows of cells, shared by the Markdown report, the CSV files and the admin page.

export interface Table {
  name: string;
  title: string;
  header: string[];
  rows: string[][];
}

const pct = (x: number | null | undefined) => (x === null || x === undefined ? "—" : (100 * x).toFixed(2));
const num = (x: number | null | undefined, digits = 3) => (x === null || x === undefined ? "—" : x.toFixed(digits));
const pValue = (p: number) => (p < 0.001 ? p.toExponential(2) : p.toFixed(4));
/** An interval as two numeric columns, `ci_low` and `ci_high` (docs/formats.md, "Intervals"), never one text cell. */
const ci = (c: [number, number] | null) => [pct(c?.[0]), pct(c?.[1])];

const count = (x: number | null | undefined) =>
  x === null || x === undefined ? "—" : String(Math.round(x * 100) / 100);

/**
 * One row per (model, seed), and for a model run with several seeds a row "mean of k seeds" after its seeds: the
 * plain mean of each column over the seeds that have a value.
 */
function withSeedMeans<T extends { model: string; seed: number }>(
  entries: readonly T[],
  values: (entry: T) => (number | null)[],
  formats: ((x: number | null) => string)[],
): string[][] {
  const rows: string[][] = [];
  const models = [...new Set(entries.map((e) => e.model))];
  for (const model of models) {
    const mine = entries.filter((e) => e.model === model);
    const numbers = mine.map(values);
    mine.forEach((e, i) => rows.push([model, String(e.seed), ...numbers[i]!.map((v, k) => formats[k]!(v))]));
    if (mine.length > 1) {
      const means = numbers[0]!.map((_, k) => {
        const xs = numbers.map((n) => n[k]).filter((x): x is number => x !== null);
        return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
      });
      rows.push([model, `mean of ${mine.length} seeds`, ...means.map((v, k) => formats[k]!(v))]);
    }
  }
  return rows;
}

export const MENTAT_TABLE_DOMAINS = ["diagnosis", "treatment", "monitoring", "triage", "documentation"] as const;
const MENTAT_SETS = ["base", "gender", "age", "race"] as const;

export function reportTables(report: McReport): Table[] {
  const tables: Table[] = [];
  if (report.mentalbench.length) {
    tables.push({
      name: "mentalbench-table2",
      title: "MentalBench: accuracy (%, exact set match) per case type; Overall weighted by cases per type",
      header: [
        "model",
        "seed",
        ...CASE_TYPES.map((t) => `Type ${t}`),
        "Overall",
        "III − IV",
        "unparsed",
        "Overall (reference)",
        "III − IV (reference)",
        "Overall (unparsed wrong)",
      ],
      rows: withSeedMeans(
        report.mentalbench,
        ({ scores }) => [
          ...CASE_TYPES.map((t) => scores.by_type[t]?.accuracy ?? null),
          scores.overall,
          scores.gap_iii_iv,
          scores.total.n - scores.total.n_parsed,
          scores.overall_reference,
          scores.gap_iii_iv_reference,
          // Σ correct / Σ answered = the type-weighted mean of accuracy_all (the scripts' TOTAL row).
          scores.total.accuracy_all,
        ],
        [...CASE_TYPES.map(() => pct), pct, pct, count, pct, pct, pct],
      ),
    });
    const diseases = [...new Set(report.mentalbench.flatMap((m) => Object.keys(m.scores.by_disease)))].sort();
    tables.push({
      name: "mentalbench-diseases",
      title: "MentalBench: accuracy (%) per disease",
      header: ["disease", ...report.mentalbench.map((m) => `${m.model} (seed ${m.seed})`)],
      rows: diseases.map((d) => [d, ...report.mentalbench.map((m) => pct(m.scores.by_disease[d]?.accuracy))]),
    });
    const clusters = [...new Set(report.mentalbench.flatMap((m) => Object.keys(m.scores.by_cluster)))].sort();
    if (clusters.length) {
      tables.push({
        name: "mentalbench-clusters",
        title: "MentalBench: accuracy (%) per diagnostic cluster",
        header: ["cluster", ...report.mentalbench.map((m) => `${m.model} (seed ${m.seed})`)],
        rows: clusters.map((c) => [c, ...report.mentalbench.map((m) => pct(m.scores.by_cluster[c]?.accuracy))]),
      });
    }
  }
  if (report.mentat.length) {
    tables.push({
      name: "mentat-domains",
      title: "MENTAT: accuracy (%) per domain on the base set (preference domains: the experts' top option)",
      header: [
        "model",
        "seed",
        ...MENTAT_TABLE_DOMAINS,
        "all",
        "unparsed",
        "cross-entropy (triage)",
        "cross-entropy (documentation)",
        "all (unparsed wrong)",
      ],
      rows: withSeedMeans(
        report.mentat,
        ({ scores }) => [
          ...MENTAT_TABLE_DOMAINS.map((d) => scores.base_by_domain[d]?.accuracy ?? null),
          scores.base_by_domain.all?.accuracy ?? null,
          (scores.base_by_domain.all?.n ?? 0) - (scores.base_by_domain.all?.n_parsed ?? 0),
          scores.base_by_domain.triage?.mean_cross_entropy ?? null,
          scores.base_by_domain.documentation?.mean_cross_entropy ?? null,
          scores.base_by_domain.all?.accuracy_all ?? null,
        ],
        [...MENTAT_TABLE_DOMAINS.map(() => pct), pct, count, num, num, pct],
      ),
    });
    const sets = MENTAT_SETS.filter((set) => report.mentat.some((m) => m.scores.by_set[set]));
    tables.push({
      name: "mentat-sets",
      title: "MENTAT: accuracy (%) per set over every domain; unparsed answers left out, and counted wrong",
      header: ["model", "seed", ...sets.flatMap((set) => [set, `${set} (unparsed wrong)`])],
      rows: withSeedMeans(
        report.mentat,
        ({ scores }) =>
          sets.flatMap((set) => [scores.by_set[set]?.accuracy ?? null, scores.by_set[set]?.accuracy_all ?? null]),
        sets.flatMap(() => [pct, pct]),
      ),
    });
    tables.push({
      name: "mentat-ablation",
      title: "MENTAT: accuracy (%) per demographic condition and domain, with 95% bootstrap intervals",
      header: [
        "model",
        "seed",
        "dimension",
        "condition",
        "n",
        "accuracy",
        "ci_low",
        "ci_high",
        ...MENTAT_TABLE_DOMAINS,
      ],
      rows: report.mentat.flatMap(({ model, seed, drift, age_bands }) => {
        const row = (dimension: string, c: ConditionAccuracy) => [
          model,
          String(seed),
          dimension,
          c.condition,
          String(c.n_parsed),
          pct(c.accuracy),
          ...ci(c.ci95),
          ...MENTAT_TABLE_DOMAINS.map((dom) => pct(c.by_domain[dom]?.accuracy)),
        ];
        return [
          ...drift.flatMap((d) => d.conditions.map((c) => row(d.dimension, c))),
          ...(age_bands ?? []).map((c) => row("age (MENTAT's bands)", c)),
        ];
      }),
    });
    tables.push({
      name: "mentat-drift-tests",
      title: "MENTAT: paired tests between conditions (exact McNemar over questions; Holm–Bonferroni per dimension)",
      header: [
        "model",
        "seed",
        "dimension",
        "first",
        "second",
        "pairs",
        "accuracy first",
        "accuracy second",
        "difference",
        "ci_low",
        "ci_high",
        "first only",
        "second only",
        "p",
        "p (Holm)",
        "beyond chance",
      ],
      rows: report.mentat.flatMap(({ model, seed, drift }) =>
        drift.flatMap((d) =>
          d.tests.map((t) => [
            model,
            String(seed),
            d.dimension,
            t.first,
            t.second,
            String(t.n_pairs),
            pct(t.accuracy_first),
            pct(t.accuracy_second),
            pct(t.difference),
            ...ci(t.difference_ci95),
            String(t.first_only),
            String(t.second_only),
            pValue(t.p),
            pValue(t.p_holm),
            t.significant ? `yes (α = ${d.alpha})` : "no",
          ]),
        ),
      ),
    });
  }
  tables.push({
    name: "parse-counts",
    title: "Answers by parse status",
    header: ["model", "seed", "items", "answered", "of", "parsed", "ambiguous", "refused", "empty", "status"],
    rows: report.runs.map((r) => [
      r.model,
      String(r.seed),
      r.format,
      String(r.answered),
      String(r.num_items),
      String(r.parse.parsed),
      String(r.parse.ambiguous),
      String(r.parse.refused),
      String(r.parse.empty),
      r.status,
    ]),
  });
  return tables;
}

function markdownTable(t: Table): string {
  const esc = (s: string) => s.replace(/\|/g, "\\|");
  return [
    `| ${t.header.map(esc).join(" | ")} |`,
    `|${t.header.map(() => "---").join("|")}|`,
    ...t.rows.map((r) => `| ${r.map(esc).join(" | ")} |`),
  ].join("\n");
}

export function reportMarkdown(report: McReport): string {
  const parts = [
    "# Multiple-choice evaluation report",
    "",
    `Reading: ${report.reading}, ${READING_NOTES[report.reading]}. Scoring: ${report.scoring}. Drift: ${report.drift_options.reps} bootstrap resamples (seed ${report.drift_options.seed}), family-wise α = ${report.drift_options.alpha} per dimension.`,
  ];
  for (const t of reportTables(report)) parts.push("", `## ${t.title}`, "", markdownTable(t));
  return parts.join("\n") + "\n";
}
