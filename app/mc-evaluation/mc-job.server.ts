/**
 * The multiple-choice job, one code for the command line and the browser (docs/mc-evaluation.md, "Runs";
 * docs/evaluation.md, "Running from the browser"): `runMcModels` asks each model every item with each seed into its
 * run folder — `mc-run` calls it with its options, the job's worker (`runMcJob`) with the job's parameters and a
 * configured provider — and `finishMcJob` scores the job's run folders into a report folder the report pages list.
 */
import { createHash } from "node:crypto";
import { basename, extname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { importFileSource, readImportFile } from "../cli/io";
import { checkModelKey, modelKeyFromName } from "../evaluation/public";
import { redactUrl } from "../evaluation/public.server";
import { createOpenAiEndpoint } from "../model-calls/client";
import type { ProgressSink } from "../model-calls/progress";
import { findProvider, providerConnection } from "../model-calls/providers.server";
import { DEFAULT_RETRY_POLICY, realRetryDeps, type RetryPolicy } from "../model-calls/retry";
import type { Db } from "../platform/db.server";
import { evalInputPath, evalRunsRoot } from "../platform/eval-files.server";
import type { JobView } from "../platform/jobs.server";
import { ServiceError } from "../platform/service-error";
import { softwareVersion } from "../platform/paths.server";
import { jobProgressSink, startWorkerJob, type JobContext, type JobOutcome } from "../platform/worker-jobs.server";
import { DEFAULT_DRIFT_OPTIONS } from "./domain/drift";
import { checkItemFile, type McItem, type McItemSource } from "./domain/items";
import { FileChangedError, textSource } from "../formats/import-source";
import type { MentalBenchStyle } from "./domain/prompts";
import { loadMcPrompts, mcPromptHashesOf } from "./prompt-files";
import { buildReport, findMcRunFolders, readRunFolder } from "./report";
import { writeReport } from "./report-files.server";
import { mcReportsRoot } from "./reports.server";
import { runMcEvaluation, type McRunResult } from "./run";

export interface McModelsSpec {
  items: readonly McItem[] | McItemSource;
  itemsFormat: "mentat" | "mentalbench";
  inputs: { path: string; sha256: string };
  models: { name: string; key: string; baseURL: string; apiKey: string }[];
  seeds: number[];
  temperature: number | null;
  topP: number | null;
  maxTokens: number;
  maxTokensParam: "max_tokens" | "max_completion_tokens";
  style: MentalBenchStyle;
  fewShot: number;
  concurrency: number;
  outDir: string;
  retry: RetryPolicy;
  timeoutMs: number;
}

export interface McModelsHooks {
  /** Warnings for the operator (rejected parameters; counts and codes only). */
  warn(line: string): void;
  log(line: string): void;
  progress(model: string, seed: number): ProgressSink;
  /** Each run's result as it ends. */
  onResult?(result: McRunResult): void;
  signal?: AbortSignal;
}

/** Every (model, seed) run of the spec, one after another; McRunConfigError when a folder cannot be resumed. */
export async function runMcModels(spec: McModelsSpec, hooks: McModelsHooks): Promise<McRunResult[]> {
  const prompts = loadMcPrompts();
  const results: McRunResult[] = [];
  for (const model of spec.models) {
    const notSent = new Set<string>();
    const endpoint = createOpenAiEndpoint({
      baseURL: model.baseURL,
      apiKey: model.apiKey,
      model: model.name,
      timeoutMs: spec.timeoutMs,
      maxTokensParam: spec.maxTokensParam,
      label: "model",
      onParameterDropped: (parameter) => {
        notSent.add(parameter);
        hooks.warn(
          `warning: ${model.name}'s API rejects ${parameter}; every call is sent without it (run.json says so)`,
        );
      },
      onMaxTokensParamSwitched: (from, to) =>
        hooks.warn(`warning: ${model.name}'s API rejects ${from}; every call sends ${to} instead`),
    });
    for (const seed of spec.seeds) {
      if (hooks.signal?.aborted) return results;
      const result = await runMcEvaluation(
        {
          items: spec.items,
          itemsFormat: spec.itemsFormat,
          inputs: spec.inputs,
          model: { name: model.name, key: model.key, base_url: redactUrl(model.baseURL) },
          seed,
          temperature: spec.temperature,
          topP: spec.topP,
          maxTokens: spec.maxTokens,
          maxTokensParam: spec.maxTokensParam,
          style: spec.style,
          fewShot: spec.fewShot,
          fewShotFraction: 0.1,
          concurrency: spec.concurrency,
          outDir: spec.outDir,
          retry: spec.retry,
          timeoutMs: spec.timeoutMs,
        },
        {
          endpoint,
          texts: prompts.texts,
          promptHashes: mcPromptHashesOf(prompts, spec.itemsFormat, spec.style),
          version: softwareVersion(),
          now: () => performance.now(),
          wallClock: () => new Date(),
          retry: realRetryDeps,
          progress: hooks.progress(model.name, seed),
          log: hooks.log,
          parametersNotSent: () => [...notSent].sort(),
          signal: hooks.signal,
        },
      );
      results.push(result);
      hooks.onResult?.(result);
    }
  }
  return results;
}

// --- the job started from the browser --------------------------------------------------------------------------

export const MC_JOB_KIND = "mc-run";

export interface McJobParams {
  provider: string;
  itemsFile: string;
  seeds: number[];
  temperature: number | null;
  maxTokens: number;
  style: MentalBenchStyle;
  fewShot: number;
  concurrency: number;
}

/** The report folder's name of a job: the model's key and the items file, so a resumed job writes the same one. */
export function mcJobReportName(modelKey: string, itemsFile: string): string {
  return `${modelKey}_${basename(itemsFile, extname(itemsFile))}`.replace(/[^\w.-]/g, "-");
}

function checkedItems(path: string, shownAs: string) {
  const csv = extname(path).toLowerCase() === ".csv";
  const input = csv
    ? readImportFile(path, "mcItems", { json: false })
    : importFileSource(path, "mcItems", { json: true });
  // Checked whole, keeping of each item its id and hash; the run reads the items again as it asks them
  // (`checkItemFile`, docs/reliability.md, "Memory bounded by the longest line").
  const parsed = checkItemFile(typeof input === "string" ? textSource(input, shownAs) : input, { csv });
  if (parsed.errors.length || !parsed.items) {
    const shown = parsed.errors.slice(0, 5).map((e) => `${shownAs}:${e.line}: ${e.message}`);
    throw new ServiceError(
      `${shown.join("; ")}${parsed.errors.length > 5 ? `; … and ${parsed.errors.length - 5} more` : ""}; nothing was asked.`,
      "itemsFile",
      400,
    );
  }
  const sha = typeof input === "string" ? createHash("sha256").update(input).digest("hex") : input.sha256()!;
  return { parsed, sha };
}

/** Checks a job's items file before the job is queued (the same check the worker runs): refusals as ServiceError. */
export function checkMcJobItems(itemsFile: string): { items: number; format: "mentat" | "mentalbench" } {
  const { parsed } = checkedItems(evalInputPath(itemsFile), itemsFile);
  return { items: parsed.items!.count, format: parsed.format };
}

/** The job's work on its worker thread: the provider's model over the items file, then the report. */
export async function runMcJob(_db: Db, job: JobView, ctx: JobContext): Promise<JobOutcome> {
  const p = job.params as unknown as McJobParams;
  const provider = providerConnection(p.provider);
  const path = evalInputPath(p.itemsFile);
  const { parsed, sha } = checkedItems(path, p.itemsFile);
  const key = modelKeyFromName(provider.model);
  const problem = checkModelKey(key);
  if (problem) throw new ServiceError(`model ${JSON.stringify(provider.model)}: ${problem}`);
  const reportName = mcJobReportName(key, p.itemsFile);
  const outDir = join(evalRunsRoot(), "mc", reportName);
  let earlier = { calls: 0, retries: 0, failures: 0 };
  let results: McRunResult[];
  try {
    results = await runMcModels(
      {
        items: parsed.items!,
        itemsFormat: parsed.format,
        inputs: { path: resolve(path), sha256: sha },
        models: [{ name: provider.model, key, baseURL: provider.baseURL, apiKey: provider.apiKey }],
        seeds: p.seeds,
        temperature: p.temperature,
        topP: null,
        maxTokens: p.maxTokens,
        maxTokensParam: provider.maxTokensParam,
        style: p.style,
        fewShot: p.fewShot,
        concurrency: p.concurrency,
        outDir,
        retry: DEFAULT_RETRY_POLICY,
        timeoutMs: 300_000,
      },
      {
        warn: () => {},
        log: () => {},
        progress: (_model, seed) => jobProgressSink(ctx, `items, seed ${seed}`, earlier),
        onResult: (r) => {
          earlier = {
            calls: earlier.calls + r.calls,
            retries: earlier.retries + r.retries,
            failures: earlier.failures + r.failed,
          };
        },
        signal: ctx.signal,
      },
    );
  } catch (e) {
    if (e instanceof FileChangedError)
      throw new ServiceError(
        `${p.itemsFile}: the file changed during the run (its items are read again as they are asked); the answers written so far are kept.`,
      );
    throw e;
  }
  const stopped = results.find((r) => r.status !== "complete");
  if (ctx.signal.aborted || stopped || results.length < p.seeds.length)
    return { status: "stopped", message: stopped?.message ?? "not every seed ran." };
  return { status: "done", result: await finishMcJob(outDir, reportName) };
}

/** The end of a multiple-choice job: its run folders scored into `<CONCORD_MC_REPORTS>/<name>`, as mc-report writes. */
export async function finishMcJob(outDir: string, reportName: string): Promise<Record<string, unknown>> {
  const runs = findMcRunFolders(outDir).map((d) => readRunFolder(d, "concord"));
  const report = buildReport(runs, DEFAULT_DRIFT_OPTIONS, new Map(), "concord");
  await writeReport(report, runs, join(mcReportsRoot(), reportName), {
    version: softwareVersion(),
    createdAt: new Date().toISOString(),
    figures: true,
  });
  return { mcReport: reportName, runs: runs.length };
}

/** Starts a multiple-choice job on a worker thread, after the checks the worker makes (provider, items file). */
export function startMcJob(db: Db, input: { params: McJobParams; actorId: string | null }): number {
  const p = input.params;
  const provider = findProvider(p.provider);
  if (!provider) throw new ServiceError(`No provider "${p.provider}" is configured.`, "provider", 400);
  const problem = checkModelKey(modelKeyFromName(provider.model));
  if (problem) throw new ServiceError(`model ${JSON.stringify(provider.model)}: ${problem}`, "provider", 400);
  checkMcJobItems(p.itemsFile);
  return startWorkerJob(db, {
    kind: MC_JOB_KIND,
    subject: `mc_run:${mcJobReportName(modelKeyFromName(provider.model), p.itemsFile)}`,
    params: { ...p },
    worker: "mc-job",
    actorId: input.actorId,
  });
}
