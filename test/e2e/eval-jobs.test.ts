/**
 * Evaluation jobs in the browser (docs/evaluation.md, "Running from the browser"), against the OpenAI-compatible stub:
 * an admin starts a rubric-grading run and a multiple-choice run from /admin/eval-jobs, watches the progress the page
 * polls, and lands on each run's report; a Safe-Psych run into an evaluation, stopped by a restart and resumed, lands
 * on the evaluation's page; a rater is refused the pages; the providers' key is in no page and no line the server
 * logged. Screenshots at 1280 px in /work/notes/shots-evaljobs (the Safe-Psych landing in
 * /work/notes/shots-jobimport) when that folder's parent exists, else in the test's temporary folder.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "../../app/accounts/users.server";
import { importFileSource } from "../../app/cli/io";
import { openDatabase } from "../../app/platform/db.server";
import { importEvalSet } from "../../app/rubric-grading/sets.server";
import { hydrated, launchBrowser, logIn } from "../support/browser";
import {
  createJobEvaluation,
  evalJobsHandler,
  SECRET_KEY,
  setUpEvalJobs,
  type EvalJobsEnv,
} from "../support/eval-jobs";
import { PASSWORD } from "../support/fixtures";
import { startOpenAiStub, type OpenAiStub } from "../support/openai-stub";
import { startApp, tempDbPath, type RunningApp } from "../support/server";

let app: RunningApp;
let browser: Browser;
let stub: OpenAiStub;
let env: EvalJobsEnv;
let shots: string;
let landingShots: string;
let evaluationId: number;
let dbPath: string;
/** What the servers stopped during the tests logged. */
let logged = "";

beforeAll(async () => {
  const t = tempDbPath();
  shots = existsSync("/work/notes") ? "/work/notes/shots-evaljobs" : t.dir;
  landingShots = existsSync("/work/notes") ? "/work/notes/shots-jobimport" : t.dir;
  mkdirSync(shots, { recursive: true });
  mkdirSync(landingShots, { recursive: true });
  stub = await startOpenAiStub(evalJobsHandler(120));
  env = setUpEvalJobs(stub.baseURL);
  dbPath = t.dbPath;
  const db = openDatabase(t.dbPath);
  await createUser(db, { username: "boss", password: PASSWORD, roles: ["admin"], actorId: null });
  await createUser(db, { username: "rae", password: PASSWORD, roles: ["rater"], actorId: null });
  importEvalSet(db, {
    name: "psych",
    source: importFileSource("test/fixtures/rubric-grading/set.jsonl", "grading", { json: true }),
  });
  evaluationId = createJobEvaluation(db, env.dir, "E", ["a", "b"]);
  createJobEvaluation(db, env.dir, "only-a", ["a"]);
  db.$client.close();
  app = await startApp({ dbPath: t.dbPath });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await stub?.close();
  env?.restore();
});

async function adminPage(): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await logIn(page, app.url, "boss", PASSWORD);
  return page;
}

/** Waits on the job page until the job has ended, by the page's own polling (no reload). */
async function waitForEnd(page: Page) {
  await expect
    .poll(() => page.getByTestId("job-status").textContent(), { timeout: 90_000 })
    .toMatch(/^(done|failed|cancelled)$/);
}

describe("evaluation jobs from the browser", () => {
  it("an admin starts a grading run and lands on the set's report", async () => {
    const page = await adminPage();
    await page.goto(`${app.url}/admin/eval-jobs`);
    await hydrated(page);
    expect(await page.getByTestId("providers").textContent()).toContain("set on the server");
    await page.screenshot({ path: join(shots, "eval-jobs-start.png"), fullPage: true });
    const form = page.getByRole("form", { name: "Start a rubric-grading run" });
    await form.locator('select[name="candidateProvider"]').selectOption("stub-candidate");
    await form.locator('input[name="candidateName"]').fill("cand");
    await form.locator('select[name="judgeProvider"]').selectOption("stub-judge");
    await form.getByRole("button", { name: "Start grading" }).click();
    await page.waitForURL(/\/admin\/eval-jobs\/\d+$/);
    await hydrated(page);
    await page.getByTestId("job-progress").waitFor();
    await page.screenshot({ path: join(shots, "grading-job-running.png"), fullPage: false });
    await waitForEnd(page);
    expect(await page.getByTestId("job-status").textContent()).toBe("done");
    // 4 responses and 9 verdicts, every call answered.
    await expect.poll(() => page.getByTestId("job-calls").textContent()).toBe("13");
    await page.screenshot({ path: join(shots, "grading-job-done.png"), fullPage: false });
    expect(await page.content()).not.toContain(SECRET_KEY);
    await page.getByTestId("job-results").getByRole("link").click();
    await page.waitForURL(/\/admin\/grading\/\d+/);
    await hydrated(page);
    expect(await page.locator("h1").textContent()).toContain("psych");
    expect(await page.content()).toContain("cand");
    await page.screenshot({ path: join(shots, "grading-report.png"), fullPage: false });
    await page.context().close();
  });

  it("an admin starts a multiple-choice run, watches its progress, and lands on the report", async () => {
    const page = await adminPage();
    await page.goto(`${app.url}/admin/eval-jobs`);
    await hydrated(page);
    const form = page.getByRole("form", { name: "Start a multiple-choice run" });
    await form.locator('select[name="provider"]').selectOption("stub-mc");
    await form.locator('select[name="itemsFile"]').selectOption("mentalbench-items.jsonl");
    await form.locator('input[name="concurrency"]').fill("2");
    await form.getByRole("button", { name: "Start the run" }).click();
    await page.waitForURL(/\/admin\/eval-jobs\/\d+$/);
    await hydrated(page);
    const bar = page.getByRole("progressbar", { name: "Progress" });
    // The bar moves by polling alone.
    await expect
      .poll(async () => Number(await bar.getAttribute("aria-valuenow")), { timeout: 30_000 })
      .toBeGreaterThan(4);
    expect(await bar.getAttribute("aria-valuemax")).toBe("36");
    await page.screenshot({ path: join(shots, "mc-job-running.png"), fullPage: false });
    await waitForEnd(page);
    expect(await page.getByTestId("job-status").textContent()).toBe("done");
    await page.screenshot({ path: join(shots, "mc-job-done.png"), fullPage: false });
    await page.getByTestId("job-results").getByRole("link").click();
    await page.waitForURL(/\/admin\/mc-evaluation\?report=/);
    await hydrated(page);
    expect(await page.content()).toContain("mc-model");
    await page.screenshot({ path: join(shots, "mc-report.png"), fullPage: false });
    expect(await page.content()).not.toContain(SECRET_KEY);
    await page.context().close();
  });

  it("a Safe-Psych run into an evaluation stopped by a server restart says so; Resume finishes it and lands on the evaluation", async () => {
    stub.setHandler(evalJobsHandler(400));
    let page = await adminPage();
    await page.goto(`${app.url}/admin/eval-jobs`);
    await hydrated(page);
    const form = page.getByRole("form", { name: "Start a Safe-Psych run" });
    await form.locator('select[name="provider"]').selectOption("stub-candidate");
    await form.locator('select[name="judgeProvider"]').selectOption("stub-judge");
    await form.locator('select[name="samplesFile"]').selectOption("samples.json");
    await form.locator('input[name="concurrency"]').fill("1");
    await form.locator('select[name="evaluationId"]').selectOption({ label: "E" });
    await form.getByRole("button", { name: "Start the run" }).click();
    await page.waitForURL(/\/admin\/eval-jobs\/\d+$/);
    const path = new URL(page.url()).pathname;
    await hydrated(page);
    await expect.poll(() => page.getByTestId("job-calls").textContent(), { timeout: 30_000 }).not.toBe("0");
    await page.context().close();

    // The server stops while the job runs, and starts again on the same database.
    logged += app.output();
    await app.stop();
    app = await startApp({ dbPath });
    stub.setHandler(evalJobsHandler(50));
    page = await adminPage();
    await page.goto(`${app.url}${path}`);
    await hydrated(page);
    expect(await page.getByTestId("job-status").textContent()).toBe("failed");
    expect(await page.getByTestId("job-stopped").textContent()).toContain(
      "Stopped: the server restarted while this job ran. Everything it finished is kept; resume it to continue.",
    );
    await page.screenshot({ path: join(shots, "safe-psych-job-stopped.png"), fullPage: false });
    // Stopped: nothing imported yet.
    expect(await page.getByTestId("job-results").count()).toBe(0);
    await page.getByRole("button", { name: "Resume" }).click();
    await page.waitForURL((u) => u.pathname !== path && /\/admin\/eval-jobs\/\d+$/.test(u.pathname));
    await hydrated(page);
    await waitForEnd(page);
    expect(await page.getByTestId("job-status").textContent()).toBe("done");
    // The page reloads its data once the poll sees the end: the run folders then appear.
    const folders = page.getByTestId("job-folders");
    await expect.poll(() => folders.locator("tbody tr").count()).toBe(2);
    expect(await folders.textContent()).toContain("2 / 2");
    await page.screenshot({ path: join(shots, "safe-psych-job-done.png"), fullPage: false });
    // The end step imported both runs into the evaluation: the job links to it.
    const link = page.getByTestId("job-results").getByRole("link");
    expect(await link.textContent()).toBe('The evaluation "E"');
    await page.screenshot({ path: join(landingShots, "safe-psych-job-imported.png"), fullPage: false });
    await link.click();
    await page.waitForURL(new RegExp(`/admin/evaluations/${evaluationId}$`));
    await hydrated(page);
    expect(await page.locator("h1").textContent()).toBe("E");
    const runs = page.getByTestId("runs");
    await expect.poll(() => runs.locator("tbody tr").count()).toBe(3);
    expect(await runs.textContent()).toContain("cand-model");
    await page.screenshot({ path: join(landingShots, "safe-psych-evaluation.png"), fullPage: true });
    await page.context().close();
  });

  it("a Safe-Psych run into an evaluation that refuses its runs: the job page lists the refusal", async () => {
    const page = await adminPage();
    await page.goto(`${app.url}/admin/eval-jobs`);
    await hydrated(page);
    const form = page.getByRole("form", { name: "Start a Safe-Psych run" });
    await form.locator('select[name="provider"]').selectOption("stub-candidate");
    await form.locator('select[name="judgeProvider"]').selectOption("stub-judge");
    await form.locator('select[name="evaluationId"]').selectOption({ label: "only-a" });
    await form.getByRole("button", { name: "Start the run" }).click();
    await page.waitForURL(/\/admin\/eval-jobs\/\d+$/);
    await hydrated(page);
    await waitForEnd(page);
    expect(await page.getByTestId("job-status").textContent()).toBe("done");
    const refused = page.getByTestId("job-import-refused");
    await expect.poll(() => refused.count()).toBe(1);
    expect(await refused.textContent()).toMatch(/trajectories\.jsonl:\d+: .*"b"/);
    expect(await page.getByTestId("job-results").count()).toBe(0);
    await page.screenshot({ path: join(landingShots, "safe-psych-import-refused.png"), fullPage: false });
    await page.context().close();
  });

  it("checks an evaluation set and an item file from the pages, as the command line does", async () => {
    const page = await adminPage();
    await page.goto(`${app.url}/admin/grading`);
    await hydrated(page);
    const setForm = page.getByRole("form", { name: "Import an evaluation set" });
    await setForm.locator('input[name="name"]').fill("psych-copy");
    await setForm.locator('input[name="file"]').setInputFiles("test/fixtures/rubric-grading/set.jsonl");
    await setForm.getByRole("button", { name: "Check" }).click();
    await expect
      .poll(() => page.getByTestId("set-import").textContent())
      .toMatch(/4 conversations; content sha256 [0-9a-f]{64}\. Dry run: nothing was written\./);
    await page.screenshot({ path: join(shots, "grading-set-check.png"), fullPage: true });
    await page.goto(`${app.url}/admin/eval-jobs`);
    await hydrated(page);
    const fileForm = page.getByRole("form", { name: "Add an input file" });
    await fileForm.locator('input[name="file"]').setInputFiles({
      name: "broken-items.jsonl",
      mimeType: "application/json",
      buffer: Buffer.from('{"id": "x", "question": "?"}\n'),
    });
    await fileForm.getByRole("button", { name: "Add" }).click();
    await expect.poll(() => page.getByTestId("input-file").textContent()).toMatch(/nothing was added/);
    expect(await page.getByTestId("input-file").textContent()).toMatch(/broken-items\.jsonl:1: /);
    await page.getByTestId("input-file").scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(shots, "input-file-refused.png"), fullPage: false });
    await page.context().close();
  });

  it("refuses a rater, and the key is in no server log line", async () => {
    const page = await (await browser.newContext()).newPage();
    await logIn(page, app.url, "rae", PASSWORD);
    const r = await page.goto(`${app.url}/admin/eval-jobs`);
    expect(r!.status()).toBe(403);
    await page.context().close();
    expect(stub.calls.length).toBeGreaterThan(0);
    expect(stub.calls.every((c) => c.authorization === `Bearer ${SECRET_KEY}`)).toBe(true);
    expect(logged + app.output()).not.toContain(SECRET_KEY);
  });
});
