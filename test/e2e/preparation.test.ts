/**
 * The minimisation review in the browser (docs/preparation.md, "The review"): a reviewer the project names opens a
 * note, sees the proposals marked in the note, accepts one with the keyboard, edits one, rejects one, marks text the
 * detectors missed, submits, and excludes the next case with a reason; the database then holds both reviews. An
 * annotator gets 404 for the same note (docs/security.md, "Source text"). With SCREENSHOT_DIR set, the workspace is
 * photographed at 1280 and 390 px wide.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { createUser } from "../../app/accounts/users.server";
import { openDatabase } from "../../app/platform/db.server";
import { changeReviewers, importPreparationNotes } from "../../app/preparation/projects.server";
import { listReviewerNotes } from "../../app/preparation/review.server";
import { DEFAULT_SETTINGS } from "../../app/preparation/domain/review";
import { prepReviews } from "../../db/schema";
import { hydrated } from "../support/browser";
import { seededApp } from "../support/e2e-app";
import { PASSWORD } from "../support/fixtures";

const NOTES = readFileSync(new URL("../fixtures/preparation/notes.csv", import.meta.url), "utf8");

let reviewerId = "";
const e2e = seededApp(async (db) => {
  await createUser(db, { username: "boss", password: PASSWORD, roles: ["admin"], actorId: null });
  reviewerId = (await createUser(db, { username: "rita", password: PASSWORD, roles: ["rater"], actorId: null })).id;
  await createUser(db, { username: "ann", password: PASSWORD, roles: ["annotator"], actorId: null });
  const r = importPreparationNotes(db, {
    projectName: "Sibiu 2026",
    language: "ro",
    text: NOTES,
    filename: "notes.csv",
    settings: { ...DEFAULT_SETTINGS, places: ["Sibiu"] },
    actorId: null,
  });
  if (!r.ok) throw new Error("fixture import failed");
  changeReviewers(db, { projectId: r.projectId, add: ["rita"], actorId: null });
});

async function shot(page: Page, name: string) {
  if (!process.env.SCREENSHOT_DIR) return;
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: join(process.env.SCREENSHOT_DIR, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

/** Selects `text` inside the note's section `section` (a reader's drag, done through the DOM). */
async function selectInNote(page: Page, section: number, text: string) {
  await page.evaluate(
    ({ section, text }) => {
      const el = document.querySelector(`[data-section="${section}"]`)!;
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const at = n.textContent!.indexOf(text);
        if (at < 0) continue;
        const range = document.createRange();
        range.setStart(n, at);
        range.setEnd(n, at + text.length);
        const sel = window.getSelection()!;
        sel.removeAllRanges();
        sel.addRange(range);
        return;
      }
      throw new Error(`"${text}" is not in section ${section}`);
    },
    { section, text },
  );
}

const row = (page: Page, category: string, nth = 0) => page.locator(`li[data-proposal-row].cat-${category}`).nth(nth);

describe("the minimisation review in the browser", () => {
  it("accepts, edits and rejects proposals, marks missed text, submits, then excludes a case", async () => {
    const page = await e2e.pageAs("rita");
    await page.goto(`${e2e.app.url}/preparation`);
    await hydrated(page);
    expect(await page.locator("[data-testid=prep-notes] tbody tr").count()).toBe(3);
    await shot(page, "list");
    await page.keyboard.press("j");
    await page.waitForURL(/\/preparation\/\d+$/);
    await hydrated(page);

    // Every proposal is marked in place in the note, with what it becomes.
    const marks = page.locator("[data-testid=prep-note] mark[data-proposal]");
    const proposals = await page.locator("li[data-proposal-row]").count();
    expect(await marks.count()).toBe(proposals);
    expect(await page.locator('mark[data-category="age"]').textContent()).toBe("52");
    expect(await page.locator('mark[data-category="age"]').getAttribute("data-becomes")).toBe("48-57");
    expect(await page.locator('mark[data-category="place"]').textContent()).toBe("Sibiu");
    await shot(page, "workspace-open");

    // A accepts the current proposal (the first, the age) and moves on.
    await page.keyboard.press("a");
    await expect.poll(() => page.locator('mark[data-category="age"]').getAttribute("class")).toContain("state-accept");
    // Edit the date's replacement; reject the clinician's name (kept as it is); accept the rest.
    await row(page, "date_time").getByLabel("Edit").check();
    await row(page, "date_time").locator("input[type=text]").fill("o zi din noiembrie");
    await row(page, "name").getByLabel("Reject").check();
    for (const category of ["place", "family", "quote", "test_score"])
      await row(page, category).getByLabel("Accept").check();
    expect(await page.getByTestId("prep-decided").textContent()).toBe(`${proposals} of ${proposals} decided`);
    expect(await page.locator('mark[data-category="date_time"]').getAttribute("data-becomes")).toBe(
      "o zi din noiembrie",
    );

    // Mark what the detectors missed: "depresie" in the history section, as removed.
    await selectInNote(page, 1, "depresie");
    await expect.poll(() => page.getByTestId("prep-selection").textContent()).toContain("depresie");
    await page.getByLabel("Category").selectOption("physical");
    await page.getByRole("button", { name: /Flag as missed/ }).click();
    expect(await page.locator("[data-missed-row]").count()).toBe(1);
    expect(await page.locator("mark.state-missed").textContent()).toBe("depresie");
    await shot(page, "workspace-decided");

    const firstUrl = page.url();
    await page.getByTestId("submit").click();
    await page.waitForURL((url) => url.href !== firstUrl);
    await hydrated(page);
    expect(await page.locator("h1, h2").first().textContent()).toContain("ro-2");

    // The next case is excluded with a reason; no decision is needed then.
    await page.getByLabel(/Exclude this case/).check();
    await page.getByTestId("submit").click();
    await expect
      .poll(() => page.locator("#exclusionReason ~ .field-error, .field-error").first().textContent())
      .toBe("Say why the case is excluded.");
    await page.getByLabel("Reason for excluding (required)").fill("Violence-related history, identifying.");
    await shot(page, "workspace-exclude");
    const secondUrl = page.url();
    await page.getByTestId("submit").click();
    await page.waitForURL((url) => url.href !== secondUrl);

    const db = openDatabase(e2e.dbPath);
    try {
      const rows = db.select().from(prepReviews).all();
      const notes = listReviewerNotes(db, reviewerId);
      const first = rows.find((r) => r.noteId === notes.find((n) => n.externalId === "ro-1")!.noteId)!;
      const second = rows.find((r) => r.noteId === notes.find((n) => n.externalId === "ro-2")!.noteId)!;
      expect(first.status).toBe("submitted");
      expect(
        Object.values(first.decisions)
          .map((d) => d.action)
          .sort(),
      ).toEqual([...Array(proposals - 2).fill("accept"), "edit", "reject"].sort());
      expect(Object.values(first.decisions).find((d) => d.action === "edit")!.text).toBe("o zi din noiembrie");
      expect(first.missed).toEqual([expect.objectContaining({ section: 1, category: "physical", replacement: "" })]);
      expect(second).toMatchObject({
        status: "submitted",
        excluded: true,
        exclusionReason: "Violence-related history, identifying.",
      });
    } finally {
      db.$client.close();
    }
  }, 120_000);

  it("answers 404 to an annotator for a note of the project", async () => {
    const db = openDatabase(e2e.dbPath);
    const noteId = listReviewerNotes(db, reviewerId)[0]!.noteId;
    db.$client.close();
    const page = await e2e.pageAs("ann");
    const answer = await page.goto(`${e2e.app.url}/preparation/${noteId}`);
    expect(answer?.status()).toBe(404);
    expect(await page.content()).not.toContain("Sibiu");
  });

  it("shows the admin the project's reviewers, notes and agreement, without the notes' text", async () => {
    const page = await e2e.pageAs("boss");
    await page.goto(`${e2e.app.url}/admin/preparation`);
    await hydrated(page);
    await page.getByRole("link", { name: "Sibiu 2026" }).click();
    await page.waitForURL(/\/admin\/preparation\/\d+$/);
    await hydrated(page);
    expect(await page.getByTestId("prep-reviewers").textContent()).toContain("rita");
    expect(await page.locator("[data-testid=prep-project-notes] tbody tr").count()).toBe(3);
    expect(await page.getByTestId("prep-agreement").textContent()).toContain("0 proposals decided by two");
    expect(await page.content()).not.toContain("Pacientă");
    await shot(page, "admin-project");
  });
});
