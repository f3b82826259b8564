/**
 * After the review, in the browser (docs/preparation.md, "Correction", "Settling two reviews", "Release"): a reviewer
 * the project names corrects a note's English with the keyboard (1 goes to the first section, Ctrl+Enter submits);
 * an annotator gets 404 for the same correction; the admin settles a note whose two reviews differ, choosing one
 * proposal's decision from the other reviewer, and releases the project as a Safe-Psych study. With SCREENSHOT_DIR
 * set, the pages are photographed at 1280 and 390 px wide.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { eq, sql } from "drizzle-orm";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { createUser } from "../../app/accounts/users.server";
import { openDatabase, type Db } from "../../app/platform/db.server";
import { changeReviewers, importPreparationNotes } from "../../app/preparation/projects.server";
import { getReviewNote, listReviewerNotes, saveMinimisationReview } from "../../app/preparation/review.server";
import { finalSections } from "../../app/preparation/final-review.server";
import { listCorrectionQueue } from "../../app/preparation/correction.server";
import { DEFAULT_SETTINGS, type MinimisationValues } from "../../app/preparation/domain/review";
import { prepNoteQuality, prepSettlements, prepTranslations } from "../../db/schema";
import { hydrated } from "../support/browser";
import { seededApp } from "../support/e2e-app";
import { PASSWORD } from "../support/fixtures";

const NOTES = readFileSync(new URL("../fixtures/preparation/notes.csv", import.meta.url), "utf8");

let rita = "";
let projectId = 0;

const noteOf = (db: Db, externalId: string) =>
  listReviewerNotes(db, rita).find((n) => n.externalId === externalId)!.noteId;

function review(db: Db, userId: string, externalId: string, values: (ids: string[]) => MinimisationValues) {
  const noteId = noteOf(db, externalId);
  const ids = getReviewNote(db, { userId: rita, noteId })!.note.proposals.map((p) => p.id);
  const r = saveMinimisationReview(db, { userId, noteId, values: values(ids), version: 0, intent: "submit" });
  if (!r.ok) throw new Error(`review of ${externalId} refused`);
}

const accept = (ids: string[], reject: string[] = []): MinimisationValues => ({
  decisions: Object.fromEntries(ids.map((id) => [id, { action: reject.includes(id) ? "reject" : "accept" }])),
  missed: [],
  excluded: false,
  exclusionReason: "",
});

/** The translation runner's and the quality step's rows, written directly. */
function translate(db: Db, externalId: string, needsCorrection: boolean) {
  const noteId = noteOf(db, externalId);
  const sections = finalSections(db, noteId);
  if (!Array.isArray(sections)) throw new Error(`${externalId} is not final`);
  sections.forEach((s, section) => {
    if (!s.content.trim()) return;
    db.insert(prepTranslations)
      .values({
        noteId,
        section,
        sourceText: s.content,
        translation: `Machine English of ${externalId}, section ${section + 1}.`,
        backTranslation: `Traducere înapoi ${section + 1}.`,
        model: "m",
        bleu: needsCorrection ? 14.2 : 41,
        chrf: needsCorrection ? 38.5 : 66,
      })
      .run();
  });
  db.insert(prepNoteQuality)
    .values({
      noteId,
      bleu: needsCorrection ? 14.2 : 41,
      chrf: needsCorrection ? 38.5 : 66,
      mismatches: needsCorrection ? [{ section: 3, test: "PANSS", score: "104" }] : [],
      needsCorrection,
      reason: needsCorrection ? "BLEU 14.2 below 25; PANSS 104 missing" : "",
      computedAt: 1,
    })
    .run();
}

const e2e = seededApp(async (db) => {
  await createUser(db, { username: "boss", password: PASSWORD, roles: ["admin"], actorId: null });
  rita = (await createUser(db, { username: "rita", password: PASSWORD, roles: ["rater"], actorId: null })).id;
  const rob = (await createUser(db, { username: "rob", password: PASSWORD, roles: ["rater"], actorId: null })).id;
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
  projectId = r.projectId;
  changeReviewers(db, { projectId: r.projectId, add: ["rita", "rob"], actorId: null });
  // ro-1: the two reviewers differ on the first proposal; ro-2: they agree; ro-3: both exclude it.
  review(db, rita, "ro-1", (ids) => accept(ids));
  review(db, rob, "ro-1", (ids) => accept(ids, [ids[0]!]));
  review(db, rita, "ro-2", (ids) => accept(ids));
  review(db, rob, "ro-2", (ids) => accept(ids));
  const excluded = () => ({ decisions: {}, missed: [], excluded: true, exclusionReason: "Rare case." });
  review(db, rita, "ro-3", excluded);
  review(db, rob, "ro-3", excluded);
  translate(db, "ro-2", true);
});

async function shot(page: Page, name: string) {
  if (!process.env.SCREENSHOT_DIR) return;
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: join(process.env.SCREENSHOT_DIR, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

function withDb<T>(body: (db: Db) => T): T {
  const db = openDatabase(e2e.dbPath);
  try {
    return body(db);
  } finally {
    db.$client.close();
  }
}

describe("after the review, in the browser", () => {
  it("a reviewer corrects a note's English with the keyboard", async () => {
    const page = await e2e.pageAs("rita");
    await page.goto(`${e2e.app.url}/preparation`);
    await hydrated(page);
    await page.getByTestId("correction-link").getByRole("link", { name: "Corrections" }).click();
    await page.waitForURL(/\/preparation\/corrections$/);
    await hydrated(page);
    expect(await page.locator("[data-testid=correction-queue] tbody tr").count()).toBe(1);
    await shot(page, "correction-list");
    await page.keyboard.press("j");
    await page.waitForURL(/\/preparation\/corrections\/[0-9a-f]{12}$/);
    await hydrated(page);
    expect(await page.getByTestId("correction-reason").textContent()).toContain("PANSS 104");
    expect(await page.getByTestId("correction-source").textContent()).toContain("Traducere înapoi 1.");

    await page.keyboard.press("1");
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe("section-0");
    await page.keyboard.press("ControlOrMeta+a");
    await page.keyboard.type("Patient aged 38-47, brought in by a relative, with psychomotor agitation.");
    await page.keyboard.press("Escape");
    await page.keyboard.press("4");
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe("section-3");
    await page.keyboard.press("End");
    await page.keyboard.type(" PANSS 95-115.");
    await shot(page, "correction-workspace");
    const url = page.url();
    await page.keyboard.press("Control+Enter");
    await page.waitForURL((u) => u.href !== url);

    const rows = withDb((db) =>
      db
        .select()
        .from(prepTranslations)
        .where(eq(prepTranslations.noteId, noteOf(db, "ro-2")))
        .all(),
    );
    expect(rows[0]!.correctedText).toBe("Patient aged 38-47, brought in by a relative, with psychomotor agitation.");
    expect(rows[3]!.correctedText).toBe("Machine English of ro-2, section 4. PANSS 95-115.");
    expect(rows.every((r) => r.correctedBy === rita && r.correctedAt !== null)).toBe(true);
  }, 120_000);

  it("answers 404 to an annotator and to an admin the project does not name, for the correction", async () => {
    const key = withDb((db) => listCorrectionQueue(db, rita)[0]!.key);
    for (const who of ["ann", "boss"]) {
      const page = await e2e.pageAs(who);
      const answer = await page.goto(`${e2e.app.url}/preparation/corrections/${key}`);
      expect(answer?.status(), who).toBe(404);
      expect(await page.content()).not.toContain("Machine English");
    }
  });

  it("the admin settles two reviews that differ and releases the project as a study", async () => {
    const page = await e2e.pageAs("boss");
    await page.goto(`${e2e.app.url}/admin/preparation/${projectId}`);
    await hydrated(page);
    expect(await page.getByTestId("prep-release").textContent()).toContain("ro-1: waiting for a settlement");
    await page
      .getByTestId("prep-agreement")
      .getByRole("link", { name: /wait for a settlement/ })
      .click();
    await page.getByTestId("prep-differing").getByRole("link", { name: "Settle" }).click();
    await page.waitForURL(/\/settle\/\d+$/);
    await hydrated(page);
    const differing = page.locator("li.prep-settle-row.differs");
    expect(await differing.count()).toBe(1);
    await shot(page, "settle");
    // The differing proposal takes reviewer B's (rob's) decision; everything else stays A's.
    await differing.locator('input[type=radio][value="1"]').check();
    await page.getByRole("button", { name: "Settle with these choices" }).click();
    await page.waitForURL(/\/admin\/preparation\/\d+\?settled=ro-1/);
    await hydrated(page);
    expect(await page.getByTestId("prep-differing").textContent()).toContain("No note's reviews differ.");
    const settled = withDb((db) => db.select().from(prepSettlements).all());
    expect(settled).toHaveLength(1);
    expect(Object.values(settled[0]!.decisions).filter((d) => d.action === "reject")).toHaveLength(1);

    // The translation runner translates the settled note; the page then has nothing missing.
    withDb((db) => translate(db, "ro-1", false));
    await page.reload();
    await hydrated(page);
    expect(await page.getByTestId("prep-release").textContent()).toContain(
      "2 notes ready in English, excluded cases left out: 1",
    );
    await page.getByLabel("New study").fill("Sibiu released");
    await page.getByRole("button", { name: "Release as a Safe-Psych study" }).click();
    await expect
      .poll(() => page.getByTestId("release-result").textContent())
      .toContain('Released as study "Sibiu released": 2 notes');
    await shot(page, "admin-release");
    const cases = withDb((db) =>
      db.all<{ externalId: string; ageGroup: string }>(
        sql`select external_id as externalId, age_group as ageGroup from visible_cases order by position`,
      ),
    );
    expect(cases).toEqual([
      { externalId: "ro-1", ageGroup: "48-57" },
      { externalId: "ro-2", ageGroup: "38-47" },
    ]);
  }, 120_000);
});
