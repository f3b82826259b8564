import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, redirect, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { z } from "zod";
import { requireForm, requireRole } from "~/accounts/guard.server";
import { listEvaluations } from "~/evaluation/evaluations.server";
import { startSafePsychJob } from "~/evaluation/run-job.server";
import { MENTALBENCH_STYLES } from "~/mc-evaluation/domain/prompts";
import { startMcJob } from "~/mc-evaluation/mc-job.server";
import { listProviders, ProviderConfigError, providersFile, type ProviderView } from "~/model-calls/providers.server";
import { getDb } from "~/platform/db.server";
import { addEvalInput, evalInputsRoot, listEvalInputs } from "~/platform/eval-files.server";
import { extname } from "node:path";
import { decodeImportBytes, importLimits, refusalLine } from "~/formats/import-contract";
import { parseSamples, STRATEGIES } from "~/evaluation/domain/runner-protocol";
import { parseItems } from "~/mc-evaluation/domain/items";
import { parseIntent } from "~/platform/intent";
import { listJobsOfKinds } from "~/platform/jobs.server";
import { ServiceError } from "~/platform/service-error";
import { EVAL_JOB_KINDS, EVAL_JOBS } from "~/protocols.server";
import { startGradingJob } from "~/rubric-grading/grading-job.server";
import { listGradingSets } from "~/rubric-grading/results.server";
import { CommandLines } from "~/ui/command-lines";
import { Csrf } from "~/ui/root-data";
import { Time } from "~/ui/time";

export const meta: MetaFunction = () => [{ title: "Evaluation jobs · Concord" }];

/**
 * Evaluation jobs started from the browser (docs/evaluation.md, "Running from the browser"): the providers the
 * server is configured with (never their keys), a form per kind of run, and the jobs so far. Admin only.
 */
export async function loader({ request }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  let providers: ProviderView[] = [];
  let configProblem: string | null = null;
  try {
    providers = listProviders();
  } catch (e) {
    if (!(e instanceof ProviderConfigError)) throw e;
    configProblem = e.message;
  }
  return {
    providers,
    configProblem,
    providersFile: providersFile(),
    inputsRoot: evalInputsRoot(),
    inputs: listEvalInputs(),
    evaluations: listEvaluations(db).map((e) => ({ id: e.id, name: e.name })),
    sets: listGradingSets(db).map((s) => ({ id: s.id, name: s.name, subsets: s.subsets.map((x) => x.name) })),
    jobs: listJobsOfKinds(db, EVAL_JOB_KINDS).map((j) => ({
      id: j.id,
      title: EVAL_JOBS[j.kind as keyof typeof EVAL_JOBS].title,
      status: j.status,
      done: j.progressDone,
      total: j.progressTotal,
      createdAt: j.createdAt,
    })),
  };
}

const count = (max: number) => z.coerce.number().int("must be a whole number").min(1).max(max);
const optionalCount = z
  .string()
  .trim()
  .transform((s) => (s === "" ? null : Number(s)))
  .refine((n) => n === null || (Number.isInteger(n) && n >= 1), "The limit must be a whole number of at least 1.");
const seeds = z
  .string()
  .trim()
  .regex(/^\d+(\s*,\s*\d+)*$/, "Seeds are whole numbers separated by commas.")
  .transform((s) => [...new Set(s.split(",").map((x) => Number(x.trim())))]);
const name = z.string().trim().min(1, "Give a name.");
/** An evaluation picked from the list (its id), or none (""); the server checks it exists (startSafePsychJob). */
const evaluationChoice = z
  .string()
  .trim()
  .regex(/^(\d{1,15})?$/, "Choose an evaluation from the list.")
  .optional()
  .transform((s) => (s ? Number(s) : null));

const ActionSchema = z.discriminatedUnion("intent", [
  z.object({
    intent: z.literal("start_grading"),
    setId: z.coerce.number().int(),
    candidateProvider: z.string(),
    candidateName: z.string().trim(),
    judgeProvider: name,
    judgeName: name,
    subset: z.string().trim(),
    limit: optionalCount,
  }),
  z.object({
    intent: z.literal("start_mc"),
    provider: name,
    itemsFile: name,
    seeds,
    style: z.enum(MENTALBENCH_STYLES),
    fewShot: z.coerce.number().int().min(0).max(20),
    concurrency: count(64),
  }),
  z.object({ intent: z.literal("check_input") }),
  z.object({ intent: z.literal("add_input") }),
  z.object({
    intent: z.literal("start_safe_psych"),
    provider: name,
    judgeProvider: name,
    samplesFile: name,
    strategies: z.array(z.enum(STRATEGIES)).min(1, "Choose at least one strategy."),
    seeds,
    limit: optionalCount,
    concurrency: count(64),
    evaluationId: evaluationChoice,
  }),
]);

export async function action({ request }: ActionFunctionArgs) {
  const me = await requireRole(request, "admin");
  const form = await requireForm(request, me);
  const parsed = parseIntent(form, ActionSchema, { arrays: ["strategies"] });
  if (!parsed.ok) return { ok: false as const, message: parsed.message };
  const a = parsed.data;
  if (a.intent === "check_input" || a.intent === "add_input") return inputFile(form, a.intent === "add_input");
  const db = getDb();
  let id: number;
  try {
    if (a.intent === "start_grading") {
      id = startGradingJob(db, {
        params: {
          setId: a.setId,
          candidate:
            a.candidateProvider === ""
              ? null
              : { provider: a.candidateProvider, name: a.candidateName || a.candidateProvider },
          judge: { provider: a.judgeProvider, name: a.judgeName },
          subset: a.subset || null,
          limit: a.limit,
        },
        actorId: me.id,
      });
    } else if (a.intent === "start_mc") {
      id = startMcJob(db, {
        params: {
          provider: a.provider,
          itemsFile: a.itemsFile,
          seeds: a.seeds,
          temperature: 0,
          maxTokens: 300,
          style: a.style,
          fewShot: a.fewShot,
          concurrency: a.concurrency,
        },
        actorId: me.id,
      });
    } else {
      id = startSafePsychJob(db, {
        params: {
          provider: a.provider,
          judgeProvider: a.judgeProvider,
          samplesFile: a.samplesFile,
          strategies: a.strategies,
          seeds: a.seeds,
          limit: a.limit,
          concurrency: a.concurrency,
          evaluationId: a.evaluationId,
        },
        actorId: me.id,
      });
    }
  } catch (e) {
    if (e instanceof ServiceError) return { ok: false as const, message: e.message };
    throw e;
  }
  return redirect(`/admin/eval-jobs/${id}`);
}

/**
 * Checks an uploaded input file as the command that reads it does — item files as `mc-run --items` (the import
 * contract, then every record, `FILE:LINE: reason`), a samples file as `run --samples` — and, for *Add*, puts it in
 * the inputs folder (`addEvalInput`). A file with a problem is never added.
 */
async function inputFile(form: FormData, add: boolean) {
  const file = form.get("file");
  if (!(file instanceof File) || file.size === 0)
    return { ok: false as const, message: "Choose a file.", lines: [] as string[] };
  const bytes = new Uint8Array(await file.arrayBuffer());
  const name = file.name;
  const ext = extname(name).toLowerCase();
  const json = ext !== ".csv";
  const decoded = decodeImportBytes(bytes, importLimits("mcItems"), { json });
  if ("problem" in decoded)
    return { ok: false as const, message: "Nothing was added.", lines: [refusalLine(name, decoded.problem)] };
  let summary: string;
  const lines: string[] = [];
  if (ext === ".json") {
    let value: unknown;
    try {
      value = JSON.parse(decoded.text.charCodeAt(0) === 0xfeff ? decoded.text.slice(1) : decoded.text);
    } catch (e) {
      return { ok: false as const, message: `${name} is not valid JSON: ${(e as Error).message}`, lines };
    }
    const samples = parseSamples(value);
    if (!samples.ok)
      return {
        ok: false as const,
        message: `${name}: nothing was added.`,
        lines: samples.errors.map((e) => `${name}: ${e}`),
      };
    summary = `${samples.cases.length} Safe-Psych cases (samples.json).`;
  } else {
    const items = parseItems(decoded.text, { csv: ext === ".csv" });
    for (const w of items.warnings.slice(0, 30)) lines.push(`${name}:${w.line}: warning: ${w.message}`);
    if (items.errors.length) {
      for (const e of items.errors.slice(0, 30)) lines.push(`${name}:${e.line}: ${e.message}`);
      if (items.errors.length > 30) lines.push(`… and ${items.errors.length - 30} more`);
      return { ok: false as const, message: `${name}: ${items.errors.length} problem(s); nothing was added.`, lines };
    }
    summary = `${items.items.length} ${items.format === "mentat" ? "MENTAT records" : "MentalBench items"}.`;
  }
  if (!add) return { ok: true as const, message: `${name}: ${summary} Check only: nothing was added.`, lines };
  try {
    const r = addEvalInput(name, bytes);
    return {
      ok: true as const,
      message: `${name}: ${summary} ${r.unchanged ? "Already in the inputs folder: nothing changed." : "Added to the inputs folder."}`,
      lines,
    };
  } catch (e) {
    if (e instanceof ServiceError) return { ok: false as const, message: e.message, lines };
    throw e;
  }
}

function ProviderSelect({ name, providers, none }: { name: string; providers: ProviderView[]; none?: string }) {
  return (
    <select name={name} required={!none} defaultValue={none ? "" : undefined}>
      {none ? <option value="">{none}</option> : null}
      {providers.map((p) => (
        <option key={p.name} value={p.name} disabled={!p.keyAvailable}>
          {p.name} ({p.model}){p.keyAvailable ? "" : " — key missing on the server"}
        </option>
      ))}
    </select>
  );
}

function FileSelect({ name, files, prefer }: { name: string; files: string[]; prefer: RegExp }) {
  const sorted = [...files.filter((f) => prefer.test(f)), ...files.filter((f) => !prefer.test(f))];
  return (
    <select name={name} required>
      {sorted.map((f) => (
        <option key={f} value={f}>
          {f}
        </option>
      ))}
    </select>
  );
}

export default function EvalJobs() {
  const { providers, configProblem, providersFile, inputsRoot, inputs, evaluations, sets, jobs } =
    useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const busy = useNavigation().state !== "idle";
  const noProviders = providers.length === 0;
  return (
    <section>
      <h1>Evaluation jobs</h1>
      <p className="muted">
        Start a Safe-Psych run, a rubric-grading run or a multiple-choice run against a model provider configured on the
        server. Each job runs in the background: you may leave its page and come back, cancel it and resume it.
      </p>
      {result && !("lines" in result) && !result.ok ? (
        <p className="notice warn" role="alert">
          {result.message}
        </p>
      ) : null}
      {configProblem ? (
        <p className="notice warn" role="alert">
          The providers file cannot be read: {configProblem}
        </p>
      ) : null}

      <h2>Providers</h2>
      {noProviders ? (
        <p className="card">
          No providers are configured. The server reads them from <code>{providersFile}</code> (docs/deploying.md,
          &ldquo;Model providers&rdquo;).
        </p>
      ) : (
        <table data-testid="providers">
          <thead>
            <tr>
              <th>Provider</th>
              <th>Model</th>
              <th>Base URL</th>
              <th>Key</th>
            </tr>
          </thead>
          <tbody>
            {providers.map((p) => (
              <tr key={p.name}>
                <td>{p.name}</td>
                <td>{p.model}</td>
                <td>
                  <code>{p.baseUrl}</code>
                </td>
                <td>{!p.needsKey ? "none needed" : p.keyAvailable ? "set on the server" : "missing on the server"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <div className="grid2" style={{ marginTop: "1.5rem" }}>
        <Form method="post" className="card stacked" aria-label="Start a rubric-grading run">
          <Csrf />
          <h2>Rubric-grading run</h2>
          {sets.length === 0 ? (
            <p className="muted">No evaluation sets yet (see Rubric grading).</p>
          ) : (
            <>
              <label>
                Evaluation set
                <select name="setId" required>
                  {sets.map((s) => (
                    <option key={s.id} value={s.id}>
                      {s.name}
                    </option>
                  ))}
                </select>
              </label>
              <label>
                Candidate (collects responses first)
                <ProviderSelect
                  name="candidateProvider"
                  providers={providers}
                  none="None: grade the stored responses"
                />
              </label>
              <label>
                Candidate&rsquo;s name in the set
                <input name="candidateName" placeholder="the provider's name" />
              </label>
              <label>
                Judge
                <ProviderSelect name="judgeProvider" providers={providers} />
              </label>
              <label>
                Judge&rsquo;s name in the set
                <input name="judgeName" required defaultValue="judge" />
              </label>
              <label>
                Subset (optional)
                <input name="subset" />
              </label>
              <label>
                At most N conversations (optional)
                <input name="limit" inputMode="numeric" />
              </label>
              <button type="submit" name="intent" value="start_grading" disabled={busy || noProviders}>
                Start grading
              </button>
            </>
          )}
        </Form>

        <Form method="post" className="card stacked" aria-label="Start a multiple-choice run">
          <Csrf />
          <h2>Multiple-choice run</h2>
          {inputs.length === 0 ? (
            <p className="muted">
              No input files: put MENTAT or MentalBench item files in <code>{inputsRoot}</code>.
            </p>
          ) : (
            <>
              <label>
                Model
                <ProviderSelect name="provider" providers={providers} />
              </label>
              <label>
                Items file
                <FileSelect name="itemsFile" files={inputs} prefer={/\.(jsonl|csv)$/} />
              </label>
              <label>
                Seeds
                <input name="seeds" defaultValue="0" required />
              </label>
              <label>
                MentalBench prompt
                <select name="style" defaultValue="paper">
                  {MENTALBENCH_STYLES.map((s) => (
                    <option key={s}>{s}</option>
                  ))}
                </select>
              </label>
              <label>
                Few-shot examples (MENTAT)
                <input name="fewShot" inputMode="numeric" defaultValue="0" />
              </label>
              <label>
                Calls in flight
                <input name="concurrency" inputMode="numeric" defaultValue="8" />
              </label>
              <button type="submit" name="intent" value="start_mc" disabled={busy || noProviders}>
                Start the run
              </button>
            </>
          )}
        </Form>

        <Form method="post" className="card stacked" aria-label="Start a Safe-Psych run">
          <Csrf />
          <h2>Safe-Psych run</h2>
          {inputs.length === 0 ? (
            <p className="muted">
              No input files: put a <code>samples.json</code> in <code>{inputsRoot}</code>.
            </p>
          ) : (
            <>
              <label>
                Model
                <ProviderSelect name="provider" providers={providers} />
              </label>
              <label>
                Judge
                <ProviderSelect name="judgeProvider" providers={providers} />
              </label>
              <label>
                Samples
                <FileSelect name="samplesFile" files={inputs} prefer={/\.json$/} />
              </label>
              <fieldset>
                <legend>Strategies</legend>
                {STRATEGIES.map((s) => (
                  <label key={s} className="inline">
                    <input type="checkbox" name="strategies" value={s} defaultChecked={s.startsWith("sequential")} />{" "}
                    {s}
                  </label>
                ))}
              </fieldset>
              <label>
                Seeds
                <input name="seeds" defaultValue="123" required />
              </label>
              <label>
                At most N cases per seed (optional)
                <input name="limit" inputMode="numeric" />
              </label>
              <label>
                Calls in flight
                <input name="concurrency" inputMode="numeric" defaultValue="8" />
              </label>
              <label>
                Import into evaluation (optional)
                <select name="evaluationId" defaultValue="">
                  <option value="">None: leave the runs on disk</option>
                  {evaluations.map((e) => (
                    <option key={e.id} value={e.id}>
                      {e.name}
                    </option>
                  ))}
                </select>
              </label>
              <button type="submit" name="intent" value="start_safe_psych" disabled={busy || noProviders}>
                Start the run
              </button>
            </>
          )}
        </Form>
      </div>

      <Form method="post" encType="multipart/form-data" className="card stacked" aria-label="Add an input file">
        <Csrf />
        <h2>Add an input file</h2>
        <p className="muted">
          A samples.json for Safe-Psych runs, or MENTAT records / MentalBench items (.jsonl, .csv) for multiple-choice
          runs. The file is checked as the command line checks it; a file with a problem is not added.
        </p>
        <label>
          File
          <input type="file" name="file" accept=".json,.jsonl,.csv" required />
        </label>
        <button type="submit" name="intent" value="check_input" className="secondary" disabled={busy}>
          Check
        </button>{" "}
        <button type="submit" name="intent" value="add_input" disabled={busy}>
          Add
        </button>
        {result && "lines" in result ? (
          <CommandLines ok={result.ok} summary={result.message} lines={result.lines} testId="input-file" />
        ) : null}
      </Form>

      <h2>Jobs</h2>
      {jobs.length === 0 ? (
        <p className="muted">No evaluation jobs yet.</p>
      ) : (
        <table data-testid="eval-jobs">
          <thead>
            <tr>
              <th>Job</th>
              <th>Kind</th>
              <th>Status</th>
              <th className="num">Done</th>
              <th>Started</th>
            </tr>
          </thead>
          <tbody>
            {jobs.map((j) => (
              <tr key={j.id}>
                <td>
                  <Link to={`/admin/eval-jobs/${j.id}`}>Job {j.id}</Link>
                </td>
                <td>{j.title}</td>
                <td>{j.status}</td>
                <td className="num">
                  {j.done} / {j.total}
                </td>
                <td>
                  <Time at={j.createdAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
