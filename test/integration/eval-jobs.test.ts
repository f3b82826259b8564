/**
 * Evaluation jobs started from the browser, on worker threads, against the OpenAI-compatible stub
 * (docs/evaluation.md, "Running from the browser"): a grading run and a multiple-choice run from start to the
 * result, a Safe-Psych run into its run folders and, when it names an evaluation, into that evaluation, progress with calls and counts, cancel and resume without repeating
 * a finished call, a server restart that marks the job stopped and is resumed, refusals, and the provider's key: used
 * on the calls, and found in no job row, audit event, database byte or log line.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { importFileSource } from "../../app/cli/io";
import { findProvider, listProviders, providerConnection } from "../../app/model-calls/providers.server";
import type { Db } from "../../app/platform/db.server";
import { getJob, interruptStaleJobs, STOPPED_RESUMABLE_MESSAGE } from "../../app/platform/jobs.server";
import {
  cancelWorkerJob,
  CANCELLED_MESSAGE,
  killWorkerJob,
  resumeWorkerJob,
  workerJobEnded,
} from "../../app/platform/worker-jobs.server";
import { startGradingJob } from "../../app/rubric-grading/grading-job.server";
import { importEvalSet, requireGradingSet } from "../../app/rubric-grading/sets.server";
import { getSetResults, ResultsQuerySchema } from "../../app/rubric-grading/results.server";
import { startMcJob } from "../../app/mc-evaluation/mc-job.server";
import { getMcReport } from "../../app/mc-evaluation/reports.server";
import { startSafePsychJob, type SafePsychJobParams } from "../../app/evaluation/run-job.server";
import { listEvaluations } from "../../app/evaluation/evaluations.server";
import { EVAL_JOBS } from "../../app/protocols.server";
import { ServiceError } from "../../app/platform/service-error";
import { freshDb, makeUser } from "../support/db";
import { signedIn } from "../support/route-calls";
import { startOpenAiStub, type OpenAiStub } from "../support/openai-stub";
import {
  createJobEvaluation,
  evalJobsHandler,
  KEY_ENV,
  SAMPLES,
  SECRET_KEY,
  setUpEvalJobs,
  type EvalJobsEnv,
} from "../support/eval-jobs";

let db: Db;
let cleanup: () => void;
let stub: OpenAiStub;
let env: EvalJobsEnv;
let logged = "";

beforeEach(async () => {
  ({ db, cleanup } = freshDb());
  stub = await startOpenAiStub(evalJobsHandler());
  env = setUpEvalJobs(stub.baseURL);
  logged = "";
  for (const stream of [process.stdout, process.stderr] as const) {
    const write = stream.write.bind(stream);
    vi.spyOn(stream, "write").mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
      logged += String(chunk);
      return (write as (c: unknown, ...r: unknown[]) => boolean)(chunk, ...rest);
    });
  }
});
afterEach(async () => {
  vi.restoreAllMocks();
  await stub.close();
  env.restore();
  cleanup();
});

const MC = { seeds: [0], temperature: 0, maxTokens: 300, style: "paper" as const, fewShot: 0, concurrency: 4 };

function importSet(name = "psych") {
  importEvalSet(db, {
    name,
    source: importFileSource("test/fixtures/rubric-grading/set.jsonl", "grading", { json: true }),
  });
  return requireGradingSet(db, name);
}

async function admin() {
  return (await makeUser(db, "admin1", ["admin"])).id;
}

/** Waits until the job's row satisfies `ok` (the worker writes it on its own connection). */
async function until(jobId: number, ok: (j: NonNullable<ReturnType<typeof getJob>>) => boolean, ms = 20_000) {
  const end = Date.now() + ms;
  for (;;) {
    const j = getJob(db, jobId)!;
    if (ok(j)) return j;
    if (Date.now() > end) throw new Error(`job ${jobId} stayed ${JSON.stringify(j)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function expectNoKeyAnywhere() {
  const rows = JSON.stringify(db.$client.prepare("SELECT * FROM jobs").all());
  const events = JSON.stringify(db.$client.prepare("SELECT * FROM events").all());
  expect(rows).not.toContain(SECRET_KEY);
  expect(events).not.toContain(SECRET_KEY);
  expect(db.$client.serialize().includes(Buffer.from(SECRET_KEY))).toBe(false);
  expect(logged).not.toContain(SECRET_KEY);
}

describe("providers configured on the server", () => {
  it("show name, model and base URL, never the key; the worker's connection holds it", () => {
    const views = listProviders();
    expect(views.map((v) => v.name)).toEqual(["stub-candidate", "stub-judge", "stub-mc"]);
    expect(JSON.stringify(views)).not.toContain(SECRET_KEY);
    expect(JSON.stringify(views)).not.toContain(KEY_ENV);
    expect(views[0]).toEqual({
      name: "stub-candidate",
      model: "cand-model",
      baseUrl: stub.baseURL,
      needsKey: true,
      keyAvailable: true,
    });
    expect(providerConnection("stub-judge").apiKey).toBe(SECRET_KEY);
    delete process.env[KEY_ENV];
    expect(findProvider("stub-judge")!.keyAvailable).toBe(false);
    expect(() => providerConnection("stub-judge")).toThrow(`the environment variable ${KEY_ENV} is not set`);
  });
  it("a bad providers file is refused as FILE: field: reason, and the list page says so", async () => {
    const file = process.env.CONCORD_PROVIDERS!;
    writeFileSync(file, JSON.stringify({ providers: [{ name: "x", baseUrl: "ftp://host", model: "m" }] }));
    expect(() => listProviders()).toThrow(`${file}: providers.0.baseUrl: an http(s) URL`);
    writeFileSync(
      file,
      JSON.stringify({ providers: [{ name: "x", baseUrl: "http://h/v1", model: "m", apiKey: "sk-x" }] }),
    );
    expect(() => listProviders()).toThrow(/providers\.0: Unrecognized key: "apiKey"/);
    writeFileSync(file, "{");
    expect(() => listProviders()).toThrow(`${file}: not valid JSON`);
    await makeUser(db, "boss", ["admin"]);
    const boss = await signedIn(db, "boss");
    const list = await import("../../app/routes/admin.eval-jobs._index");
    const view = await list.loader({
      request: new Request("http://concord.test/admin/eval-jobs", { headers: boss.post("/", {}).headers }),
      params: {},
      context: {},
    });
    expect(view.providers).toEqual([]);
    expect(view.configProblem).toMatch(/not valid JSON/);
    rmSync(file);
    expect(listProviders()).toEqual([]);
  });
});

describe("jobs on worker threads", () => {
  it("a grading run: the candidate's responses, then the judge's verdicts, progress and the report's scores", async () => {
    const actor = await admin();
    const set = importSet();
    const id = startGradingJob(db, {
      params: {
        setId: set.id,
        candidate: { name: "cand", provider: "stub-candidate" },
        judge: { name: "judge", provider: "stub-judge" },
        subset: null,
        limit: null,
      },
      actorId: actor,
    });
    await workerJobEnded(id);
    const job = await until(id, (j) => j.status !== "running" && j.status !== "queued");
    expect(job).toMatchObject({ status: "done", result: { gradingSetId: set.id, gradingSet: "psych" } });
    // 4 conversations, 9 criteria: 4 responses and 9 verdicts, each one call.
    expect(job.detail).toMatchObject({ step: "verdicts", done: 9, total: 9, calls: 13, failures: 0 });
    expect(stub.calls.length).toBe(13);
    expect(stub.calls.every((c) => c.authorization === `Bearer ${SECRET_KEY}`)).toBe(true);
    const results = getSetResults(db, set, ResultsQuerySchema.parse({}));
    expect(results.judges).toEqual([expect.objectContaining({ name: "judge", pending: 0, total: 9 })]);
    const events = db.$client.prepare("SELECT action, actor_id AS actor FROM events WHERE entity = 'job'").all();
    expect(events).toEqual([{ action: "start", actor }]);
    expectNoKeyAnywhere();
  });

  it("a multiple-choice run ends in a report the report pages list", async () => {
    const id = startMcJob(db, {
      params: { provider: "stub-mc", itemsFile: "mentalbench-items.jsonl", ...MC },
      actorId: null,
    });
    await workerJobEnded(id);
    const job = getJob(db, id)!;
    expect(job).toMatchObject({ status: "done", result: { mcReport: "mc-model_mentalbench-items", runs: 1 } });
    expect(job.detail).toMatchObject({ done: 36, total: 36, calls: 36 });
    expect(getMcReport("mc-model_mentalbench-items")!.tables.map((t) => t.name)).toContain("mentalbench-table2");
    expectNoKeyAnywhere();
  });

  it("a Safe-Psych run writes one run folder per strategy and seed, and its result names them", async () => {
    const id = startSafePsychJob(db, {
      params: {
        provider: "stub-candidate",
        judgeProvider: "stub-judge",
        samplesFile: "samples.json",
        strategies: ["sequential_info_abstention_aware"],
        seeds: [123],
        limit: null,
        concurrency: 2,
      },
      actorId: null,
    });
    await workerJobEnded(id);
    const job = getJob(db, id)!;
    expect(job.status).toBe("done");
    const folders = job.result!.folders as { dir: string; finished: number; cases: number; complete: boolean }[];
    expect(folders).toEqual([expect.objectContaining({ finished: 2, cases: 2, complete: true })]);
    expect(existsSync(join(folders[0]!.dir, "trajectories.jsonl"))).toBe(true);
    expect(job.detail).toMatchObject({ step: "trajectories", done: 2, total: 2 });
    expectNoKeyAnywhere();
  });

  it("cancel keeps what finished; resume asks only what is left", async () => {
    stub.setHandler(evalJobsHandler(40));
    const actor = await admin();
    const id = startMcJob(db, {
      params: { provider: "stub-mc", itemsFile: "mentalbench-items.jsonl", ...MC, concurrency: 2 },
      actorId: actor,
    });
    await until(id, (j) => j.progressDone >= 4);
    await cancelWorkerJob(db, { jobId: id, actorId: actor });
    const cancelled = getJob(db, id)!;
    expect(cancelled).toMatchObject({ status: "cancelled", error: CANCELLED_MESSAGE });
    const asked = stub.calls.length;
    expect(asked).toBeLessThan(36);
    await expect(cancelWorkerJob(db, { jobId: id, actorId: actor })).rejects.toThrow("not running");
    stub.setHandler(evalJobsHandler());
    const resumed = resumeWorkerJob(db, { jobId: id, actorId: actor });
    await workerJobEnded(resumed);
    expect(getJob(db, resumed)).toMatchObject({ status: "done", params: expect.objectContaining({ resumedFrom: id }) });
    // Every item asked once, except those in flight when the cancel came (asked, never written: at most 2).
    const items = new Set(stub.calls.map((c) => c.last));
    expect(items.size).toBe(36);
    expect(stub.calls.length - 36).toBeLessThanOrEqual(2);
    expect(() => resumeWorkerJob(db, { jobId: resumed, actorId: actor })).toThrow("nothing to resume");
    const events = db.$client
      .prepare("SELECT action, entity_id AS job FROM events WHERE entity = 'job' ORDER BY id")
      .all();
    expect(events).toEqual([
      { action: "start", job: String(id) },
      { action: "cancel", job: String(id) },
      { action: "resume", job: String(resumed) },
    ]);
  });

  it("a multiple-choice job reads its items file again as it asks: a file rewritten meanwhile fails the job", async () => {
    // The items are not kept for the job (docs/reliability.md, "Memory bounded by the longest line"): the file
    // checked before the first call is read again as the items are asked, and must be the one checked.
    // Each question lengthened, so that the file spans several of the reader's 64 KiB chunks.
    const original =
      readFileSync(join(env.inputs, "mentalbench-items.jsonl"), "utf8")
        .trimEnd()
        .split("\n")
        .map((l) => {
          const item = JSON.parse(l) as { question: string };
          return JSON.stringify({ ...item, question: `${item.question} ${"Sleeps poorly. ".repeat(300)}` });
        })
        .join("\n") + "\n";
    writeFileSync(join(env.inputs, "rewritten.jsonl"), original);
    let asked = 0;
    stub.setHandler((call) => {
      if (call.model === "mc-model" && ++asked === 3) {
        const lines = original.trimEnd().split("\n");
        const last = JSON.parse(lines.at(-1)!) as { question: string };
        lines[lines.length - 1] = JSON.stringify({ ...last, question: `${last.question} (edited)` });
        writeFileSync(join(env.inputs, "rewritten.jsonl"), lines.join("\n") + "\n");
      }
      return evalJobsHandler()(call);
    });
    const id = startMcJob(db, {
      params: { provider: "stub-mc", itemsFile: "rewritten.jsonl", ...MC, concurrency: 1 },
      actorId: null,
    });
    await workerJobEnded(id);
    const job = getJob(db, id)!;
    expect(job.status).toBe("failed");
    expect(job.error).toContain("rewritten.jsonl: the file changed during the run");
    stub.setHandler(evalJobsHandler());
  });

  it("a server restart marks a running job stopped with a resume message; resuming finishes it", async () => {
    stub.setHandler(evalJobsHandler(40));
    const id = startMcJob(db, {
      params: { provider: "stub-mc", itemsFile: "mentalbench-items.jsonl", ...MC, concurrency: 2 },
      actorId: null,
    });
    await until(id, (j) => j.progressDone >= 2);
    // The process dies: the worker stops without ending its job, which stays "running" in the database.
    await killWorkerJob(id);
    expect(getJob(db, id)!.status).toBe("running");
    expect(interruptStaleJobs(db)).toBe(1);
    expect(getJob(db, id)).toMatchObject({ status: "failed", error: STOPPED_RESUMABLE_MESSAGE });
    stub.setHandler(evalJobsHandler());
    const resumed = resumeWorkerJob(db, { jobId: id, actorId: null });
    await workerJobEnded(resumed);
    expect(getJob(db, resumed)!.status).toBe("done");
    expect(new Set(stub.calls.map((c) => c.last)).size).toBe(36);
  });

  it("refuses a second job on the same subject, unknown providers and bad input files before queuing", async () => {
    stub.setHandler(evalJobsHandler(40));
    const params = { provider: "stub-mc", itemsFile: "mentalbench-items.jsonl", ...MC };
    const id = startMcJob(db, { params, actorId: null });
    expect(() => startMcJob(db, { params, actorId: null })).toThrow(/already running here \(job \d+\)/);
    await cancelWorkerJob(db, { jobId: id, actorId: null });
    expect(() => startMcJob(db, { params: { ...params, provider: "nope" }, actorId: null })).toThrow(
      'No provider "nope" is configured.',
    );
    expect(() => startMcJob(db, { params: { ...params, itemsFile: "../secret.jsonl" }, actorId: null })).toThrow(
      ServiceError,
    );
    expect(db.$client.prepare("SELECT COUNT(*) AS n FROM jobs").get()).toEqual({ n: 1 });
  });
});

describe("a Safe-Psych job that names an evaluation", () => {
  const STRATEGY = "sequential_info_abstention_aware" as const;
  const params = (evaluationId: number | null): SafePsychJobParams => ({
    provider: "stub-candidate",
    judgeProvider: "stub-judge",
    samplesFile: "samples.json",
    strategies: [STRATEGY],
    seeds: [123],
    limit: null,
    concurrency: 1,
    evaluationId,
  });
  const evaluation = (name: string, ids: string[]) => createJobEvaluation(db, env.dir, name, ids);
  const runsOf = (id: number) => listEvaluations(db).find((e) => e.id === id)!.runs;

  it("ends with its runs in the evaluation: listed by the evaluation's page, its numbers, and the job's link", async () => {
    await makeUser(db, "boss", ["admin"]);
    // The servers report 7 tokens a call: the run records them (run.json's session) and the runs list shows them.
    const answer = evalJobsHandler();
    stub.setHandler(async (call) => {
      const reply = await answer(call);
      return "content" in reply ? { ...reply, totalTokens: 7 } : reply;
    });
    const evaluationId = evaluation("E", ["a", "b"]);
    const id = startSafePsychJob(db, { params: params(evaluationId), actorId: null });
    await workerJobEnded(id);
    const job = getJob(db, id)!;
    expect(job.status).toBe("done");
    expect(job.result!.import).toEqual({
      evaluationId,
      evaluation: "E",
      imported: true,
      runs: 1,
      trajectories: 2,
      problems: [],
      moreProblems: 0,
    });
    const folders = job.result!.folders as { dir: string }[];
    expect(existsSync(join(folders[0]!.dir, "trajectories.jsonl"))).toBe(true);

    const boss = await signedIn(db, "boss");
    const cookie = boss.post("/", {}).headers.get("Cookie")!;
    const get = (path: string) => new Request(`http://concord.test${path}`, { headers: { Cookie: cookie } });
    const one = await import("../../app/routes/admin.eval-jobs.$jobId._index");
    const page = await one.loader({
      request: get(`/admin/eval-jobs/${id}`),
      params: { jobId: String(id) },
      context: {},
    });
    expect(page.results).toEqual({ href: `/admin/evaluations/${evaluationId}`, label: 'The evaluation "E"' });
    expect(page.importRefused).toBeNull();
    expect(page.params).toContainEqual(["evaluation", "E"]);

    const evaluationPage = await import("../../app/routes/admin.evaluations.$evaluationId._index");
    const view = await evaluationPage.loader({
      request: get(`/admin/evaluations/${evaluationId}`),
      params: { evaluationId: String(evaluationId) },
      context: {},
    });
    expect(view.runs.rows.map((r) => [r.model, r.strategy, r.seed, r.status, r.trajectories])).toEqual([
      ["cand-model", STRATEGY, 123, "complete", 2],
      ["other", STRATEGY, 1, "complete", 2],
    ]);
    // The job's calls as the run counts them: a model call per step, a judge call per answered step (a: 2 steps, b: 1).
    expect(view.runs.rows[0]!.calls).toBe(6);
    // Tokens as recorded: 6 calls × 7; the other run's run.json records none, so it has none (the page shows "—").
    expect(view.runs.rows.map((r) => r.tokens)).toEqual([42, null]);
    const runJson = JSON.parse(readFileSync(join(folders[0]!.dir, "run.json"), "utf8"));
    expect(runJson.sessions.map((s: { tokens: unknown }) => s.tokens)).toEqual([42]);
    const row = (table: string) =>
      view.tables.find((t) => t.id === table)!.rows.find((r) => r.model === "cand-model" && r.strategy === STRATEGY)!;
    // "a" diagnosed with its gold code at its earliest sufficient section, "b" abstained: the paper's numbers.
    expect(row("accuracy").cells[0]!.mean).toBe(1);
    expect(row("timing").cells.map((c) => c!.mean)).toEqual([0, 1, 0, 0]);
    expect(row("abstention").cells.map((c) => c!.mean)).toEqual([0, 0]);
    expectNoKeyAnywhere();
  });

  it("a refused import is the job's result, with the FILE:LINE lines; nothing imported, the runs stay on disk", async () => {
    await makeUser(db, "boss", ["admin"]);
    const evaluationId = evaluation("only-a", ["a"]);
    const id = startSafePsychJob(db, { params: params(evaluationId), actorId: null });
    await workerJobEnded(id);
    const job = getJob(db, id)!;
    expect(job.status).toBe("done");
    const folders = job.result!.folders as { dir: string }[];
    const file = join(folders[0]!.dir, "trajectories.jsonl");
    expect(existsSync(file)).toBe(true);
    const refused = job.result!.import as { imported: boolean; problems: string[] };
    expect(refused).toMatchObject({ evaluationId, evaluation: "only-a", imported: false, runs: 0, trajectories: 0 });
    expect(refused.problems).toHaveLength(1);
    expect(refused.problems[0]).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:\\d+: .*"b"`));
    expect(runsOf(evaluationId)).toBe(1);
    expect(EVAL_JOBS["safe-psych-run"].results(job.result!)).toBeNull();
    const boss = await signedIn(db, "boss");
    const one = await import("../../app/routes/admin.eval-jobs.$jobId._index");
    const page = await one.loader({
      request: new Request(`http://concord.test/admin/eval-jobs/${id}`, {
        headers: { Cookie: boss.post("/", {}).headers.get("Cookie")! },
      }),
      params: { jobId: String(id) },
      context: {},
    });
    expect(page.results).toBeNull();
    expect(page.importRefused).toEqual({ evaluation: "only-a", problems: refused.problems, more: 0 });
  });

  it("a refused import is imported again from the job page once the folder is fixed: all or nothing, audited", async () => {
    await makeUser(db, "boss", ["admin"]);
    const evaluationId = evaluation("only-a", ["a"]);
    const id = startSafePsychJob(db, { params: params(evaluationId), actorId: null });
    await workerJobEnded(id);
    const folders = getJob(db, id)!.result!.folders as { dir: string }[];
    const file = join(folders[0]!.dir, "trajectories.jsonl");
    // The job's run folders are under the jobs' runs folder, which the evaluation page's import does not read.
    expect(file.startsWith(join(env.dir, "runs"))).toBe(true);
    expect(getJob(db, id)!.result!.import).toMatchObject({ imported: false });
    const boss = await signedIn(db, "boss");
    const one = await import("../../app/routes/admin.eval-jobs.$jobId._index");
    const press = async () =>
      (await one.action({
        request: boss.post(`/admin/eval-jobs/${id}`, { intent: "import" }),
        params: { jobId: String(id) },
        context: {},
      })) as { ok: boolean; message: string };
    const events = () =>
      db.$client
        .prepare("SELECT changes FROM events WHERE entity = 'job' AND entity_id = ? AND action = 'import'")
        .pluck()
        .all(String(id)) as string[];

    // Not fixed yet: refused again, nothing imported, the refusal kept as the job's result.
    const again = await press();
    expect(again).toMatchObject({ ok: false });
    expect(runsOf(evaluationId)).toBe(1);
    expect(getJob(db, id)!.result!.import).toMatchObject({
      imported: false,
      problems: [expect.stringContaining('"b"')],
    });
    expect(events()).toHaveLength(1);

    // The operator removes the case the evaluation has no gold label for: the folders import.
    const lines = readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l && !l.includes('"sample_id": "b"'));
    expect(lines).toHaveLength(1);
    writeFileSync(file, lines.join("\n") + "\n");
    const done = await press();
    expect(done).toEqual({ ok: true, message: 'Imported: 1 runs, 1 trajectories into "only-a".' });
    expect(runsOf(evaluationId)).toBe(2);
    const job = getJob(db, id)!;
    expect(job.result!.import).toEqual({
      evaluationId,
      evaluation: "only-a",
      imported: true,
      runs: 1,
      trajectories: 1,
      problems: [],
      moreProblems: 0,
    });
    expect(EVAL_JOBS["safe-psych-run"].results(job.result!)).toEqual({
      href: `/admin/evaluations/${evaluationId}`,
      label: 'The evaluation "only-a"',
    });
    expect(events().map((e) => JSON.parse(e))).toEqual([
      { evaluationId, imported: false, runs: 0 },
      { evaluationId, imported: true, runs: 1 },
    ]);
    // Once imported, a second press changes nothing.
    expect(await press()).toEqual({ ok: false, message: "This job's run folders are already imported." });
    expect(runsOf(evaluationId)).toBe(2);
  });

  it("a cancelled job imports nothing; its resume imports when it ends", async () => {
    const evaluationId = evaluation("E", ["a", "b"]);
    stub.setHandler(evalJobsHandler(100));
    const id = startSafePsychJob(db, { params: params(evaluationId), actorId: null });
    const end = Date.now() + 20_000;
    while (stub.calls.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    await cancelWorkerJob(db, { jobId: id, actorId: null });
    const cancelled = getJob(db, id)!;
    expect(cancelled.status).toBe("cancelled");
    expect(cancelled.result?.import).toBeUndefined();
    expect(runsOf(evaluationId)).toBe(1);
    stub.setHandler(evalJobsHandler());
    const resumed = resumeWorkerJob(db, { jobId: id, actorId: null });
    await workerJobEnded(resumed);
    const job = getJob(db, resumed)!;
    expect(job.status).toBe("done");
    expect(job.result!.import).toMatchObject({ evaluationId, imported: true, runs: 1, trajectories: 2 });
    expect(runsOf(evaluationId)).toBe(2);
  });

  it("the start form takes an evaluation from the list: checked with zod, and refused when it does not exist", async () => {
    await makeUser(db, "boss", ["admin"]);
    const evaluationId = evaluation("E", ["a", "b"]);
    const boss = await signedIn(db, "boss");
    const list = await import("../../app/routes/admin.eval-jobs._index");
    const view = await list.loader({
      request: new Request("http://concord.test/admin/eval-jobs", {
        headers: { Cookie: boss.post("/", {}).headers.get("Cookie")! },
      }),
      params: {},
      context: {},
    });
    expect(view.evaluations).toEqual([{ id: evaluationId, name: "E" }]);
    const form = {
      intent: "start_safe_psych",
      provider: "stub-candidate",
      judgeProvider: "stub-judge",
      samplesFile: "samples.json",
      strategies: STRATEGY,
      seeds: "123",
      limit: "",
      concurrency: "2",
    };
    const post = (extra: Record<string, string>) =>
      list.action({ request: boss.post("/admin/eval-jobs", { ...form, ...extra }), params: {}, context: {} });
    expect(await post({ evaluationId: "E; drop" })).toMatchObject({
      ok: false,
      message: expect.stringContaining("Choose an evaluation from the list."),
    });
    expect(await post({ evaluationId: String(evaluationId + 1) })).toEqual({
      ok: false,
      message: "No such evaluation: choose one from the list.",
    });
    expect(db.$client.prepare("SELECT COUNT(*) AS n FROM jobs").get()).toEqual({ n: 0 });
    const started = (await post({ evaluationId: String(evaluationId) })) as Response;
    const jobId = Number(/(\d+)$/.exec(started.headers.get("Location")!)![1]);
    expect(getJob(db, jobId)!.params).toMatchObject({ evaluationId });
    await workerJobEnded(jobId);
    expect(getJob(db, jobId)!.result!.import).toMatchObject({ imported: true });
    // Without one, the job behaves as before: no import in its result.
    const plain = (await post({ evaluationId: "" })) as Response;
    const plainId = Number(/(\d+)$/.exec(plain.headers.get("Location")!)![1]);
    expect(getJob(db, plainId)!.params).toMatchObject({ evaluationId: null });
    await workerJobEnded(plainId);
    expect(getJob(db, plainId)!.result).not.toHaveProperty("import");
  });
});

describe("the job pages", () => {
  const page = (path: string, cookie?: string) =>
    new Request(`http://concord.test${path}`, { headers: cookie ? { Cookie: cookie } : {} });
  async function thrown(p: Promise<unknown>): Promise<Response> {
    try {
      await p;
    } catch (e) {
      if (e instanceof Response) return e;
      throw e;
    }
    throw new Error("expected a thrown Response");
  }

  it("admins only, CSRF on every form, audit on start, cancel and resume; the key in no loader's answer", async () => {
    const list = await import("../../app/routes/admin.eval-jobs._index");
    const one = await import("../../app/routes/admin.eval-jobs.$jobId._index");
    const poll = await import("../../app/routes/admin.eval-jobs.$jobId.progress");
    await makeUser(db, "boss", ["admin"]);
    await makeUser(db, "rae", ["rater", "annotator", "adjudicator"]);
    const boss = await signedIn(db, "boss");
    const rae = await signedIn(db, "rae");
    const raeCookie = rae.post("/", {}).headers.get("Cookie")!;
    importSet();
    stub.setHandler(evalJobsHandler(30));

    // Not an admin: 403 on every loader and action; logged out: the login redirect.
    expect(
      (await thrown(list.loader({ request: page("/admin/eval-jobs", raeCookie), params: {}, context: {} }))).status,
    ).toBe(403);
    expect((await thrown(list.loader({ request: page("/admin/eval-jobs"), params: {}, context: {} }))).status).toBe(
      302,
    );
    const startMc = {
      intent: "start_mc",
      provider: "stub-mc",
      itemsFile: "mentalbench-items.jsonl",
      seeds: "0",
      style: "paper",
      fewShot: "0",
      concurrency: "2",
    };
    expect(
      (await thrown(list.action({ request: rae.post("/admin/eval-jobs", startMc), params: {}, context: {} }))).status,
    ).toBe(403);
    // A post without the session's CSRF token is refused.
    const forged = boss.post("/admin/eval-jobs", { ...startMc, csrf: "forged" });
    expect((await thrown(list.action({ request: forged, params: {}, context: {} }))).status).toBe(403);
    expect(db.$client.prepare("SELECT COUNT(*) AS n FROM jobs").get()).toEqual({ n: 0 });

    const view = await list.loader({
      request: page("/admin/eval-jobs", boss.post("/", {}).headers.get("Cookie")!),
      params: {},
      context: {},
    });
    expect(view.providers.map((p) => p.name)).toEqual(["stub-candidate", "stub-judge", "stub-mc"]);
    expect(view.inputs).toEqual(["mentalbench-items.jsonl", "samples.json"]);
    expect(JSON.stringify(view)).not.toContain(SECRET_KEY);
    expect(JSON.stringify(view)).not.toContain(KEY_ENV);

    const started = await list.action({ request: boss.post("/admin/eval-jobs", startMc), params: {}, context: {} });
    expect(started).toBeInstanceOf(Response);
    const location = (started as Response).headers.get("Location")!;
    const jobId = Number(/\/admin\/eval-jobs\/(\d+)$/.exec(location)![1]);
    const bossCookie = boss.post("/", {}).headers.get("Cookie")!;
    const params = { jobId: String(jobId) };
    expect((await thrown(one.loader({ request: page(location, raeCookie), params, context: {} }))).status).toBe(403);
    expect(
      (await thrown(poll.loader({ request: page(`${location}/progress`, raeCookie), params, context: {} }))).status,
    ).toBe(403);
    expect(
      (await thrown(one.action({ request: rae.post(location, { intent: "cancel" }), params, context: {} }))).status,
    ).toBe(403);
    await until(jobId, (j) => j.progressDone >= 2);
    const polled = await (
      await poll.loader({ request: page(`${location}/progress`, bossCookie), params, context: {} })
    ).json();
    expect(polled).toMatchObject({ id: jobId, status: "running", progress: { step: "items, seed 0", total: 36 } });
    expect(polled.progress.calls).toBeGreaterThanOrEqual(2);
    const cancelled = await one.action({ request: boss.post(location, { intent: "cancel" }), params, context: {} });
    expect(cancelled).toEqual({ ok: true, message: "Cancelled. Everything it finished is kept." });
    const stopped = await one.loader({ request: page(location, bossCookie), params, context: {} });
    expect(stopped.job.status).toBe("cancelled");
    expect(stopped.resumedBy).toBeNull();
    stub.setHandler(evalJobsHandler());
    const resumed = await one.action({ request: boss.post(location, { intent: "resume" }), params, context: {} });
    const resumedId = Number(/(\d+)$/.exec((resumed as Response).headers.get("Location")!)![1]);
    await workerJobEnded(resumedId);
    const done = await one.loader({
      request: page(`/admin/eval-jobs/${resumedId}`, bossCookie),
      params: { jobId: String(resumedId) },
      context: {},
    });
    expect(done.job.status).toBe("done");
    expect(done.results).toEqual({
      href: "/admin/mc-evaluation?report=mc-model_mentalbench-items",
      label: "The report mc-model_mentalbench-items",
    });
    expect(JSON.stringify(done)).not.toContain(SECRET_KEY);
    const events = db.$client
      .prepare("SELECT action, actor_id AS actor FROM events WHERE entity = 'job' ORDER BY id")
      .all();
    expect(events).toEqual(["start", "cancel", "resume"].map((action) => ({ action, actor: boss.user.id })));
    // A job of another kind (a MENTAT fit) is not an evaluation job: 404 here.
    expect(
      (
        await thrown(
          one.loader({ request: page("/admin/eval-jobs/999", bossCookie), params: { jobId: "999" }, context: {} }),
        )
      ).status,
    ).toBe(404);
    expectNoKeyAnywhere();
  });
});

describe("input files and evaluation sets from the pages", () => {
  async function multipart(path: string, username: string, fields: Record<string, string>, file: [string, string]) {
    const session = await signedIn(db, username);
    const cookie = session.post("/", {}).headers.get("Cookie")!;
    const body = new FormData();
    body.set("csrf", session.user.csrf);
    for (const [k, v] of Object.entries(fields)) body.set(k, v);
    body.set("file", new File([file[1]], file[0]));
    return new Request(`http://concord.test${path}`, { method: "POST", headers: { Cookie: cookie }, body });
  }

  it("checks an item file as mc-run does, adds it only when it is clean, and never replaces another file's bytes", async () => {
    await makeUser(db, "boss", ["admin"]);
    const list = await import("../../app/routes/admin.eval-jobs._index");
    const good = readFileSync("test/fixtures/mc-evaluation/mentalbench-items.jsonl", "utf8");
    const call = async (intent: string, file: [string, string]) =>
      list.action({ request: await multipart("/admin/eval-jobs", "boss", { intent }, file), params: {}, context: {} });
    expect(await call("check_input", ["more-items.jsonl", good])).toEqual({
      ok: true,
      message: "more-items.jsonl: 36 MentalBench items. Check only: nothing was added.",
      lines: [],
    });
    expect(existsSync(join(env.inputs, "more-items.jsonl"))).toBe(false);
    const bad = good.split("\n").slice(0, 2).join("\n") + '\n{"id": "x"}\n';
    const refused = (await call("add_input", ["bad-items.jsonl", bad])) as { ok: boolean; lines: string[] };
    expect(refused.ok).toBe(false);
    expect(refused.lines[0]).toMatch(/^bad-items\.jsonl:3: /);
    expect(existsSync(join(env.inputs, "bad-items.jsonl"))).toBe(false);
    expect(await call("add_input", ["more-items.jsonl", good])).toMatchObject({
      ok: true,
      message: /Added to the inputs folder/,
    });
    expect(readFileSync(join(env.inputs, "more-items.jsonl"), "utf8")).toBe(good);
    expect(await call("add_input", ["more-items.jsonl", good + "\n"])).toMatchObject({
      ok: false,
      message: 'An input file named "more-items.jsonl" exists with other content: rename the file.',
    });
    expect(await call("check_input", ["s.json", '[{"sample_id": "a"}]'])).toMatchObject({ ok: false });
    expect(await call("check_input", ["s.json", JSON.stringify(SAMPLES)])).toMatchObject({
      ok: true,
      message: "s.json: 2 Safe-Psych cases (samples.json). Check only: nothing was added.",
    });
  });

  it("imports an evaluation set from the grading page as grade-import does: check, refusals as FILE:LINE, import", async () => {
    await makeUser(db, "boss", ["admin"]);
    await makeUser(db, "rae", ["rater"]);
    const grading = await import("../../app/routes/admin.grading._index");
    const text = readFileSync("test/fixtures/rubric-grading/set.jsonl", "utf8");
    const call = async (intent: string, file: [string, string], user = "boss") =>
      grading.action({
        request: await multipart("/admin/grading", user, { intent, name: "psych" }, file),
        params: {},
        context: {},
      });
    const checked = (await call("check_set", ["set.jsonl", text])) as { ok: boolean; summary: string };
    expect(checked.summary).toMatch(/^4 conversations; content sha256 [0-9a-f]{64}\. Dry run: nothing was written\.$/);
    expect(db.$client.prepare("SELECT COUNT(*) AS n FROM grading_sets").get()).toEqual({ n: 0 });
    const broken = text.replace('"prompt_id": "p2"', '"prompt_id": 7');
    const refused = (await call("import_set", ["set.jsonl", broken])) as {
      ok: boolean;
      summary: string;
      lines: string[];
    };
    expect(refused).toMatchObject({ ok: false, summary: "1 bad line in set.jsonl; nothing was written." });
    expect(refused.lines[0]).toMatch(/^set\.jsonl:2: /);
    expect(db.$client.prepare("SELECT COUNT(*) AS n FROM grading_sets").get()).toEqual({ n: 0 });
    expect(await call("import_set", ["set.jsonl", text])).toMatchObject({
      ok: true,
      summary: /Imported as "psych"\.$/,
    });
    expect(await call("import_set", ["set.jsonl", text])).toMatchObject({
      summary: /Already imported: nothing changed\.$/,
    });
    let status = 0;
    try {
      await call("import_set", ["set.jsonl", text], "rae");
    } catch (e) {
      status = (e as Response).status;
    }
    expect(status).toBe(403);
  });
});
