/**
 * Nothing typed is lost (docs/architecture.md, "Saving under load"): a change is flushed before `N` and before a
 * reload, survives another process holding the database's write lock for 30 s (the server answers 503 at once and
 * the page retries), and a conflict is shown in place with the user's own input kept.
 */
import Database from "better-sqlite3";
import { spawn } from "node:child_process";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { openDatabase } from "../../app/platform/db.server";
import { decide, getAdjudicationCase } from "../../app/adjudication/adjudication.server";
import { studies } from "../../db/schema";
import { studyForPair, submitPair, sufficient } from "../support/labels";
import { hydrated } from "../support/browser";
import { seedStudy } from "../support/fixtures";
import { seededApp } from "../support/e2e-app";

let disputed: number;
let adjudicatorIds: Record<string, string>;

const e2e = seededApp(async (db) => {
  await seedStudy(db, {
    cases: 8,
    users: [
      { username: "ann1", roles: ["annotator"] },
      { username: "ann2", roles: ["annotator"] },
      { username: "adj1", roles: ["adjudicator"] },
      { username: "adj2", roles: ["adjudicator"] },
    ],
    annotators: ["ann1", "ann2"],
  });
  const row = (u: string) => db.$client.prepare("SELECT id FROM users WHERE username = ?").pluck().get(u) as string;
  adjudicatorIds = { adj1: row("adj1"), adj2: row("adj2") };
  // A disputed case in a reveal-only study, for the adjudication conflict.
  const pair = studyForPair(db, { name: "Conflict", cases: 1, annotatorIds: [row("ann1"), row("ann2")] });
  db.update(studies).set({ adjudicationMode: "reveal_only" }).where(eq(studies.id, pair.study.id)).run();
  disputed = pair.caseIds[0]!;
  submitPair(
    db,
    disputed,
    { userId: row("ann1"), values: sufficient("F32.1", 2) },
    { userId: row("ann2"), values: sufficient("F31.1", 3) },
  );
});

const annotatorPage = (username: string): Promise<Page> => e2e.pageAs(username);

/** The stored annotation of `username` on `caseId`, read straight from the database file. */
function stored(username: string, caseId: number): { notes: string; sufficiency: string | null } | undefined {
  const db = new Database(e2e.dbPath, { readonly: true });
  try {
    return db
      .prepare(
        "SELECT a.notes, a.sufficiency FROM annotations a JOIN users u ON u.id = a.annotator_id WHERE u.username = ? AND a.case_id = ?",
      )
      .get(username, caseId) as { notes: string; sufficiency: string | null } | undefined;
  } finally {
    db.close();
  }
}

/** Opens the `index`-th case of the Pilot study assigned to `username` (the Conflict study's case is left aside). */
async function openCase(page: Page, index: number, username: string): Promise<number> {
  const db = new Database(e2e.dbPath, { readonly: true });
  const ids = db
    .prepare(
      `SELECT c.id FROM cases c JOIN studies s ON s.id = c.study_id JOIN assignments a ON a.case_id = c.id
       JOIN users u ON u.id = a.annotator_id WHERE s.name = 'Pilot' AND u.username = ? ORDER BY c.id`,
    )
    .pluck()
    .all(username) as number[];
  db.close();
  const caseId = ids[index]!;
  await page.goto(`${e2e.app.url}/annotate/${caseId}`);
  await hydrated(page);
  await page.locator(`section[data-case-id="${caseId}"]`).waitFor();
  return caseId;
}

async function typeNotes(page: Page, text: string) {
  await page.locator("#notes").fill(text);
  // Out of the text field, so single keys are shortcuts again.
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
}

const state = (page: Page) => page.getByTestId("save-state").getAttribute("data-state");

describe("saving in the browser", () => {
  it("keeps a change made 100 ms before J (next)", async () => {
    const page = await annotatorPage("ann1");
    const caseId = await openCase(page, 0, "ann1");
    await typeNotes(page, "typed just before N");
    await page.keyboard.press("s");
    await page.waitForTimeout(100);
    const url = page.url();
    await page.keyboard.press("j");
    await page.waitForURL((u) => u.href !== url);
    expect(stored("ann1", caseId)).toMatchObject({ notes: "typed just before N", sufficiency: "sufficient" });
    await page.context().close();
  });

  it("keeps a change made 200 ms before a reload, and shows it after", async () => {
    const page = await annotatorPage("ann1");
    const caseId = await openCase(page, 1, "ann1");
    page.on("dialog", (d) => void d.accept());
    await typeNotes(page, "typed just before reload");
    await page.waitForTimeout(200);
    await page.reload();
    await hydrated(page);
    await expect.poll(() => stored("ann1", caseId)?.notes).toBe("typed just before reload");
    expect(await page.locator("#notes").inputValue()).toBe("typed just before reload");
    await page.context().close();
  });

  it("survives another process holding the write lock for 30 s: 503 at once, retrying, then saved", async () => {
    const page = await annotatorPage("ann2");
    const caseId = await openCase(page, 2, "ann2");
    const answers: { status: number; ms: number; retryAfter: string | null }[] = [];
    const started = new Map<unknown, number>();
    page.on("request", (r) => {
      if (r.method() === "POST") started.set(r, Date.now());
    });
    page.on("response", (r) => {
      const t = started.get(r.request());
      if (t !== undefined)
        answers.push({ status: r.status(), ms: Date.now() - t, retryAfter: r.headers()["retry-after"] ?? null });
    });
    // The lock holder: BEGIN IMMEDIATE on the same file in a child process, released after 30 s.
    const holder = spawn(
      process.execPath,
      [
        "-e",
        `const D = require("better-sqlite3"); const db = new D(${JSON.stringify(e2e.dbPath)});
         db.exec("BEGIN IMMEDIATE"); console.log("locked");
         setTimeout(() => { db.exec("COMMIT"); db.close(); }, 30000);`,
      ],
      { cwd: process.cwd(), stdio: ["ignore", "pipe", "inherit"] },
    );
    await new Promise<void>((resolve) => holder.stdout!.on("data", (d) => String(d).includes("locked") && resolve()));
    const exited = new Promise<void>((resolve) => holder.on("exit", () => resolve()));

    await typeNotes(page, "typed while an import holds the lock");
    await expect.poll(() => state(page), { timeout: 10_000 }).toBe("retrying");
    await expect(page.getByTestId("save-problem").textContent()).resolves.toMatch(/draft is kept in this page/);
    // Navigating away now does not lose it either: the page stays, says so.
    const busy = answers.filter((a) => a.status === 503);
    expect(busy.length).toBeGreaterThan(0);
    for (const a of busy) {
      expect(a.ms).toBeLessThan(500);
      expect(a.retryAfter).toBe("1");
    }
    expect(stored("ann2", caseId)?.notes ?? "").not.toBe("typed while an import holds the lock");

    await exited;
    await expect.poll(() => state(page), { timeout: 20_000 }).toBe("saved");
    expect(stored("ann2", caseId)?.notes).toBe("typed while an import holds the lock");
    // No error page replaced the workspace at any time.
    expect(await page.locator(`section[data-case-id="${caseId}"]`).count()).toBe(1);
    await page.context().close();
  }, 90_000);

  it("keeps a change made while the network is down: retrying in place, no error page, saved when it returns", async () => {
    const page = await annotatorPage("ann1");
    const caseId = await openCase(page, 5, "ann1");
    await page.context().setOffline(true);
    await typeNotes(page, "typed while offline");
    await expect.poll(() => state(page), { timeout: 10_000 }).toBe("retrying");
    await expect(page.getByTestId("save-problem").textContent()).resolves.toMatch(/could not be reached/);
    // The failed save neither reloads the page's data nor the layout's: nothing replaces the workspace.
    await page.waitForTimeout(1500);
    expect(await page.locator(`section[data-case-id="${caseId}"]`).count()).toBe(1);
    expect(await page.locator("#notes").inputValue()).toBe("typed while offline");
    await page.context().setOffline(false);
    await expect.poll(() => state(page), { timeout: 20_000 }).toBe("saved");
    expect(stored("ann1", caseId)?.notes).toBe("typed while offline");
    await page.context().close();
  }, 60_000);

  it("makes revising a submitted case explicit: Save revision or Discard, and J (next) asks first", async () => {
    const page = await annotatorPage("ann2");
    const caseId = await openCase(page, 4, "ann2");
    await page.keyboard.press("i");
    await page.keyboard.press("m");
    await page.keyboard.press("Space");
    const url = page.url();
    await page.keyboard.press("Control+Enter");
    await page.waitForURL((u) => u.href !== url);
    await page.goto(`${e2e.app.url}/annotate/${caseId}`);
    await hydrated(page);
    await typeNotes(page, "a second thought");
    expect(await state(page)).toBe("revising");
    expect(await page.getByTestId("save-state").textContent()).toMatch(/Revising/);
    // J (next) does not silently throw the revision away: it asks, and staying keeps it.
    let asked = "";
    page.once("dialog", (d) => {
      asked = d.message();
      void d.dismiss();
    });
    await page.keyboard.press("j");
    await expect.poll(() => asked).toMatch(/did not save the revision/);
    expect(page.url()).toBe(`${e2e.app.url}/annotate/${caseId}`);
    expect(await page.locator("#notes").inputValue()).toBe("a second thought");
    // Discard returns to the submitted values.
    await page.getByTestId("discard").click();
    expect(await page.locator("#notes").inputValue()).toBe("");
    expect(await state(page)).not.toBe("revising");
    expect(stored("ann2", caseId)?.notes).toBe("");
    await page.context().close();
  });

  it("shows a conflict in place and keeps the user's own input", async () => {
    const a = await annotatorPage("ann1");
    const caseId = await openCase(a, 3, "ann1");
    const b = await a.context().newPage();
    await b.goto(`${e2e.app.url}/annotate/${caseId}`);
    await hydrated(b);
    expect(await a.getByTestId("case-state").textContent()).toBe("not started");
    await typeNotes(a, "first window");
    await expect.poll(() => state(a)).toBe("saved");
    // The badge beside the title follows the save, without a reload.
    await expect.poll(() => a.getByTestId("case-state").textContent()).toBe("draft");
    await typeNotes(b, "second window, not to be lost");
    await expect.poll(() => state(b)).toBe("conflict");
    await expect(b.getByTestId("save-problem").textContent()).resolves.toMatch(/changed in another window/);
    // Said once, in one sentence, with a Reload button.
    expect(await b.getByText(/changed in another window/).count()).toBe(1);
    expect(await b.getByTestId("save-problem").textContent()).toBe(
      "This annotation was changed in another window or tab: nothing was overwritten, and your input stays in the form to copy before you reload. Reload",
    );
    await b.getByTestId("reload").waitFor();
    expect(await b.locator("#notes").inputValue()).toBe("second window, not to be lost");
    expect(stored("ann1", caseId)?.notes).toBe("first window");
    await a.context().close();
  });

  it("shows one conflict, ahead of field errors, when a submitted case is revised in two windows", async () => {
    const a = await annotatorPage("ann2");
    const caseId = await openCase(a, 5, "ann2");
    await a.keyboard.press("i");
    await a.keyboard.press("m");
    await a.keyboard.press("Space");
    const url = a.url();
    await a.keyboard.press("Control+Enter");
    await a.waitForURL((u) => u.href !== url);
    await a.goto(`${e2e.app.url}/annotate/${caseId}`);
    await hydrated(a);
    const b = await a.context().newPage();
    await b.goto(`${e2e.app.url}/annotate/${caseId}`);
    await hydrated(b);
    // Window A saves a revision; window B then revises too, into an invalid label (sufficient, no code).
    await typeNotes(a, "revised in A");
    await a.getByTestId("submit").click();
    await expect.poll(() => stored("ann2", caseId)?.notes).toBe("revised in A");
    await b.keyboard.press("s");
    expect(await state(b)).toBe("revising");
    await b.getByTestId("submit").click();
    await expect.poll(() => state(b)).toBe("conflict");
    expect(await b.getByTestId("save-state").textContent()).toBe("Conflict: not saved");
    await b.screenshot({ path: "/tmp/w13-revision-conflict.png", fullPage: true });
    expect(await b.locator(".field-error:not([data-testid=save-problem])").allTextContents()).toEqual([]);
    expect(await b.getByTestId("form-message").count()).toBe(0);
    expect(await b.getByText(/changed in another window/).count()).toBe(1);
    await b.screenshot({ path: "/tmp/w13-revision-conflict.png", fullPage: true });
    await a.context().close();
  });

  it("shows an adjudication conflict in place, not a 404, with the adjudicator's own input kept", async () => {
    const page = await annotatorPage("adj1");
    await page.goto(`${e2e.app.url}/adjudicate/${disputed}`);
    await hydrated(page);
    // Meanwhile another adjudicator decides (from this process, on the same database file).
    const db = openDatabase(e2e.dbPath);
    const seen = getAdjudicationCase(db, { userId: adjudicatorIds.adj2!, caseId: disputed })!;
    const label = {
      sufficiency: "sufficient" as const,
      icd10: "F32.2",
      earliestSection: 2,
      missingInfo: [],
      missingOther: "",
    };
    expect(
      decide(db, {
        userId: adjudicatorIds.adj2!,
        caseId: disputed,
        label,
        rationale: "first",
        outcomeVersion: seen.outcomeVersion,
      }).ok,
    ).toBe(true);
    db.$client.close();

    await page.locator('input[name="sufficiency"][value="insufficient"]').check();
    await page.locator('input[name="missingInfo"]').first().check();
    await page.locator("#rationale").fill("my reasoning, worth keeping");
    await page.getByTestId("submit").click();
    // Said like every workspace's conflict: in the footer, with Reload.
    await expect
      .poll(() => page.getByTestId("save-problem").textContent())
      .toMatch(/Another adjudicator decided this case/);
    expect(await page.getByTestId("save-state").textContent()).toBe("Conflict: not saved");
    expect(await page.locator("#rationale").inputValue()).toBe("my reasoning, worth keeping");
    expect(await page.locator("body").textContent()).not.toMatch(/404|Not found/i);
    // A reload says why the case is gone rather than a bare "Not found".
    await page.reload();
    await expect(page.locator("body").textContent()).resolves.toMatch(/another adjudicator may have decided it/);
    await page.context().close();
  });
});
