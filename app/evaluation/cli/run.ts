import { createHash } from "node:crypto";
import { resolve } from "node:path";
import { performance } from "node:perf_hooks";
import {
  DEFAULT_MAX_TOKENS,
  DEFAULT_SEED,
  DEFAULT_TEMPERATURE,
  DEFAULT_TOP_P,
  isStrategy,
  parseSamples,
  STRATEGIES,
  type RunnerCase,
  type Strategy,
} from "../domain/runner-protocol";
import { checkModelKey, modelKeyFromName } from "../domain/runner-records";
import { createProgress } from "../../model-calls/progress";
import { DEFAULT_RETRY_POLICY } from "../../model-calls/retry";
import { PROVIDERS, providerSettings, type Provider } from "../providers";
import { RunnerConfigError, type RunnerResult } from "../runner";
import { runSafePsych } from "../run-job.server";
import { CliError, parseOptions, requireOption, type CliIO, type Command } from "../../cli/command";
import { readText } from "../../cli/io";

const help = `Usage: npm run concord -- run --samples samples.json --strategy S[,S…] --model NAME --base-url URL
                               --judge-model NAME [--judge-base-url URL] [--gold data_gt.json]
                               [--seeds 123,42,…] [--temperature 0.7] [--top-p 0.95] [--max-tokens 512]
                               [--provider openai|vllm|anthropic|gemini]
                               [--concurrency 8] [--out runs] [--limit N] [options]

Runs a model through the Safe-Psych evaluation protocol (docs/evaluation.md) against any
OpenAI-compatible chat-completions server (vLLM, Ollama, llama.cpp server, hosted APIs), with the
reference's prompt texts byte for byte, and writes the reference's run folders (docs/evaluation.md), which the
reference's evaluation scripts and \`concord metrics\` read.

Strategies (comma-separated, or "all"):
  full_info_no_abstention             one step with the whole note
  full_info_abstention_aware          one step with the whole note, abstention allowed
  sequential_info_neutral_prompting   one section per turn of a multi-turn conversation
  sequential_info_abstention_aware    the same, asking for clarification or abstention when unsure

Each step sends the model the system instruction and the conversation so far; a judge model reads each answer
(one user message, greedy, at most 128 tokens, seed 123) and the reference's rule turns its features into an
action. Diagnose stops; Abstain stops (before the last section: a premature abstention); Clarify reveals the
next section (on the last section it counts as Abstain); an empty answer is not judged and the case goes on.

Options:
  --samples FILE        samples.json (required): cases and their sections
  --gold FILE           data_gt.json: checks that every case has a gold label with the same number of sections
  --strategy S          one or more strategies (required)
  --model NAME          the model name the server knows (required)
  --model-key KEY       the model's key in records and folder names (default: NAME with / and : made -)
  --base-url URL        the server, e.g. http://localhost:8000/v1 (required)
  --judge-model NAME    the judge model (required)
  --judge-key KEY       the judge's key in records and folder names (default from NAME)
  --judge-base-url URL  the judge's server (default: --base-url)
  --seeds LIST          run seeds, comma-separated (default ${DEFAULT_SEED}); each seed orders the cases
                        (Python random.seed + shuffle) and is sent as the sampling seed
  --temperature T       model temperature (default ${DEFAULT_TEMPERATURE}); "none" leaves it to the server
  --top-p P             model top-p (default ${DEFAULT_TOP_P}); "none" leaves it to the server
  --max-tokens N        model answer limit (default ${DEFAULT_MAX_TOKENS})
  --max-tokens-param P  max_tokens (default) or max_completion_tokens (newer OpenAI models)
  --provider P          send exactly what the reference sends to that kind of model and record what it records
                        (named in run.json): openai = max_completion_tokens and the seed, no temperature or
                        top-p; vllm = max_tokens, temperature 0.7, top-p 0.95 and the seed; anthropic, gemini =
                        max_tokens only. Every preset records temperature 0.7 and top-p 0.95, as the reference
                        does. Not with --temperature, --top-p or --max-tokens-param.
  --concurrency N       calls in flight at once (default 8)
  --out DIR             where run folders go (default runs)
  --limit N             only the first N cases of each seed's order (the reference's --num_samples)
  --timeout SECONDS     per-call time-out (default 300)
  --max-retries N       retries of a call on 429, 5xx, time-outs, empty or malformed answers (default 12).
                        An empty answer (no text) is retried like a rate limit, as the reference retries
                        "Empty model output"; still empty after the retries, it is recorded as an empty output
                        (model_output_raw "", not judged) and the case goes on
  --retry-delay SECONDS first back-off step, doubled per retry with jitter, capped at 60 s (default 1)

API keys come from the environment: CONCORD_API_KEY (else OPENAI_API_KEY) for the model, CONCORD_JUDGE_API_KEY
(else the model's key) for the judge. Local servers usually need none.

Run folders: <out>/<model-key>_<strategy>_judge-<judge-key>_seed-<seed>_<YYYYMMDD>_<HHMMSS>/ with
trajectories.jsonl (one record per case, written as soon as the case stops), timing.json (when complete),
run.json (every parameter, the software version and the prompt files' sha256) and _tmp/concord-steps.jsonl (every
answered call). Keep one folder per model and strategy under the reference's runs/ and seed replicates under
evaluations/multiple_seed_runs/runs_seeds/ (docs/evaluation.md).

Resuming: rerun the same command. The run folder of each (model, strategy, seed) in --out is found again, finished
cases are not queried again, and unfinished ones continue from their last answered call. A run made with other
decoding parameters, prompts or samples is refused; a complete run is not repeated (use another --out for a fresh
one). A dead endpoint (connection refused, unknown host, 401/403/404, or retries used up) stops the run with a
message, keeping everything finished. Ctrl-C stops the same way.

Progress goes to stderr (a bar with rate and ETA on a terminal). Note text is never printed.
Exit status: 0 when every run is complete, 1 when a run stopped early (rerun to resume), 2 for bad input.
`;

function parseNumber(value: string | undefined, flag: string, fallback: number, check: (n: number) => boolean): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || !check(n))
    throw new CliError(`${flag} got "${value}". See --help.`);
  return n;
}

function parseOptionalFloat(value: string | undefined, flag: string, fallback: number, max: number): number | null {
  if (value === "none") return null;
  return parseNumber(value, flag, fallback, (n) => n >= 0 && n <= max);
}

function parseStrategies(value: string): Strategy[] {
  if (value === "all") return [...STRATEGIES];
  const list = value.split(",").map((s) => s.trim());
  const unknown = list.filter((s) => !isStrategy(s));
  if (unknown.length > 0) {
    throw new CliError(
      `unknown strategy ${unknown.map((s) => `"${s}"`).join(", ")}; use ${STRATEGIES.join(", ")} or all`,
    );
  }
  return [...new Set(list as Strategy[])];
}

function parseSeeds(value: string | undefined): number[] {
  if (value === undefined) return [DEFAULT_SEED];
  const seeds = value.split(",").map((s) => s.trim());
  if (seeds.some((s) => !/^\d+$/.test(s) || !Number.isSafeInteger(Number(s)))) {
    throw new CliError(`--seeds takes non-negative integers separated by commas, got "${value}"`);
  }
  return [...new Set(seeds.map(Number))];
}

function readJson(path: string): { text: string; value: unknown } {
  const text = readText(path);
  try {
    return { text, value: JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text) };
  } catch (e) {
    throw new CliError(`${path} is not valid JSON: ${(e as Error).message}`);
  }
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** Every case must have a gold record with the same T (docs/formats.md#data_gtjson: num_sections_in_input). */
function checkAgainstGold(cases: RunnerCase[], gold: unknown, path: string): void {
  if (!Array.isArray(gold)) throw new CliError(`${path} must be one JSON array (data_gt.json)`);
  const sections = new Map<string, unknown>();
  for (const item of gold) {
    if (item && typeof item === "object") {
      const r = item as Record<string, unknown>;
      sections.set(String(r.id), r.num_sections_in_input);
    }
  }
  const problems: string[] = [];
  for (const c of cases) {
    if (!sections.has(c.sampleId)) problems.push(`case ${c.sampleId} has no gold record`);
    else if (sections.get(c.sampleId) !== c.sections.length) {
      problems.push(
        `case ${c.sampleId} has ${c.sections.length} sections in the samples but num_sections_in_input ` +
          `${JSON.stringify(sections.get(c.sampleId))} in the gold labels`,
      );
    }
  }
  if (problems.length > 0) {
    const shown = problems.slice(0, 20).map((p) => `  ${p}`);
    if (problems.length > 20) shown.push(`  … and ${problems.length - 20} more`);
    throw new CliError(`the samples and the gold labels do not match:\n${shown.join("\n")}`);
  }
}

function endpointKey(explicit: string | undefined, name: string, flag: string): string {
  const key = explicit ?? modelKeyFromName(name);
  const problem = checkModelKey(key, flag === "--model-key" ? "model key" : "judge key");
  if (problem) throw new CliError(`${problem}; choose one with ${flag}`);
  return key;
}

function summary(result: RunnerResult): string {
  const lines = result.folders.map((f) => {
    const reasons = Object.entries(f.stoppingReasons)
      .map(([reason, n]) => `${reason === "" ? "empty" : reason} ${n}`)
      .join(", ");
    const state = f.skipped ? "already complete" : f.complete ? "complete" : "incomplete";
    return `${f.dir}: ${f.finished}/${f.cases} trajectories (${state}${reasons ? `; this session: ${reasons}` : ""})`;
  });
  lines.push(
    `${result.calls} calls, ${result.retries} retries, ${result.failures} failed calls recorded, ` +
      `${result.wallSeconds.toFixed(1)} s`,
  );
  return lines.join("\n") + "\n";
}

async function run(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseOptions(argv, {
    samples: { type: "string" },
    gold: { type: "string" },
    strategy: { type: "string" },
    model: { type: "string" },
    "model-key": { type: "string" },
    "base-url": { type: "string" },
    "judge-model": { type: "string" },
    "judge-key": { type: "string" },
    "judge-base-url": { type: "string" },
    seeds: { type: "string" },
    temperature: { type: "string" },
    "top-p": { type: "string" },
    "max-tokens": { type: "string" },
    "max-tokens-param": { type: "string" },
    provider: { type: "string" },
    concurrency: { type: "string" },
    out: { type: "string" },
    limit: { type: "string" },
    timeout: { type: "string" },
    "max-retries": { type: "string" },
    "retry-delay": { type: "string" },
  });
  const samplesPath = requireOption(values.samples, "--samples");
  const strategies = parseStrategies(requireOption(values.strategy, "--strategy"));
  const modelName = requireOption(values.model, "--model");
  const baseURL = requireOption(values["base-url"], "--base-url");
  const judgeName = requireOption(values["judge-model"], "--judge-model");
  const judgeBaseURL = values["judge-base-url"] ?? baseURL;
  for (const [flag, url] of [
    ["--base-url", baseURL],
    ["--judge-base-url", judgeBaseURL],
  ] as const) {
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
      throw new CliError(`${flag} must be an http(s) URL such as http://localhost:8000/v1, got "${url}"`);
    }
  }
  const modelKey = endpointKey(values["model-key"], modelName, "--model-key");
  const judgeKey = endpointKey(values["judge-key"], judgeName, "--judge-key");
  const seeds = parseSeeds(values.seeds);
  if (values.provider !== undefined && !(PROVIDERS as readonly string[]).includes(values.provider))
    throw new CliError(`--provider is one of ${PROVIDERS.join(", ")}, got "${values.provider}"`);
  const provider = values.provider === undefined ? undefined : providerSettings(values.provider as Provider);
  for (const flag of ["temperature", "top-p", "max-tokens-param"] as const)
    if (provider && values[flag] !== undefined)
      throw new CliError(`--provider ${values.provider} fixes what is sent: leave out --${flag}`);
  const temperature = provider
    ? provider.sent.temperature
    : parseOptionalFloat(values.temperature, "--temperature", DEFAULT_TEMPERATURE, 2);
  const topP = provider ? provider.sent.topP : parseOptionalFloat(values["top-p"], "--top-p", DEFAULT_TOP_P, 1);
  const isCount = (n: number) => Number.isInteger(n) && n >= 1;
  const maxTokens = parseNumber(values["max-tokens"], "--max-tokens", DEFAULT_MAX_TOKENS, isCount);
  const maxTokensParam = provider?.sent.maxTokensParam ?? values["max-tokens-param"] ?? "max_tokens";
  if (maxTokensParam !== "max_tokens" && maxTokensParam !== "max_completion_tokens") {
    throw new CliError(`--max-tokens-param is max_tokens or max_completion_tokens, got "${maxTokensParam}"`);
  }
  const concurrency = parseNumber(values.concurrency, "--concurrency", 8, (n) => isCount(n) && n <= 1024);
  const limit = values.limit === undefined ? null : parseNumber(values.limit, "--limit", 0, isCount);
  const timeoutMs = 1000 * parseNumber(values.timeout, "--timeout", 300, (n) => n > 0);
  const maxRetries = parseNumber(values["max-retries"], "--max-retries", 12, (n) => Number.isInteger(n) && n >= 0);
  const baseDelayMs = 1000 * parseNumber(values["retry-delay"], "--retry-delay", 1, (n) => n >= 0);
  const outDir = values.out ?? "runs";

  const samples = readJson(samplesPath);
  const parsed = parseSamples(samples.value);
  if (!parsed.ok) throw new CliError(`${samplesPath}:\n${parsed.errors.map((e) => `  ${e}`).join("\n")}`);
  let gold: { path: string; sha256: string } | null = null;
  if (values.gold !== undefined) {
    const g = readJson(values.gold);
    checkAgainstGold(parsed.cases, g.value, values.gold);
    gold = { path: resolve(values.gold), sha256: sha256(g.text) };
  }

  const modelApiKey = process.env.CONCORD_API_KEY || process.env.OPENAI_API_KEY || "not-needed";
  const judgeApiKey = process.env.CONCORD_JUDGE_API_KEY || modelApiKey;
  // A provider preset describes the evaluated model's API; the judge keeps --max-tokens-param's default.
  const judgeTokensParam = provider ? "max_tokens" : maxTokensParam;

  const interrupt = new AbortController();
  const onSigint = () => {
    io.err("\nstopping: finishing nothing new, keeping what is done (press Ctrl-C again to quit at once)\n");
    interrupt.abort();
  };
  process.once("SIGINT", onSigint);
  let result: RunnerResult;
  try {
    // The same code as the run started from the browser (app/evaluation/run-job.server.ts).
    result = await runSafePsych(
      {
        cases: parsed.cases,
        strategies,
        seeds,
        model: { name: modelName, key: modelKey, baseURL, apiKey: modelApiKey },
        judge: { name: judgeName, key: judgeKey, baseURL: judgeBaseURL, apiKey: judgeApiKey },
        temperature,
        topP,
        maxTokens,
        maxTokensParam,
        judgeMaxTokensParam: judgeTokensParam,
        provider,
        concurrency,
        outDir,
        limit,
        retry: { ...DEFAULT_RETRY_POLICY, maxRetries, baseDelayMs },
        timeoutMs,
        inputs: { samples: { path: resolve(samplesPath), sha256: sha256(samples.text) }, gold },
      },
      {
        warn: (line) => io.err(line + "\n"),
        log: (line) => io.err(line + "\n"),
        progress: createProgress(io.err, io.isTTY, () => performance.now()),
        signal: interrupt.signal,
      },
    );
  } catch (e) {
    if (e instanceof RunnerConfigError) throw new CliError(e.message);
    throw e;
  } finally {
    process.removeListener("SIGINT", onSigint);
  }
  io.out(summary(result));
  if (result.status !== "complete") {
    const why = result.status === "interrupted" ? "interrupted" : `stopped: ${result.message}`;
    io.err(`concord run: ${why}. Finished trajectories are kept; rerun the same command to resume.\n`);
    return 1;
  }
  return 0;
}

export const runCommand: Command = {
  name: "run",
  summary: "Run a model through the Safe-Psych evaluation protocol (resumable)",
  help,
  run,
};
