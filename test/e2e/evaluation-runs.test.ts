/**
 * Safe-Psych evaluations in the browser, as an admin (docs/evaluation.md, "Runs in the app", "A case, step by
 * step"): the list, an evaluation's tables in both modes with their charts, the runs, the failure list filtered, one
 * case step by step with three models side by side, and an import from the page with its preview. An annotator is
 * refused. Screenshots at 1280 px go to SCREENSHOT_DIR when it is set.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CliIO } from "../../app/cli/command";
import { runCli } from "../../app/cli/index";
import { createUser } from "../../app/accounts/users.server";
import { evaluationMetricsOf } from "../../app/evaluation/evaluations.server";
import { formatMetric } from "../../app/evaluation/domain/metrics-report";
import { openDatabase, setDb } from "../../app/platform/db.server";
import { hydrated, launchBrowser, logIn } from "../support/browser";
import { goldCases, writeEvalRuns } from "../support/eval-runs";
import { PASSWORD } from "../support/fixtures";
import { startApp, tempDbPath, type RunningApp } from "../support/server";

let app: RunningApp;
let browser: Browser;
let dir: string;
let evaluationId: number;
let expectedUnder: string;

const MODELS = ["llama-8b", "qwen-14b", "gpt-4o"];
const STRATEGIES = [
  "full_info_no_abstention",
  "full_info_abstention_aware",
  "sequential_info_neutral_prompting",
  "sequential_info_abstention_aware",
];
const KINDS = [
  "presenting_symptoms",
  "psychiatric_history",
  "psychiatric_exam",
  "psychological_exam",
  "secondary_diagnoses",
];

async function cli(argv: string[]) {
  let err = "";
  const io: CliIO = { out: () => {}, err: (t) => void (err += t), readStdin: async () => "", isTTY: false };
  const code = await runCli(argv, io);
  if (code !== 0) throw new Error(`${argv[0]}: ${err}`);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "concord-e2e-evalruns-"));
  const t = tempDbPath();
  const db = openDatabase(t.dbPath);
  setDb(db);
  await createUser(db, { username: "boss", password: PASSWORD, roles: ["admin"], actorId: null });
  await createUser(db, { username: "ann", password: PASSWORD, roles: ["annotator"], actorId: null });
  const spec = { cases: 40, models: MODELS, strategies: STRATEGIES, seeds: [1, 2, 3] };
  const { goldPath, runsDir } = writeEvalRuns(dir, spec);
  // The study whose cases these are, with each case's T sections.
  const notes = goldCases(spec).map((g) =>
    JSON.stringify({
      id: g.id,
      sections: Object.fromEntries(
        KINDS.slice(0, g.T).map((k, i) => [
          k,
          `Section ${i + 1} of ${g.id}: ${k.replace(/_/g, " ")} as the clinician wrote it.`,
        ]),
      ),
    }),
  );
  writeFileSync(join(dir, "cases.jsonl"), notes.join("\n") + "\n");
  await cli(["import", "--study", "Pilot notes", join(dir, "cases.jsonl")]);
  const studyId = db.$client.prepare("select id from studies where name = 'Pilot notes'").pluck().get() as number;
  await cli([
    "eval-import",
    "--evaluation",
    "Pilot runs",
    "--gold",
    goldPath,
    "--study",
    String(studyId),
    "--runs",
    runsDir,
  ]);
  evaluationId = db.$client.prepare("select id from evaluations").pluck().get() as number;
  const paper = evaluationMetricsOf(db, evaluationId, "paper");
  expectedUnder = formatMetric(paper.results[0]!.metrics.under_abstention, "paper");
  writeEvalRuns(join(dir, "more"), { ...spec, models: ["mistral-7b"], strategies: ["full_info_abstention_aware"] });
  setDb(undefined);
  db.$client.close();
  app = await startApp({ dbPath: t.dbPath, env: { CONCORD_RUNS_DIR: dir } });
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function pageFor(username: string): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await logIn(page, app.url, username, PASSWORD);
  return page;
}

async function shot(page: Page, name: string) {
  if (process.env.SCREENSHOT_DIR)
    await page.screenshot({ path: join(process.env.SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

describe("evaluations in the browser", () => {
  it("shows an admin the tables, the runs, the failures and one case step by step", async () => {
    const page = await pageFor("boss");
    await page.goto(`${app.url}/admin/evaluations`);
    await hydrated(page);
    await shot(page, "01-evaluations");
    await page.getByRole("link", { name: "Pilot runs" }).click();
    await page.waitForURL(/\/admin\/evaluations\/\d+$/);
    await hydrated(page);
    const abstention = page.getByTestId("table-abstention");
    expect(await abstention.locator("tbody tr").count()).toBe(12);
    expect(await abstention.locator('tbody tr td[data-metric="under_abstention"]').first().textContent()).toBe(
      expectedUnder,
    );
    expect(await page.getByTestId("table-timing").locator("tbody tr").count()).toBe(6);
    expect(await page.getByTestId("runs-count").textContent()).toBe("36 shown of 36 runs");
    await expect
      .poll(() => page.locator('img[alt="Chart: Abstention"]').evaluate((i: HTMLImageElement) => i.naturalWidth))
      .toBeGreaterThan(0);
    await shot(page, "02-evaluation-paper");
    await page.getByRole("link", { name: "Reference scripts (compat)" }).click();
    await page.waitForURL(/mode=reference/);
    await hydrated(page);
    expect(await abstention.locator('tbody tr td[data-metric="under_abstention"]').first().textContent()).toMatch(
      /^\d+\.\d\d%$/,
    );
    await shot(page, "03-evaluation-reference");

    await page.goto(`${app.url}/admin/evaluations/${evaluationId}/cases`);
    await hydrated(page);
    await page.selectOption('select[name="c_failure"]', "premature_diagnosis");
    await page.selectOption('select[name="c_strategy"]', "sequential_info_abstention_aware");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/c_failure=premature_diagnosis/);
    await hydrated(page);
    const rows = page.locator("[data-testid=cases] tbody tr[data-case]");
    expect(await rows.count()).toBeGreaterThan(0);
    expect(await page.getByTestId("cases-count").textContent()).toMatch(/shown of \d+ trajectories/);
    await shot(page, "04-failures-premature-diagnosis");
    await rows.first().getByRole("link").click();
    await page.waitForURL(/\/cases\/case-/);
    await hydrated(page);
    const steps = page.getByTestId("case-steps");
    // The failing trajectory the row named, with its failure.
    expect(await steps.locator("thead th[data-trajectory]").count()).toBe(1);
    expect(await steps.locator("thead th[data-trajectory]").textContent()).toContain("Premature diagnosis");
    await shot(page, "05-case-from-failure");
    // Without a choice: the first seed of each model, side by side.
    await page.goto(page.url().replace(/\?.*$/, "?strategy=sequential_info_abstention_aware"));
    await hydrated(page);
    expect(await steps.locator("thead th[data-trajectory]").count()).toBe(3);
    expect(await steps.locator("tbody tr").first().locator(".note-section").textContent()).toMatch(
      /^Presenting symptoms.*Section 1 of case-/,
    );
    expect(await steps.getByTestId("expert-action").first().textContent()).toMatch(/^(Clarify|Diagnose)$/);
    await shot(page, "06-case-side-by-side");
  });

  it("imports more runs from the page after a preview", async () => {
    const page = await pageFor("boss");
    await page.goto(`${app.url}/admin/evaluations/${evaluationId}`);
    await hydrated(page);
    await page.fill('textarea[name="runs"]', "more/runs");
    await page.getByRole("button", { name: "Preview", exact: true }).click();
    await page.getByTestId("import-preview").waitFor();
    expect(await page.getByTestId("import-preview").textContent()).toContain("Preview: 3 runs, 120 trajectories.");
    await page.getByTestId("import-preview").scrollIntoViewIfNeeded();
    await shot(page, "07-import-preview");
    await page.getByRole("button", { name: "Import", exact: true }).click();
    await expect.poll(() => page.getByTestId("runs-count").textContent()).toBe("39 shown of 39 runs");
    await page.fill('textarea[name="runs"]', "more/runs");
    await page.getByRole("button", { name: "Preview", exact: true }).click();
    await page.getByTestId("import-refused").waitFor();
    expect(await page.getByTestId("import-refused").textContent()).toMatch(
      /trajectories\.jsonl: already imported into "Pilot runs"/,
    );
  });

  it("uploads a run folder from the browser: the same preview and refusals as the command line, then imports it", async () => {
    const upload = join(dir, "upload");
    const { runsDir } = writeEvalRuns(upload, {
      cases: 40,
      models: ["gemma-9b"],
      strategies: ["full_info_abstention_aware", "sequential_info_abstention_aware"],
      seeds: [1],
    });
    const page = await pageFor("boss");
    await page.goto(`${app.url}/admin/evaluations/${evaluationId}`);
    await hydrated(page);
    // A run that recorded no tokens shows "—" with a title saying so.
    expect(await page.getByTestId("no-tokens").first().getAttribute("title")).toMatch(/^Not recorded/);
    const before = Number(/of (\d+) runs/.exec((await page.getByTestId("runs-count").textContent())!)![1]);
    const form = page.getByTestId("upload-form");
    await form.locator('input[type="file"]').setInputFiles(runsDir);
    await form.getByRole("button", { name: "Preview the upload" }).click();
    await page.getByTestId("import-preview").waitFor();
    expect(await page.getByTestId("import-preview").textContent()).toContain("Preview: 2 runs, 80 trajectories.");
    expect(await page.getByTestId("runs-count").textContent()).toBe(`${before} shown of ${before} runs`);
    await page.getByTestId("import-preview").scrollIntoViewIfNeeded();
    await shot(page, "08-upload-preview");
    await form.locator('input[type="file"]').setInputFiles(runsDir);
    await form.getByRole("button", { name: "Upload and import" }).click();
    await expect
      .poll(() => page.getByTestId("runs-count").textContent())
      .toBe(`${before + 2} shown of ${before + 2} runs`);
    await form.locator('input[type="file"]').setInputFiles(runsDir);
    await form.getByRole("button", { name: "Upload and import" }).click();
    await page.getByTestId("import-refused").waitFor();
    expect(await page.getByTestId("import-refused").textContent()).toMatch(
      /runs\/gemma-9b_.*\/trajectories\.jsonl: already imported into "Pilot runs"/,
    );
    expect(await page.getByTestId("runs-count").textContent()).toBe(`${before + 2} shown of ${before + 2} runs`);
    await page.getByTestId("import-refused").scrollIntoViewIfNeeded();
    await shot(page, "09-upload-refused");
    // The changed pages at a phone's width.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${app.url}/admin/evaluations/${evaluationId}`);
    await hydrated(page);
    await shot(page, "10-evaluation-390");
    await page.goto(`${app.url}/admin/evaluations/${evaluationId}/cases?c_failure=seed_disagreement`);
    await hydrated(page);
    expect(await page.getByTestId("cases-count").textContent()).toMatch(/shown of \d+ trajectories/);
    await shot(page, "11-cases-disagreement-390");
  });

  it("refuses an annotator", async () => {
    const page = await pageFor("ann");
    const res = await page.goto(`${app.url}/admin/evaluations/${evaluationId}`);
    expect(res?.status()).toBe(403);
  });
});
