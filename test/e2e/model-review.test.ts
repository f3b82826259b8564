/**
 * Clinician review of model steps in the browser (docs/evaluation.md, "Clinician review of model steps"): an admin
 * filters the case list, sends its steps to two psychiatrists, each reviews every step with the keyboard only, and
 * the evaluation page shows the figures and the agreement. The reviewer's pages never name a model or a strategy.
 * Screenshots at 1280 and 390 px go to SCREENSHOT_DIR when it is set.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CliIO } from "../../app/cli/command";
import { runCli } from "../../app/cli/index";
import { createUser } from "../../app/accounts/users.server";
import { openDatabase, setDb } from "../../app/platform/db.server";
import { hydrated, launchBrowser, logIn } from "../support/browser";
import { goldCases, writeEvalRuns } from "../support/eval-runs";
import { PASSWORD } from "../support/fixtures";
import { startApp, tempDbPath, type RunningApp } from "../support/server";

let app: RunningApp;
let browser: Browser;
let dir: string;
let evaluationId: number;

const MODELS = ["llama-8b", "qwen-14b", "gpt-4o"];
const STRATEGIES = [
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
const STEPS = 6;

async function cli(argv: string[]) {
  let err = "";
  const io: CliIO = { out: () => {}, err: (t) => void (err += t), readStdin: async () => "", isTTY: false };
  const code = await runCli(argv, io);
  if (code !== 0) throw new Error(`${argv[0]}: ${err}`);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "concord-e2e-modelreview-"));
  const t = tempDbPath();
  const db = openDatabase(t.dbPath);
  setDb(db);
  await createUser(db, { username: "boss", password: PASSWORD, roles: ["admin"], actorId: null });
  await createUser(db, { username: "psy1", password: PASSWORD, roles: ["annotator"], actorId: null });
  await createUser(db, { username: "psy2", password: PASSWORD, roles: ["adjudicator"], actorId: null });
  const spec = { cases: 40, models: MODELS, strategies: STRATEGIES, seeds: [1, 2] };
  const { goldPath, runsDir } = writeEvalRuns(dir, spec);
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
    ...["eval-import", "--evaluation", "Pilot runs", "--gold", goldPath, "--study", String(studyId)],
    ...["--runs", runsDir],
  ]);
  evaluationId = db.$client.prepare("select id from evaluations").pluck().get() as number;
  setDb(undefined);
  db.$client.close();
  app = await startApp({ dbPath: t.dbPath });
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

/** The page at 1280 px and at 390 px (a phone), full length. */
async function shots(page: Page, name: string) {
  if (!process.env.SCREENSHOT_DIR) return;
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    await page.screenshot({ path: join(process.env.SCREENSHOT_DIR, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

describe("clinician review of model steps in the browser", () => {
  it("an admin sends the steps of a filter to two psychiatrists", async () => {
    const page = await pageFor("boss");
    await page.goto(`${app.url}/admin/evaluations/${evaluationId}/cases`);
    await hydrated(page);
    await page.selectOption('select[name="c_failure"]', "premature_diagnosis");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/c_failure=premature_diagnosis/);
    await hydrated(page);
    await page.getByTestId("send-to-review").click();
    await page.waitForURL(/\/reviews\?c_failure=premature_diagnosis/);
    await hydrated(page);
    expect(await page.getByTestId("review-matched").textContent()).toMatch(/This filter picks \d+ model steps/);
    await page.fill("#review-name", "Premature diagnoses, pilot");
    await page.getByLabel("psy1").check();
    await page.getByLabel("psy2").check();
    await page.getByLabel("Two (agreement)").check();
    await page.fill("#review-limit", String(STEPS));
    await page.getByRole("button", { name: "Send to review" }).click();
    await page.locator("[data-testid=sent], [data-testid=send-error]").first().waitFor();
    expect(
      await page.getByTestId("send-error").count(),
      (await page.getByTestId("send-error").allTextContents()).join(),
    ).toBe(0);
    expect(await page.getByTestId("sent").textContent()).toBe(
      `Sent ${STEPS} model steps to the review “Premature diagnoses, pilot”.`,
    );
    expect(await page.getByTestId("review-progress").textContent()).toContain(`psy1: 0 of ${STEPS} submitted`);
    await shots(page, "01-admin-send");
  });

  it("each psychiatrist reviews every step with the keyboard, blind to the model", async () => {
    for (const [who, answer] of [
      ["psy1", "y"],
      ["psy2", "y"],
    ] as const) {
      const page = await pageFor(who);
      await page.goto(`${app.url}/`);
      await hydrated(page);
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Model steps" }).click();
      await page.waitForURL(/\/model-review$/);
      await hydrated(page);
      expect(await page.getByTestId("progress").textContent()).toBe(`0 of ${STEPS} submitted`);
      if (who === "psy1") await shots(page, "02-reviewer-list");
      await page.keyboard.press("j");
      await page.waitForURL(/\/model-review\/r[0-9a-f]{16}$/);
      for (let i = 0; i < STEPS; i++) {
        await hydrated(page);
        const url = page.url();
        const body = (await page.locator("main").textContent()) ?? "";
        for (const word of [...MODELS, ...STRATEGIES, "sequential", "full_info", "seed", "Pilot runs", "pilot"])
          expect(body, word).not.toContain(word);
        expect(await page.getByTestId("model-action").textContent()).toMatch(/^Action: Diagnose/);
        expect(await page.getByTestId("revealed-sections").locator(".note-section").count()).toBeGreaterThan(0);
        // The second reviewer says no to the first step: one disagreement.
        await page.keyboard.press(who === "psy2" && i === 0 ? "n" : answer);
        await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe("reason");
        await page.keyboard.type("Consistent with the presenting symptoms.");
        if (who === "psy1" && i === 0) {
          await page.keyboard.press("Escape");
          await shots(page, "03-reviewer-workspace");
        }
        await page.keyboard.press("Control+Enter");
        if (i < STEPS - 1) await page.waitForURL((u) => u.toString() !== url && /\/model-review\/r/.test(u.toString()));
        else await page.waitForURL(/\/model-review$/);
      }
      await hydrated(page);
      expect(await page.getByTestId("progress").textContent()).toBe(`${STEPS} of ${STEPS} submitted`);
      await page.context().close();
    }
  });

  it("the admin sees the figures and the agreement beside the metrics", async () => {
    const page = await pageFor("boss");
    await page.goto(`${app.url}/admin/evaluations/${evaluationId}`);
    await hydrated(page);
    const review = page.getByTestId("evaluation-review");
    const all = review.locator('tr[data-failure="premature_diagnosis"][data-model="all"] [data-testid=defensible]');
    expect(await all.textContent()).toBe(`${STEPS - 1} of ${STEPS} (${((100 * (STEPS - 1)) / STEPS).toFixed(1)}%)`);
    expect(await review.getByTestId("review-agreement").textContent()).toMatch(
      new RegExp(`^Agreement on ${STEPS} steps reviewed twice: ${((100 * (STEPS - 1)) / STEPS).toFixed(1)}% agree`),
    );
    if (process.env.SCREENSHOT_DIR)
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 900 });
        await review.screenshot({ path: join(process.env.SCREENSHOT_DIR, `04-evaluation-figures-${width}.png`) });
      }
    const csv = await page.request.get(`${app.url}/admin/evaluations/${evaluationId}/files/reviews.csv`);
    expect(csv.status()).toBe(200);
    expect(await csv.text()).toContain(`Premature diagnoses, pilot`);
  });

  it("refuses a reviewer on the admin page and a number as a step's address", async () => {
    const page = await pageFor("psy1");
    expect((await page.goto(`${app.url}/admin/evaluations/${evaluationId}/reviews`))?.status()).toBe(403);
    expect((await page.goto(`${app.url}/model-review/1`))?.status()).toBe(404);
  });
});
