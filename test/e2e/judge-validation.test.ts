/**
 * Judge validation in the browser (docs/judge-validation.md): a rater labels three model responses with the keyboard alone, and the
 * admin then sees the raters' majority per response and the candidate judge's scores on the report page.
 */
import { asc, eq } from "drizzle-orm";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { judgeItems, judgeRatings } from "../../db/schema";
import { openDatabase } from "../../app/platform/db.server";
import { importJudgeOutputs } from "../../app/judge-validation/judge-candidates.server";
import { submitRating, type RatingValues } from "../../app/judge-validation/judge-ratings.server";
import { drawSample } from "../../app/judge-validation/judge-sample.server";
import { getJudgeSetByName } from "../../app/judge-validation/judge-sets.server";
import { importResponses } from "../../app/judge-validation/judge-responses.server";
import { startRating } from "../../app/judge-validation/judge-raters.server";
import { createUser } from "../../app/accounts/users.server";
import { hydrated, launchBrowser, logIn } from "../support/browser";
import { PASSWORD } from "../support/fixtures";
import { startApp, tempDbPath, type RunningApp } from "../support/server";

let app: RunningApp;
let browser: Browser;
let setId: number;

const RESPONSES = [
  {
    primary_answer: "committed",
    info_request: "none",
    icd_codes: ["F32.1"],
    diagnosis_names: ["depressive episode"],
    text: "Moderate depressive episode (F32.1).",
  },
  { primary_answer: "none", info_request: "specific", text: "How long have the symptoms lasted? Any substance use?" },
  {
    primary_answer: "differential",
    info_request: "generic_only",
    icd_codes: ["F20", "F23"],
    text: "Could be F20 or F23; further evaluation is needed.",
  },
];

const labels = (p: RatingValues["primaryAnswer"], i: RatingValues["infoRequest"]): RatingValues => ({
  primaryAnswer: p,
  infoRequest: i,
  icdCodes: "",
  diagnosisNames: "",
  notes: "",
});

beforeAll(async () => {
  const t = tempDbPath();
  const db = openDatabase(t.dbPath);
  const boss = await createUser(db, { username: "boss", password: PASSWORD, roles: ["admin"], actorId: null });
  const [, r2, r3] = await Promise.all(
    ["rina", "raul", "remy"].map((username) =>
      createUser(db, { username, password: PASSWORD, roles: ["rater"], actorId: null }),
    ),
  );
  const lines = RESPONSES.map(({ text, ...features }, i) =>
    JSON.stringify({ id: `s${i}`, model: "m", strategy: "full_info_no_abstention", response: text, features }),
  );
  const imported = importResponses(db, {
    setName: "Pilot",
    files: [{ bytes: new TextEncoder().encode(lines.join("\n")), filename: "r.jsonl" }],
    actorId: boss.id,
  });
  expect(imported.ok).toBe(true);
  setId = getJudgeSetByName(db, "Pilot")!.id;
  drawSample(db, { setId, seed: 123, actorId: boss.id });
  const rina = db.$client.prepare("select id from users where username = 'rina'").get() as { id: string };
  startRating(db, { setId, raterIds: [rina.id, r2!.id, r3!.id], seed: 1, actorId: boss.id });
  const items = db.select().from(judgeItems).where(eq(judgeItems.setId, setId)).orderBy(asc(judgeItems.position)).all();
  // raul agrees with what rina will enter; remy differs on the third response (DIAGNOSE instead of ABSTAIN).
  const raul = [labels("committed", "none"), labels("none", "specific"), labels("differential", "generic_only")];
  const remy = [labels("committed", "none"), labels("none", "specific"), labels("committed", "none")];
  items.forEach((item, k) => {
    expect(submitRating(db, { raterId: r2!.id, itemId: item.id, values: raul[k]!, version: 0 }).ok).toBe(true);
    expect(submitRating(db, { raterId: r3!.id, itemId: item.id, values: remy[k]!, version: 0 }).ok).toBe(true);
  });
  // The judge: right on the first two, DIAGNOSE on the third (majority ABSTAIN).
  const judge = ["Diagnose", "Clarify", "Diagnose"]
    .map((action, k) =>
      JSON.stringify({
        annotation_id: items[k]!.annotationId,
        new_judge_output: {
          primary_answer: action === "Clarify" ? "none" : "committed",
          info_request: action === "Clarify" ? "specific" : "none",
          action,
        },
      }),
    )
    .join("\n");
  expect(
    importJudgeOutputs(db, { setId, name: "gemma-judge", filename: "gemma.jsonl", text: judge, actorId: boss.id }).ok,
  ).toBe(true);
  expect(db.select().from(judgeRatings).all()).toHaveLength(9);
  db.$client.close();
  app = await startApp({ dbPath: t.dbPath });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function pageFor(username: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await logIn(page, app.url, username, PASSWORD);
  return page;
}

describe("judge validation in the browser", () => {
  it("lets a rater label three responses with the keyboard alone", async () => {
    const page = await pageFor("rina");
    await page.goto(`${app.url}/judge-validation`);
    await hydrated(page);
    expect(await page.getByTestId("progress").textContent()).toContain("0 of 3 submitted");
    await page.keyboard.press("j");
    await page.waitForURL(/\/judge-validation\/\d+$/);
    await hydrated(page);

    const entries: [string, string, string][] = [
      ["o", "x", "DIAGNOSE"],
      ["n", "p", "CLARIFY"],
      ["d", "g", "ABSTAIN"],
    ];
    for (const [primary, info, action] of entries) {
      const url = page.url();
      expect(await page.getByTestId("response-text").textContent()).not.toBe("");
      await page.keyboard.press(primary);
      await page.keyboard.press(info);
      await expect.poll(() => page.getByTestId("derived-action").textContent()).toBe(action);
      await page.keyboard.press("Control+Enter");
      await page.waitForURL((u) => u.href !== url);
      await hydrated(page);
    }
    expect(new URL(page.url()).pathname).toBe("/judge-validation");
    await expect.poll(() => page.getByTestId("progress").textContent()).toContain("3 of 3 submitted");
    await expect.poll(() => page.locator('tr[data-state="submitted"]').count()).toBe(3);
    await page.context().close();
  });

  it("shows the admin the majority per response and the judge's scores", async () => {
    const page = await pageFor("boss");
    await page.goto(`${app.url}/admin/judge-validation/${setId}/report`);
    await hydrated(page);
    const majority = await page.locator('[data-testid="majority"] [data-testid="majority-action"]').allTextContents();
    expect(majority).toEqual(["DIAGNOSE", "CLARIFY", "ABSTAIN"]);
    expect(await page.getByTestId("report-summary").textContent()).toContain(
      "3 responses rated, 3 with a majority, 0 ties (split votes, no majority)",
    );
    // rina and raul agree with the majority (1), remy misses the third: (2/3 + 1 + 0)/3 = 5/9; mean 23/27.
    expect(await page.locator('[data-testid="humans"] tr[data-rater="rina"] td').nth(1).textContent()).toBe("1.000");
    expect(await page.locator('[data-testid="humans"] tr[data-rater="remy"] td').nth(1).textContent()).toBe("0.556");
    expect(await page.getByTestId("human-f1-mean").textContent()).toBe("0.852");
    // gemma-judge: DIAGNOSE P 1/2 R 1 → F1 2/3, CLARIFY 1, ABSTAIN 0 → macro-F1 5/9.
    expect(await page.locator('[data-testid="judges"] tr[data-judge="gemma-judge"] td').nth(1).textContent()).toBe(
      "0.556",
    );
    expect(await page.getByTestId("best-judge").textContent()).toBe("gemma-judge");

    // The set page shows every rater's progress.
    await page.goto(`${app.url}/admin/judge-validation/${setId}`);
    expect(await page.locator('[data-testid="rater-progress"] tr[data-rater="rina"] td').last().textContent()).toBe(
      "3",
    );
    expect(await page.getByTestId("redraw-refused").textContent()).toContain("can no longer be re-drawn");
    await page.context().close();
  });
});
