/**
 * Commands of the multiple-choice evaluation (docs/mc-evaluation.md): `mc-run` asks models the items of a MENTAT or
 * MentalBench file and stores every prompt and answer in run folders; `mc-report` scores run folders into each
 * paper's tables and figures.
 */
import { extname, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { z } from "zod";
import { importFileSource, readImportFile } from "../cli/io";
import { FileChangedError } from "../formats/import-source";
import { CliError, parseOptions, type CliIO, type Command } from "../cli/command";
import { checkModelKey, modelKeyFromName } from "../evaluation/public";
import { softwareVersion } from "../platform/paths.server";
import { createProgress } from "../model-calls/progress";
import { DEFAULT_RETRY_POLICY } from "../model-calls/retry";
import { DEFAULT_DRIFT_OPTIONS } from "./domain/drift";
import { checkItemFile } from "./domain/items";
import { MENTALBENCH_STYLES } from "./domain/prompts";
import { buildReport, findMcRunFolders, parseClusters, readRunFolder, reportMarkdown, RunReadError } from "./report";
import { READINGS } from "./domain/parse";
import { writeReport } from "./report-files.server";
import { McRunConfigError, type McRunResult } from "./run";
import { runMcModels } from "./mc-job.server";

const MAX_LISTED = 30;

/** Turns a zod failure on the options into the usage error the other commands give. */
function options<T extends z.ZodType>(schema: T, values: unknown): z.infer<T> {
  const r = schema.safeParse(values);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new CliError(`--${issue.path.join(".")}: ${issue.message}. See --help.`);
  }
  return r.data;
}

const count = (max: number) =>
  z
    .string()
    .regex(/^\d+$/, "must be a whole number")
    .transform(Number)
    .refine((n) => n >= 1 && n <= max, `must be between 1 and ${max}`);
const nonNegative = z.string().regex(/^\d+$/, "must be a whole number").transform(Number);
const decimal = (max: number) =>
  z.union([
    z.literal("none").transform(() => null),
    z
      .string()
      .regex(/^\d+(\.\d+)?$/, "must be a number or none")
      .transform(Number)
      .refine((n) => n <= max, `must be at most ${max}`),
  ]);
const seedList = z
  .string()
  .regex(/^\d+(,\d+)*$/, "takes non-negative integers separated by commas")
  .transform((s) => [...new Set(s.split(",").map(Number))]);
const httpUrl = z
  .string()
  .refine(
    (u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol),
    "must be an http(s) URL such as http://localhost:8000/v1",
  );

const RunOptionsSchema = z.object({
  items: z.string().min(1, "is required"),
  format: z.enum(["mentat", "mentalbench"]).optional(),
  models: z
    .string()
    .min(1, "is required")
    .transform((s) => [
      ...new Set(
        s
          .split(",")
          .map((m) => m.trim())
          .filter(Boolean),
      ),
    ]),
  "base-url": httpUrl,
  seeds: seedList.default([0]),
  temperature: decimal(2).default(0),
  "top-p": decimal(1).optional(),
  "max-tokens": count(100_000).default(300),
  "max-tokens-param": z.enum(["max_tokens", "max_completion_tokens"]).default("max_tokens"),
  "mentalbench-prompt": z.enum(MENTALBENCH_STYLES).default("paper"),
  "few-shot": nonNegative.default(0),
  concurrency: count(1024).default(8),
  out: z.string().min(1).default("mc-runs"),
  timeout: count(86_400).default(300),
  "max-retries": nonNegative.default(12),
  "retry-delay": z
    .string()
    .regex(/^\d+(\.\d+)?$/, "must be a number of seconds")
    .transform(Number)
    .default(1),
});

const runHelp = `Usage: npm run concord -- mc-run --items FILE --models NAME[,NAME…] --base-url URL
                                  [--seeds 0[,1…]] [--temperature 0] [--max-tokens 300] [--few-shot K]
                                  [--mentalbench-prompt paper|single|clear] [--concurrency 8] [--out mc-runs]

Asks one or more models every item of a multiple-choice file through an OpenAI-compatible chat-completions server
and stores, per model and seed, every prompt, raw answer and parsed answer in a run folder
(docs/mc-evaluation.md). Score the folders with mc-report.

Items (--items FILE; --format mentat|mentalbench overrides the detection):
  MENTAT records        JSON Lines as mentat-export writes them (any set: base, gender, age, race); the record's
                        prompt is sent after MENTAT's system message
  MentalBench items     JSON Lines or CSV (.csv): id, question, options (one block, a list of 4, or columns A–D),
                        answer ("C. Bipolar II", "A & B) …"), type (I–IV or 1–4), disease, optional cluster
The whole file is checked first; problems are reported as FILE:LINE: reason and nothing is asked (exit 2).

Options:
  --models LIST           model names the server knows, comma-separated (required); one run folder each
  --base-url URL          the server, e.g. http://localhost:8000/v1 (required)
  --seeds LIST            seeds, comma-separated (default 0): sent as the sampling seed, and they draw the few-shot
                          split; one run folder per model and seed
  --temperature T         default 0 (both papers); "none" leaves it to the server
  --top-p P               not sent unless given
  --max-tokens N          answer limit (default 300, MentalBench's)
  --max-tokens-param P    max_tokens (default) or max_completion_tokens (newer OpenAI models)
  --few-shot K            MENTAT only: hold out 10% of the base questions (seeded; every variant of a held-out
                          question leaves the evaluation) and show K of them as worked examples before each question
  --mentalbench-prompt S  paper (default: single-answer prompt for Types I–II, select-all for III–IV), single, clear
  --concurrency N         calls in flight at once (default 8)
  --out DIR               where run folders go (default mc-runs)
  --timeout SECONDS       per-call time-out (default 300)
  --max-retries N         retries on 429, 5xx, time-outs, empty answers (default 12)
  --retry-delay SECONDS   first back-off step, doubled per retry with jitter, capped at 60 s (default 1)

API key: CONCORD_API_KEY, else OPENAI_API_KEY (local servers usually need none).
Resuming: rerun the same command; answered items are not asked again. A folder made with other parameters, prompts
or items is refused. Exit status: 0 when every run is complete, 1 when one stopped early, 2 for bad input.
`;

function summaryLine(r: McRunResult): string {
  return `${r.dir}: ${r.answered}/${r.total} items (${r.status}); ${r.calls} calls, ${r.retries} retries, ${
    r.failed
  } failed${r.message ? `; ${r.message}` : ""}\n`;
}

export const mcRunCommand: Command = {
  name: "mc-run",
  summary: "Evaluate models on MENTAT records or MentalBench items (multiple choice)",
  help: runHelp,
  async run(argv, io) {
    const { values } = parseOptions(argv, {
      items: { type: "string" },
      format: { type: "string" },
      models: { type: "string" },
      "base-url": { type: "string" },
      seeds: { type: "string" },
      temperature: { type: "string" },
      "top-p": { type: "string" },
      "max-tokens": { type: "string" },
      "max-tokens-param": { type: "string" },
      "mentalbench-prompt": { type: "string" },
      "few-shot": { type: "string" },
      concurrency: { type: "string" },
      out: { type: "string" },
      timeout: { type: "string" },
      "max-retries": { type: "string" },
      "retry-delay": { type: "string" },
    });
    if (values.items === undefined) throw new CliError("--items is required. See --help.");
    if (values.models === undefined) throw new CliError("--models is required. See --help.");
    if (values["base-url"] === undefined) throw new CliError("--base-url is required. See --help.");
    const o = options(RunOptionsSchema, values);
    // Through the import contract (docs/reliability.md, "The import contract"): size, line length, NUL, strict UTF-8.
    // Streamed line by line (JSON Lines) or record by record (CSV), never held whole (docs/reliability.md, "Memory
    // bounded by the longest line"), in two passes: checked whole first, keeping each item's id and hash, then read
    // again for each model and seed as the items are asked (`checkItemFile`), so the run never holds the items.
    const csv = extname(o.items).toLowerCase() === ".csv";
    const input = importFileSource(o.items, "mcItems", { json: !csv });
    const parsed = checkItemFile(input, { csv, format: o.format });
    for (const w of parsed.warnings.slice(0, MAX_LISTED)) io.err(`${o.items}:${w.line}: warning: ${w.message}\n`);
    if (parsed.errors.length) {
      for (const e of parsed.errors.slice(0, MAX_LISTED)) io.err(`${o.items}:${e.line}: ${e.message}\n`);
      if (parsed.errors.length > MAX_LISTED) io.err(`… and ${parsed.errors.length - MAX_LISTED} more\n`);
      throw new CliError(`${o.items}: ${parsed.errors.length} problem(s); nothing was asked`);
    }
    const keys = o.models.map((name) => {
      const key = modelKeyFromName(name);
      const problem = checkModelKey(key);
      if (problem) throw new CliError(`model ${JSON.stringify(name)}: ${problem}`);
      return { name, key };
    });
    const apiKey = process.env.CONCORD_API_KEY ?? process.env.OPENAI_API_KEY ?? "none";
    const sha = input.sha256()!;
    let incomplete = false;
    try {
      // The same code as the job started from the browser (app/mc-evaluation/mc-job.server.ts).
      await runMcModels(
        {
          items: parsed.items!,
          itemsFormat: parsed.format,
          inputs: { path: resolve(o.items), sha256: sha },
          models: keys.map((m) => ({ ...m, baseURL: o["base-url"], apiKey })),
          seeds: o.seeds,
          temperature: o.temperature,
          topP: o["top-p"] ?? null,
          maxTokens: o["max-tokens"],
          maxTokensParam: o["max-tokens-param"],
          style: o["mentalbench-prompt"],
          fewShot: o["few-shot"],
          concurrency: o.concurrency,
          outDir: o.out,
          retry: { ...DEFAULT_RETRY_POLICY, maxRetries: o["max-retries"], baseDelayMs: o["retry-delay"] * 1000 },
          timeoutMs: o.timeout * 1000,
        },
        {
          warn: (line) => io.err(`${line}\n`),
          log: (line) => io.err(`${line}\n`),
          progress: () => createProgress(io.err, io.isTTY, () => performance.now(), "items"),
          onResult: (result) => {
            io.out(summaryLine(result));
            if (result.status !== "complete") incomplete = true;
          },
        },
      );
    } catch (e) {
      if (e instanceof McRunConfigError) throw new CliError(e.message);
      if (e instanceof FileChangedError)
        throw new CliError(
          `${o.items}: the file changed during the run (its items are read again as they are asked); the answers written so far are kept`,
        );
      throw e;
    }
    return incomplete ? 1 : 0;
  },
};

const ReportOptionsSchema = z.object({
  runs: z.array(z.string().min(1)).min(1, "is required"),
  out: z.string().min(1).optional(),
  clusters: z.string().min(1).optional(),
  json: z.boolean().default(false),
  "no-figures": z.boolean().default(false),
  reading: z.enum(READINGS, { message: `must be one of ${READINGS.join(", ")}` }).default("concord"),
  bootstrap: count(100_000).default(DEFAULT_DRIFT_OPTIONS.reps),
  seed: nonNegative.default(DEFAULT_DRIFT_OPTIONS.seed),
  alpha: z
    .string()
    .regex(/^0?\.\d+$/, "must be a number between 0 and 1")
    .transform(Number)
    .default(DEFAULT_DRIFT_OPTIONS.alpha),
});

const reportHelp = `Usage: npm run concord -- mc-report --runs DIR [--runs DIR…] [--out DIR] [--json] [--clusters FILE]
                                     [--reading concord|mentat|mentalbench] [--bootstrap 1000] [--seed 0]
                                     [--alpha 0.05] [--no-figures]

Scores multiple-choice run folders (mc-run) and prints the Markdown report (or, with --json, one JSON object):

  MentalBench   accuracy (%, exact set match) per type I–IV, per disease and per cluster; Overall weighted by the
                number of cases per type (the paper's Table 2); the Type III − Type IV gap per model
  MENTAT        accuracy per domain on the base set (preference-labelled questions: the model's option is right
                when it is the experts' top option, MENTAT's rule; mean cross-entropy beside it); accuracy per
                gender, age and race condition with 95% bootstrap intervals and each domain (the ablation table);
                paired exact McNemar tests between conditions over the same base questions, Holm–Bonferroni per
                dimension, "beyond chance" where the adjusted p ≤ α
  every run     answers by parse status (parsed, ambiguous, refused, empty): unparsed answers are not scored
                ("accuracy") and are counted; "accuracy_all" counts them wrong as the papers' code does (with --reading
                mentat or mentalbench, the answers are also read as that paper's code reads them)

--reading: whose reading of the answers is scored: concord (default; Concord's parser as mc-run recorded it), mentat
(MENTAT's code: the first character, A when it is not A–E) or mentalbench (MentalBench's extract_answer). The report
names the reading it used.
--runs takes a run folder or a folder holding run folders (up to two levels down); repeat it for more.
--clusters FILE: a CSV with columns disease,cluster giving the cluster of items that carry none.
--out DIR writes report.md, scores.json, one CSV per table, runs/<model>_<format>_seed-<s>.csv|json (per item),
accuracy-by-type and drift-<dimension> figures (.svg, .png) and manifest.json (sha256 of every file and of every
run's responses, decoding parameters). --bootstrap, --seed: resamples and seed of the intervals (CPython's random,
so Python replays them). Exit 2 when a run folder cannot be read (FILE:LINE: reason).
`;

export const mcReportCommand: Command = {
  name: "mc-report",
  summary: "Score multiple-choice runs: each paper's tables, drift tests, figures",
  help: reportHelp,
  async run(argv: string[], io: CliIO) {
    const { values } = parseOptions(argv, {
      runs: { type: "string", multiple: true },
      out: { type: "string" },
      clusters: { type: "string" },
      json: { type: "boolean" },
      "no-figures": { type: "boolean" },
      reading: { type: "string" },
      bootstrap: { type: "string" },
      seed: { type: "string" },
      alpha: { type: "string" },
    });
    const o = options(ReportOptionsSchema, { ...values, runs: values.runs ?? [] });
    const dirs = [...new Set(o.runs.flatMap((r) => findMcRunFolders(r)))];
    if (dirs.length === 0)
      throw new CliError(`no multiple-choice run folder (with run.json) under ${o.runs.join(", ")}`);
    let runs;
    try {
      runs = dirs.map((d) => readRunFolder(d, o.reading));
    } catch (e) {
      if (e instanceof RunReadError) throw new CliError(e.message);
      throw e;
    }
    let clusters = new Map<string, string>();
    if (o.clusters) {
      // Through the import contract (docs/reliability.md, "The import contract"): size, NUL, strict UTF-8.
      const parsed = parseClusters(readImportFile(o.clusters, "mcItems", { json: false }));
      if (parsed.errors.length) {
        for (const e of parsed.errors.slice(0, MAX_LISTED)) io.err(`${o.clusters}:${e.line}: ${e.message}\n`);
        throw new CliError(`${o.clusters}: ${parsed.errors.length} problem(s)`);
      }
      clusters = parsed.clusters;
    }
    const report = buildReport(runs, { reps: o.bootstrap, seed: o.seed, alpha: o.alpha }, clusters, o.reading);
    if (o.out) {
      const written = await writeReport(report, runs, o.out, {
        version: softwareVersion(),
        createdAt: new Date().toISOString(),
        figures: !o["no-figures"],
      });
      io.err(`Wrote ${written.files.length} files to ${o.out}.\n`);
    }
    io.out(o.json ? JSON.stringify(report, null, 2) + "\n" : reportMarkdown(report));
    return 0;
  },
};
