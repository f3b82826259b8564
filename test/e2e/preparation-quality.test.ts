/**
 * The quality check and the preparation report in the browser (docs/preparation.md, "Quality" and "The report"): an
 * admin checks quality from the project's page with thresholds of their own, then opens the report with its tables
 * and chart; an annotator is answered 404 for the report. The translated project is stood for by prep_translations
 * rows written in the seed. With SCREENSHOT_DIR set, the card and the report are photographed at 1280 and 390 px.
 */
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { createUser } from "../../app/accounts/users.server";
import { changeReviewers, importPreparationNotes } from "../../app/preparation/projects.server";
import { getReviewNote, listReviewerNotes, saveMinimisationReview } from "../../app/preparation/review.server";
import { DEFAULT_SETTINGS } from "../../app/preparation/domain/review";
import { finalSections } from "../../app/preparation/final-review.server";
import { prepTranslations } from "../../db/schema";
import { hydrated } from "../support/browser";
import { seededApp } from "../support/e2e-app";
import { PASSWORD } from "../support/fixtures";

const SOURCES = [
  "Pacientă în vârstă de 52 de ani, internată pentru insomnie și anxietate.",
  "Pacient adus de soția sa, cu agitație psihomotorie de două săptămâni.",
  "Cooperant, orientat temporo-spațial, dispoziție depresivă.",
  "MMSE 24/30, MADRS 28, HAM-A 20.",
];
/** Back-translations from faithful to poor; the fourth loses MMSE's score in two notes. */
const BACK = [
  (s: string) => s,
  (s: string) => s.replace("internată", "spitalizată").replace("adus", "venit"),
  (s: string) => s.replace(/,/g, "").replace("dispoziție", "stare"),
  (s: string) => s.split(" ").slice(0, 5).join(" ") + ".",
];

const e2e = seededApp(async (db) => {
  await createUser(db, { username: "boss", password: PASSWORD, roles: ["admin"], actorId: null });
  const rita = await createUser(db, { username: "rita", password: PASSWORD, roles: ["rater"], actorId: null });
  await createUser(db, { username: "ann", password: PASSWORD, roles: ["annotator"], actorId: null });
  const header =
    "id,age_group,sex,presenting_symptoms,psychiatric_history,psychiatric_exam,psychological_exam,secondary_diagnoses";
  const rows = Array.from({ length: 12 }, (_, i) =>
    [`ro-${i + 1}`, "48-57", i % 2 ? "M" : "F", ...SOURCES.map((s) => `"${s}"`), ""].join(","),
  );
  const r = importPreparationNotes(db, {
    projectName: "Sibiu 2026",
    language: "ro",
    text: [header, ...rows].join("\n") + "\n",
    filename: "notes.csv",
    settings: DEFAULT_SETTINGS,
    actorId: null,
  });
  if (!r.ok) throw new Error(`fixture import failed: ${JSON.stringify(r.errors.slice(0, 3))}`);
  changeReviewers(db, { projectId: r.projectId, add: ["rita"], actorId: null });
  for (const [i, n] of listReviewerNotes(db, rita.id).entries()) {
    const view = getReviewNote(db, { userId: rita.id, noteId: n.noteId })!;
    const excluded = i === 11;
    const decisions = Object.fromEntries(
      view.note.proposals.map((p, k) => [
        p.id,
        k === 0 && i % 3 === 0 ? { action: "reject" as const } : { action: "accept" as const },
      ]),
    );
    const saved = saveMinimisationReview(db, {
      userId: rita.id,
      noteId: n.noteId,
      values: {
        decisions: excluded ? {} : decisions,
        missed: [],
        excluded,
        exclusionReason: excluded ? "Rare presentation, identifying after minimisation" : "",
      },
      version: 0,
      intent: "submit",
    });
    if (!saved.ok) throw new Error("fixture review failed");
    if (excluded) continue;
    // The rows translate the note's final text: the quality check scores no other (docs/preparation.md, "Quality").
    const final = finalSections(db, n.noteId);
    if (!Array.isArray(final)) throw new Error("fixture note not final");
    final.forEach(({ content: s }, section) => {
      const back = BACK[(i + section) % BACK.length]!(s);
      db.insert(prepTranslations)
        .values({
          noteId: n.noteId,
          section,
          sourceText: s,
          translation: "(English)",
          backTranslation: section === 3 && i % 5 === 1 ? "MMSE din 30, MADRS 28, HAM-A 20." : back,
          model: "test-model",
          comet: 0.78 + ((i * 7 + section * 3) % 10) / 50,
        })
        .run();
    });
  }
});

async function shot(page: Page, name: string) {
  if (!process.env.SCREENSHOT_DIR) return;
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: join(process.env.SCREENSHOT_DIR, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

describe("the quality check and the preparation report", () => {
  it("checks quality from the project's page and shows the report with its chart", async () => {
    const page = await e2e.pageAs("boss");
    await page.goto(`${e2e.app.url}/admin/preparation`);
    await page.getByRole("link", { name: "Sibiu 2026" }).click();
    await hydrated(page);
    const card = page.getByTestId("prep-quality");
    await card.getByLabel("COMET at least").fill("0.8");
    await card.getByRole("button", { name: "Check quality" }).click();
    const answer = page.getByTestId("prep-quality-answer");
    await expect.poll(() => answer.textContent()).toMatch(/11 notes scored, \d+ needing correction/);
    // A COMET file with an unknown note is refused by its line, nothing imported; the good one is taken.
    const upload = (body: string) =>
      card
        .locator("input[type=file]")
        .setInputFiles({ name: "comet.csv", mimeType: "text/csv", buffer: Buffer.from(body) });
    await upload("note_id,section,score\nro-1,0,0.9\nro-99,0,0.8\n");
    await card.getByRole("button", { name: "Import COMET scores" }).click();
    const comet = page.getByTestId("prep-comet-answer");
    await expect.poll(() => comet.textContent()).toContain('comet.csv:3: no note "ro-99" in this project');
    await upload("note_id,section,score\nro-1,0,0.9\n");
    await card.getByRole("button", { name: "Import COMET scores" }).click();
    await expect.poll(() => comet.textContent()).toMatch(/Imported 1 COMET scores of 1 notes/);
    await shot(page, "project-quality");

    await page.getByRole("link", { name: "The preparation report" }).click();
    await page.getByTestId("prep-report").waitFor();
    const cases = await page.getByTestId("prep-report-cases").innerText();
    expect(cases).toMatch(/Excluded\s+1/);
    expect(cases).toMatch(/Reviewed and kept\s+11/);
    expect(await page.getByTestId("prep-report-exclusions").innerText()).toContain("Rare presentation");
    expect(await page.getByTestId("prep-report-flagged").innerText()).toMatch(/MMSE 24 missing/);
    const img = page.locator("img[alt^='Histograms']");
    await expect.poll(() => img.evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBeGreaterThan(100);
    await shot(page, "report");
  });

  it("answers 404 to an annotator for the report and its CSV", async () => {
    const page = await e2e.pageAs("ann");
    for (const path of ["/admin/preparation/1/report", "/admin/preparation/1/report.csv"]) {
      const answer = await page.goto(`${e2e.app.url}${path}`);
      expect(answer?.status()).toBe(404);
    }
  });
});
