/**
 * Rubric-graded evaluation from the command line (docs/rubric-grading.md): import a set, define subsets, collect
 * candidate responses, grade them with each judge of the panel (synchronously or in batches), report.
 */
import { setMaxListeners } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { z } from "zod";
import { CliError, parseOptions, requireOption, type CliIO, type Command, serviceCall } from "../cli/command";
import { checkImportFile, importFileSource, listIssues, type ImportFileSource } from "../cli/io";
import { getDb, type Db } from "../platform/db.server";
import { createProgress } from "../model-calls/progress";
import { DEFAULT_RETRY_POLICY } from "../model-calls/retry";
import {
  collectBatches,
  ingestBatchOutput,
  openBatches,
  submitBatches,
  writeBatchRequests,
  type ProgressFactory,
} from "./batch.server";
import type { LineError } from "./domain/eval-set";
import { table1Markdown } from "./domain/report-files";
import { candidateOf, gradeStep, judgeOf, respondStep } from "./grading-job.server";
import { loadGraderText } from "./grader-text.server";
import { buildReport, writeReport } from "./report.server";
import {
  createSubset,
  importEvalSet,
  listModels,
  requireGradingSet,
  requireModel,
  requireSubset,
  type GradingSet,
} from "./sets.server";
import { countPendingGrading, type Scope } from "./work.server";

/**
 * An imported file, streamed through the import contract (docs/reliability.md, "The import contract" and "Bulk
 * imports"): read line by line, never whole.
 */
function imported(file: string): ImportFileSource {
  return importFileSource(file, "grading", { json: true });
}

/**
 * Lists a result file's refused lines (`FILE:LINE: reason`) and its ignored repeats (`warning: FILE:LINE: …`) on
 * stderr, at most MAX_LISTED_ISSUES of each.
 */
function reportLines(io: CliIO, file: string, r: { errors: LineError[]; notes: LineError[] }): void {
  listIssues(io, r.errors, { file });
  listIssues(io, r.notes, { file, kind: "warning" });
}

/** Exit 2 when result lines were refused (their calls stay pending), after everything valid was ingested. */
function batchExit(badLines: number): number {
  if (badLines === 0) return 0;
  throw new CliError(
    `${badLines} result line${badLines === 1 ? " was" : "s were"} refused (listed above); every other line was ingested and the refused lines' calls stay pending.`,
  );
}

/** Reports `FILE:LINE: reason` for every bad line and fails with exit code 2. */
function failLines(io: CliIO, file: string, errors: LineError[]): never {
  for (const e of errors) io.err(`${file}:${e.line}: ${e.message}\n`);
  throw new CliError(`${errors.length} bad line${errors.length === 1 ? "" : "s"} in ${file}; nothing was written.`);
}

const count = (flag: string, max = 1_000_000) =>
  z.coerce
    .number({ error: `${flag} must be a number` })
    .int(`${flag} must be a whole number`)
    .min(1, `${flag} must be at least 1`)
    .max(max, `${flag} is at most ${max}`);
const nonNegative = (flag: string) =>
  z.coerce
    .number({ error: `${flag} must be a number` })
    .int(`${flag} must be a whole number`)
    .min(0, `${flag} must be 0 or more`);

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value);
  if (!r.success) throw new CliError(`${r.error.issues[0].message}. See --help.`);
  return r.data;
}

const TemperatureSchema = z.union([
  z.literal("default").transform(() => null),
  z.coerce
    .number({ error: "--temperature must be a number or default" })
    .min(0, "--temperature must be 0 or more")
    .max(2, "--temperature is at most 2"),
]);

const MaxTokensParamSchema = z.enum(["max_tokens", "max_completion_tokens"], {
  error: "--max-tokens-param is max_tokens or max_completion_tokens",
});

function apiKey(envName: string | undefined): string {
  const name = envName ?? "";
  if (name && !/^[A-Z_][A-Z0-9_]*$/.test(name)) throw new CliError("--api-key-env must name an environment variable");
  return (
    (name ? process.env[name] : undefined) || process.env.CONCORD_API_KEY || process.env.OPENAI_API_KEY || "not-needed"
  );
}

function withInterrupt<T>(io: CliIO, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const interrupt = new AbortController();
  // Every call in flight listens to the one signal.
  setMaxListeners(0, interrupt.signal);
  const onSigint = () => {
    io.err("\nstopping: no new calls; everything finished is kept\n");
    interrupt.abort();
  };
  process.once("SIGINT", onSigint);
  return run(interrupt.signal).finally(() => process.removeListener("SIGINT", onSigint));
}

function scopeOf(db: Db, set: GradingSet, values: { candidates?: string; subset?: string }): Scope {
  return serviceCall(() => ({
    candidateIds: values.candidates
      ? values.candidates.split(",").map((n) => requireModel(db, set, "candidate", n.trim()).id)
      : null,
    subsetId: values.subset ? requireSubset(db, set, values.subset).id : null,
  }));
}

// ---------------------------------------------------------------------------------------------------------------

export const gradeImportCommand: Command = {
  name: "grade-import",
  summary: "import a HealthBench-format JSONL (e.g. a screening release's subset.jsonl) as an evaluation set",
  help: `Usage: npm run concord -- grade-import --set NAME FILE [--dry-run]

Reads one JSON object a line: prompt [{role, content}], prompt_id, rubrics [{criterion, points, tags}] (negative
points allowed), example_tags. The whole file is checked first; bad lines are reported as FILE:LINE: reason and
nothing is written (exit code 2). A screening release's subset.jsonl is such a file. Re-importing the same content
changes nothing; other content under an existing name is refused. Prints the set's content hash.`,
  async run(argv, io) {
    const { values, positionals } = parseOptions(
      argv,
      { set: { type: "string" }, "dry-run": { type: "boolean" } },
      true,
    );
    const name = requireOption(values.set, "--set");
    if (positionals.length !== 1) throw new CliError("give exactly one FILE. See --help.");
    const file = positionals[0];
    const source = imported(file);
    const result = serviceCall(() => importEvalSet(getDb(), { name, source, dryRun: values["dry-run"] }));
    listIssues(io, result.warnings, { file, kind: "warning" });
    if (result.errors.length) failLines(io, file, result.errors);
    io.out(
      `${result.records} conversations; content sha256 ${result.contentSha256}. ` +
        (values["dry-run"]
          ? "Dry run: nothing was written.\n"
          : result.unchanged
            ? "Already imported: nothing changed.\n"
            : `Imported as "${name}".\n`),
    );
    return 0;
  },
};

export const gradeSubsetCommand: Command = {
  name: "grade-subset",
  summary: "define a named subset of an evaluation set by intersection with an id list",
  help: `Usage: npm run concord -- grade-subset --set NAME --name SUBSET IDS_FILE

IDS_FILE: one prompt_id a line, or JSONL objects with a prompt_id (e.g. HealthBench-Hard's released file, to make
"Psych-Hard"). The subset is the set's conversations whose id is in the list; ids not in the set are counted.`,
  async run(argv, io) {
    const { values, positionals } = parseOptions(argv, { set: { type: "string" }, name: { type: "string" } }, true);
    const db = getDb();
    const set = serviceCall(() => requireGradingSet(db, requireOption(values.set, "--set")));
    const name = requireOption(values.name, "--name");
    if (positionals.length !== 1) throw new CliError("give exactly one IDS_FILE. See --help.");
    const r = serviceCall(() => createSubset(db, { set, name, ids: imported(positionals[0]) }));
    if (r.errors.length) failLines(io, positionals[0], r.errors);
    io.out(
      `subset "${name}": ${r.members} conversations (${r.unknownIds} listed ids not in the set); content sha256 ${r.contentSha256}.\n`,
    );
    return 0;
  },
};

const endpointOptions = {
  set: { type: "string" },
  model: { type: "string" },
  "base-url": { type: "string" },
  "api-key-env": { type: "string" },
  temperature: { type: "string" },
  "max-tokens": { type: "string" },
  "max-tokens-param": { type: "string" },
  subset: { type: "string" },
  concurrency: { type: "string" },
  "max-retries": { type: "string" },
  "retry-delay": { type: "string" },
  timeout: { type: "string" },
  limit: { type: "string" },
} as const;

function commonSettings(
  values: Record<string, string | boolean | undefined>,
  defaults: { concurrency: number; maxTokens: number },
) {
  const str = (k: string) => values[k] as string | undefined;
  return {
    temperature: parse(TemperatureSchema, str("temperature") ?? "0"),
    maxTokens: parse(count("--max-tokens", 1_000_000), str("max-tokens") ?? defaults.maxTokens),
    maxTokensParam: parse(MaxTokensParamSchema, str("max-tokens-param") ?? "max_tokens"),
    concurrency: parse(count("--concurrency", 1024), str("concurrency") ?? defaults.concurrency),
    retry: {
      ...DEFAULT_RETRY_POLICY,
      maxRetries: parse(nonNegative("--max-retries"), str("max-retries") ?? DEFAULT_RETRY_POLICY.maxRetries),
      baseDelayMs: 1000 * parse(z.coerce.number().min(0, "--retry-delay must be 0 or more"), str("retry-delay") ?? 1),
    },
    timeoutMs: 1000 * parse(z.coerce.number().positive("--timeout must be positive"), str("timeout") ?? 600),
    limit: str("limit") === undefined ? null : parse(count("--limit"), str("limit")),
  };
}

export const gradeRespondCommand: Command = {
  name: "grade-respond",
  summary: "collect one response per conversation from a candidate model",
  help: `Usage: npm run concord -- grade-respond --set NAME --candidate NAME --model ID --base-url URL [options]

Sends every conversation verbatim (no system message) to an OpenAI-compatible chat-completions endpoint and stores
the answer keyed by conversation and candidate. Conversations already answered are never requested again.
An empty answer with an explicit refusal (finish reason refusal or content_filter, or a refusal field) is stored
and graded as returned; an empty answer without one is re-requested and never stored.

  --temperature T|default   0 (default); "default" sends none. When the API answers 400 unsupported_value or
                            unsupported_parameter before any response is stored, the candidate switches to the
                            provider's default by itself and the manifest records it
  --max-tokens N            generation cap (default 8192)
  --max-tokens-param P      max_tokens (default) or max_completion_tokens
  --subset NAME             only that subset's conversations
  --concurrency N           parallel calls (default 16)
  --max-retries N           retries per call on rate limits, server errors, empty answers (default 12)
  --retry-delay S           first back-off step in seconds (default 1)
  --timeout S               per-request time-out (default 600)
  --limit N                 at most N new conversations
  --api-key-env VAR         the API key's environment variable (else CONCORD_API_KEY, else OPENAI_API_KEY)`,
  async run(argv, io) {
    const { values } = parseOptions(argv, { ...endpointOptions, candidate: { type: "string" } });
    const db = getDb();
    const set = serviceCall(() => requireGradingSet(db, requireOption(values.set, "--set")));
    const s = commonSettings(values, { concurrency: 16, maxTokens: 8192 });
    const baseUrl = requireOption(values["base-url"], "--base-url");
    const candidateName = requireOption(values.candidate, "--candidate");
    const endpoint = {
      baseUrl,
      apiKey: apiKey(values["api-key-env"]),
      model: requireOption(values.model, "--model"),
      timeoutMs: s.timeoutMs,
      maxTokensParam: s.maxTokensParam,
    };
    // The same steps as the grading job started from the browser (app/rubric-grading/grading-job.server.ts).
    const { candidate, subsetId } = serviceCall(() =>
      candidateOf(db, {
        set,
        name: candidateName,
        endpoint,
        settings: s,
        subset: values.subset,
      }),
    );
    const r = await withInterrupt(io, (signal) =>
      respondStep(
        db,
        { set, candidate, subsetId, endpoint, settings: s, signal },
        createProgress(io.err, io.isTTY, () => performance.now()),
      ),
    );
    if (r.temperatureDropped)
      io.err(`${candidate.name}: the API rejected the temperature; running at the provider's default (recorded).\n`);
    io.out(
      `${candidate.name}: ${r.done} responses stored (${r.special} refusals), ${r.failures} failed calls, ${r.retries} retries.\n`,
    );
    if (r.status === "fatal") throw new CliError(`stopped: ${r.message}`, 1);
    return r.status === "complete" ? (r.failures > 0 ? 1 : 0) : 130;
  },
};

const judgeOptions = {
  ...endpointOptions,
  judge: { type: "string" },
  self: { type: "string" },
  "reference-temperature": { type: "boolean" },
  candidates: { type: "string" },
  mode: { type: "string" },
  dir: { type: "string" },
  poll: { type: "string" },
  "no-fallback": { type: "boolean" },
  "retry-failed": { type: "boolean" },
} as const;

function judgeSettings(db: Db, set: GradingSet, values: Record<string, string | boolean | undefined>) {
  if (values["reference-temperature"] && values.temperature !== undefined)
    throw new CliError("give --temperature or --reference-temperature, not both");
  const s = commonSettings(
    { ...values, temperature: values["reference-temperature"] ? "0.5" : values.temperature },
    { concurrency: 64, maxTokens: 2048 },
  );
  s.retry.maxRetries = parse(nonNegative("--max-retries"), (values["max-retries"] as string | undefined) ?? 6);
  const baseUrl = requireOption(values["base-url"] as string | undefined, "--base-url");
  const selfCandidate = (values.self as string | undefined) ?? null;
  if (selfCandidate) serviceCall(() => requireModel(db, set, "candidate", selfCandidate));
  const name = requireOption(values.judge as string | undefined, "--judge");
  const model = requireOption(values.model as string | undefined, "--model");
  const endpoint = { baseUrl, apiKey: "", model, timeoutMs: s.timeoutMs, maxTokensParam: s.maxTokensParam };
  const judge = serviceCall(() => judgeOf(db, { set, name, endpoint, settings: s, selfCandidate }));
  return { s, baseUrl, judge };
}

/** Progress of one step on stderr, as every long step shows it: a bar on a terminal, a line every 10% otherwise. */
function stepProgress(io: CliIO): ProgressFactory {
  return (unit) => createProgress(io.err, io.isTTY, () => performance.now(), unit);
}

export const gradeRunCommand: Command = {
  name: "grade-run",
  summary: "grade every stored response with one judge of the panel (sync or Batch API)",
  help: `Usage: npm run concord -- grade-run --set NAME --judge NAME --model ID --base-url URL [options]

One independent judge call per rubric criterion of every stored response, with HealthBench's grader template and
system message (byte-exact; their hashes go into the manifest). Finished verdicts are never repeated: run it again
after a crash or Ctrl-C and it continues. Run once per judge of the panel.

  --mode sync|batch         sync (default): concurrent calls; batch: submit to the endpoint's Batch API
                            (/v1/files, /v1/batches), poll, ingest, then grade what was dropped synchronously.
                            Output lines that cannot be taken (not a result, an unknown call, two different
                            results for one call) are listed as FILE:LINE; every other line is ingested, their
                            calls stay pending, and the command exits 2 at the end
  --temperature T           judge temperature (default 0); as for grade-respond, a judge whose API rejects it
                            before its first verdict switches to the provider's default, recorded
  --reference-temperature   the reference's 0.5 instead
  --max-tokens N            judge cap (default 2048, the reference's)
  --self CANDIDATE          this judge is also that candidate (self-preference)
  --candidates a,b          only these candidates' responses
  --subset NAME             only that subset's conversations
  --concurrency N           parallel calls (default 64)
  --max-retries N           bounded retries of a call or an unreadable verdict (default 6); then the verdict is
                            excluded and listed in the manifest
  --retry-failed            try this judge's excluded verdicts again
  --dir DIR                 batch mode: where request and output files go (default: a temporary folder)
  --poll S                  batch mode: seconds between status checks (default 30)
  --no-fallback             batch mode: leave dropped calls pending instead of grading them synchronously
  --timeout S, --retry-delay S, --limit N, --max-tokens-param P, --api-key-env VAR   as grade-respond

For an offline engine (vLLM run-batch), use grade-batch-write and grade-batch-ingest instead.`,
  async run(argv, io) {
    const { values } = parseOptions(argv, judgeOptions);
    const db = getDb();
    const set = serviceCall(() => requireGradingSet(db, requireOption(values.set, "--set")));
    const { s, baseUrl, judge } = judgeSettings(db, set, values);
    const mode = parse(z.enum(["sync", "batch"], { error: "--mode is sync or batch" }), values.mode ?? "sync");
    const scope = scopeOf(db, set, values);
    const grader = loadGraderText();
    const key = apiKey(values["api-key-env"]);
    const progress = () => createProgress(io.err, io.isTTY, () => performance.now());
    const progressOf = stepProgress(io);
    return withInterrupt(io, async (signal) => {
      let badLines = 0;
      if (mode === "batch") {
        const dir = values.dir ? resolve(values.dir) : mkdtempSync(join(tmpdir(), "concord-grading-batch-"));
        const batchOptions = {
          baseURL: baseUrl,
          apiKey: key,
          pollMs: 1000 * parse(z.coerce.number().positive("--poll must be positive"), values.poll ?? 30),
          timeoutMs: s.timeoutMs,
          signal,
          progress: progressOf,
        };
        if (openBatches(db, judge.id).length === 0) {
          const files = writeBatchRequests(db, {
            setId: set.id,
            judge,
            scope,
            dir,
            grader,
            mode: "api",
            progress: progressOf,
          });
          const requests = files.reduce((a, f) => a + f.requests, 0);
          io.out(
            `${judge.name}: ${requests} pending calls in ${files.length} batch file${files.length === 1 ? "" : "s"}.\n`,
          );
          if (requests > 0) await submitBatches(db, files, batchOptions);
        } else io.out(`${judge.name}: collecting the batches already submitted.\n`);
        const results = await collectBatches(db, { judge, setId: set.id, dir }, batchOptions);
        const sum = (k: "verdicts" | "dropped" | "recovered") => results.reduce((a, r) => a + r[k], 0);
        for (const r of results) {
          if (r.endedWithout)
            io.err(`a batch ended ${r.endedWithout} without output: its ${r.dropped} calls stay pending\n`);
          if (r.file) reportLines(io, r.file, r);
        }
        badLines = results.reduce((a, r) => a + r.errors.length, 0);
        io.out(
          `${judge.name}: ${sum("verdicts")} verdicts from batches (${sum("recovered")} recovered from malformed JSON), ${sum("dropped")} dropped.\n`,
        );
        if (values["no-fallback"]) return batchExit(badLines);
      }
      // The same step as the grading job started from the browser (app/rubric-grading/grading-job.server.ts).
      const r = await gradeStep(
        db,
        {
          set,
          judge,
          scope,
          endpoint: {
            baseUrl,
            apiKey: key,
            model: judge.model,
            timeoutMs: s.timeoutMs,
            maxTokensParam: s.maxTokensParam,
          },
          settings: s,
          retryFailed: values["retry-failed"] === true,
          signal,
        },
        progress(),
      );
      if (r.temperatureDropped)
        io.err(`${judge.name}: the API rejected the temperature; running at the provider's default (recorded).\n`);
      io.out(
        `${judge.name}: ${r.done} verdicts (${r.special} recovered from malformed JSON), ${r.failures} excluded after retries, ${r.retries} retries.\n`,
      );
      if (r.status === "fatal") throw new CliError(`stopped: ${r.message}`, 1);
      return r.status === "complete" ? batchExit(badLines) : 130;
    });
  },
};

export const gradeBatchWriteCommand: Command = {
  name: "grade-batch-write",
  summary: "write a judge's pending calls as Batch API request files for an offline engine (vLLM run-batch)",
  help: `Usage: npm run concord -- grade-batch-write --set NAME --judge NAME --model ID --base-url URL --dir DIR [options]

Writes requests-001.jsonl, … (at most 50,000 requests each) in the OpenAI Batch API format, which vLLM's
\`python -m vllm.entrypoints.openai.run_batch -i requests-001.jsonl -o output-001.jsonl --model ID\` reads.
Then ingest each output with grade-batch-ingest, and grade whatever was dropped with grade-run --mode sync.
--base-url is recorded for the synchronous fallback. Other options as grade-run.`,
  async run(argv, io) {
    const { values } = parseOptions(argv, judgeOptions);
    const db = getDb();
    const set = serviceCall(() => requireGradingSet(db, requireOption(values.set, "--set")));
    const { judge } = judgeSettings(db, set, values);
    const dir = resolve(requireOption(values.dir, "--dir"));
    const files = writeBatchRequests(db, {
      setId: set.id,
      judge,
      scope: scopeOf(db, set, values),
      dir,
      grader: loadGraderText(),
      mode: "offline",
      progress: stepProgress(io),
    });
    for (const f of files) io.out(`${f.path}: ${f.requests} requests\n`);
    io.out(
      `${files.reduce((a, f) => a + f.requests, 0)} requests in ${files.length} file${files.length === 1 ? "" : "s"}.\n`,
    );
    return 0;
  },
};

export const gradeBatchIngestCommand: Command = {
  name: "grade-batch-ingest",
  summary: "ingest a Batch API / vLLM run-batch output file as a judge's verdicts",
  help: `Usage: npm run concord -- grade-batch-ingest --set NAME --judge NAME FILE

The whole file is checked first, a line at a time. A line that is not a batch result, names another judge's or an
unknown call, or gives a call another result than an earlier line (both lines named) is refused and reported as
FILE:LINE: reason; a line repeating an earlier line's result is ignored with a note. Every other line is ingested,
and the command then exits 2 if any line was refused. Results that are errors, empty, or without a readable verdict,
and the refused lines' calls, are dropped and stay pending for grade-run --mode sync or the next grade-batch-write.
Ingesting the same file twice changes nothing.`,
  async run(argv, io) {
    const { values, positionals } = parseOptions(argv, { set: { type: "string" }, judge: { type: "string" } }, true);
    const db = getDb();
    const set = serviceCall(() => requireGradingSet(db, requireOption(values.set, "--set")));
    const judge = serviceCall(() => requireModel(db, set, "judge", requireOption(values.judge, "--judge")));
    if (positionals.length !== 1) throw new CliError("give exactly one FILE. See --help.");
    // The file through the import contract first (size, line length, NUL, strict UTF-8, not empty); the engine then
    // reads it line by line (docs/reliability.md, "The import contract").
    checkImportFile(positionals[0], "batchOutput", { json: true });
    const r = ingestBatchOutput(db, {
      judge,
      setId: set.id,
      path: positionals[0],
      via: "offline",
      progress: stepProgress(io),
    });
    reportLines(io, positionals[0], r);
    io.out(
      `${r.lines} results: ${r.verdicts} verdicts (${r.recovered} recovered from malformed JSON), ${r.dropped} dropped, ${r.already} already graded${r.errors.length ? `, ${r.errors.length} lines refused` : ""}.\n`,
    );
    return batchExit(r.errors.length);
  },
};

export const gradeStatusCommand: Command = {
  name: "grade-status",
  summary: "responses and verdicts done and pending per candidate and judge",
  help: `Usage: npm run concord -- grade-status --set NAME [--subset NAME] [--json]`,
  async run(argv, io) {
    const { values } = parseOptions(argv, {
      set: { type: "string" },
      subset: { type: "string" },
      json: { type: "boolean" },
    });
    const db = getDb();
    const set = serviceCall(() => requireGradingSet(db, requireOption(values.set, "--set")));
    const scope = scopeOf(db, set, values);
    const candidates = listModels(db, set.id, "candidate").map((c) => ({
      name: c.name,
      model: c.model,
      ...(db.$client
        .prepare(
          "SELECT COUNT(*) AS responses, COALESCE(SUM(refusal), 0) AS refusals FROM grading_responses WHERE candidate_id = ?",
        )
        .get(c.id) as { responses: number; refusals: number }),
    }));
    const judges = listModels(db, set.id, "judge").map((j) => ({
      name: j.name,
      model: j.model,
      ...countPendingGrading(db, j.id, set.id, scope),
    }));
    if (values.json) io.out(JSON.stringify({ set: set.name, candidates, judges }, null, 2) + "\n");
    else {
      for (const c of candidates)
        io.out(`candidate ${c.name} (${c.model}): ${c.responses} responses, ${c.refusals} refusals\n`);
      for (const j of judges)
        io.out(`judge ${j.name} (${j.model}): ${j.total - j.pending}/${j.total} verdicts, ${j.pending} pending\n`);
    }
    return 0;
  },
};

export const gradeReportCommand: Command = {
  name: "grade-report",
  summary: "Table 1, ranking figure, tag tables, judge agreement, paired comparisons and the manifest",
  help: `Usage: npm run concord -- grade-report --set NAME [--subset NAME] [--out DIR] [--json] [options]

Prints Table 1 (panel mean with 95% bootstrap CI and every judge's score per candidate; refusals graded as
returned) in Markdown, or the whole report as JSON. --out DIR writes table1.csv/.md, the same with refusals
excluded, tags.csv (rubric tags, e.g. axis:*), themes.csv (example tags theme:*), judge-agreement.csv,
paired.csv, ranking.svg/.png, report.json and manifest.json.

  --seed N          bootstrap seed (default 0)
  --resamples N     bootstrap resamples (default 1000)
  --paired-top N    paired comparisons among the top N candidates (default 5: ten pairs)
  --alpha A         significance level (default 0.05)`,
  async run(argv, io) {
    const { values } = parseOptions(argv, {
      set: { type: "string" },
      subset: { type: "string" },
      out: { type: "string" },
      json: { type: "boolean" },
      seed: { type: "string" },
      resamples: { type: "string" },
      "paired-top": { type: "string" },
      alpha: { type: "string" },
    });
    const db = getDb();
    const set = serviceCall(() => requireGradingSet(db, requireOption(values.set, "--set")));
    const report = serviceCall(() =>
      buildReport(db, {
        set,
        subset: values.subset ?? null,
        bootstrap: {
          seed: parse(nonNegative("--seed"), values.seed ?? 0),
          resamples: parse(count("--resamples", 1_000_000), values.resamples ?? 1000),
        },
        pairedTop: parse(count("--paired-top", 1000), values["paired-top"] ?? 5),
        alpha: parse(
          z.coerce.number().gt(0, "--alpha must be in (0, 1)").lt(1, "--alpha must be in (0, 1)"),
          values.alpha ?? 0.05,
        ),
      }),
    );
    if (values.out) {
      const files = await writeReport(report, resolve(values.out));
      io.err(`wrote ${files.length} files to ${values.out}\n`);
    }
    if (values.json)
      io.out(
        JSON.stringify(
          { ...report.evaluations, verdict_agreement: report.verdictAgreement, manifest: report.manifest },
          null,
          2,
        ) + "\n",
      );
    else {
      io.out(table1Markdown(report.evaluations.as_returned, report.judges));
    }
    return 0;
  },
};

export const gradingCommands: Command[] = [
  gradeBatchIngestCommand,
  gradeBatchWriteCommand,
  gradeImportCommand,
  gradeReportCommand,
  gradeRespondCommand,
  gradeRunCommand,
  gradeStatusCommand,
  gradeSubsetCommand,
];
