/**
 * A preparation project's translation in the browser (docs/preparation.md, "Translation"), against the
 * OpenAI-compatible stub: the admin opens the project's page, sees where the translation stands, starts a job on a
 * configured provider, watches its progress on the job's page until it ends, and comes back to a project whose final
 * note is translated and back-translated; the provider's key is on no page. Screenshots at 1280 px in
 * /work/notes/shots-preptrans when /work/notes exists, else in the test's temporary folder.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { createUser } from "../../app/accounts/users.server";
import { openDatabase } from "../../app/platform/db.server";
import { changeReviewers, importPreparationNotes } from "../../app/preparation/projects.server";
import { getReviewNote, listReviewerNotes, saveMinimisationReview } from "../../app/preparation/review.server";
import { DEFAULT_SETTINGS, type MinimisationValues } from "../../app/preparation/domain/review";
import { prepTranslations } from "../../db/schema";
import { hydrated } from "../support/browser";
import { seededApp } from "../support/e2e-app";
import { SECRET_KEY, setUpEvalJobs, type EvalJobsEnv } from "../support/eval-jobs";
import { PASSWORD } from "../support/fixtures";
import { startOpenAiStub, type OpenAiStub } from "../support/openai-stub";

const NOTES = readFileSync(new URL("../fixtures/preparation/notes.csv", import.meta.url), "utf8");
const shots = existsSync("/work/notes") ? "/work/notes/shots-preptrans" : join(tmpdir(), "concord-shots-preptrans");
mkdirSync(shots, { recursive: true });

let stub: OpenAiStub;
let env: EvalJobsEnv;
let projectId = 0;

const e2e = seededApp(async (db) => {
  // The stub answers slowly enough for the job's progress to be seen; the providers file names it.
  stub = await startOpenAiStub((call) => ({
    content: `${call.last.includes("into Romanian.") ? "RO" : "EN"} translation`,
    delayMs: 300,
  }));
  env = setUpEvalJobs(stub.baseURL);
  await createUser(db, { username: "boss", password: PASSWORD, roles: ["admin"], actorId: null });
  const rita = await createUser(db, { username: "rita", password: PASSWORD, roles: ["rater"], actorId: null });
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
  changeReviewers(db, { projectId, add: ["rita"], actorId: null });
  // ro-1 final (every proposal accepted), ro-2 excluded, ro-3 not reviewed.
  const notes = listReviewerNotes(db, rita.id);
  const id = (external: string) => notes.find((n) => n.externalId === external)!.noteId;
  const view = getReviewNote(db, { userId: rita.id, noteId: id("ro-1") })!;
  const accepted: MinimisationValues = {
    decisions: Object.fromEntries(view.note.proposals.map((p) => [p.id, { action: "accept" as const }])),
    missed: [],
    excluded: false,
    exclusionReason: "",
  };
  const excluded: MinimisationValues = { decisions: {}, missed: [], excluded: true, exclusionReason: "violence" };
  for (const [noteId, values] of [
    [id("ro-1"), accepted],
    [id("ro-2"), excluded],
  ] as [number, MinimisationValues][])
    if (!saveMinimisationReview(db, { userId: rita.id, noteId, values, version: 0, intent: "submit" }).ok)
      throw new Error("fixture review failed");
});

afterAll(async () => {
  await stub?.close();
  env?.restore();
});

async function shot(page: Page, name: string) {
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
}

describe("the translation of a preparation project in the browser", () => {
  it("starts a job from the project's page, shows its progress, and the project translated", async () => {
    const page = await e2e.pageAs("boss");
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${e2e.app.url}/admin/preparation/${projectId}`);
    await hydrated(page);
    const card = page.getByTestId("prep-translation");
    await expect
      .poll(() => card.textContent())
      .toContain("1 of 3 notes have a final text (1 excluded, 1 not final yet");
    expect(await card.textContent()).toContain(
      "Of their 4 sections, 0 are translated into English and 0 back-translated",
    );
    await shot(page, "1-project-before");

    await card.locator("select[name=provider]").selectOption("stub-candidate");
    await card.getByRole("button", { name: "Start the translation" }).click();
    await page.waitForURL(/\/admin\/eval-jobs\/\d+$/);
    await hydrated(page);
    expect(await page.locator("h1").textContent()).toContain("Preparation translation");
    await expect.poll(() => page.getByTestId("job-calls").textContent(), { timeout: 30_000 }).not.toBe("0");
    await shot(page, "2-job-running");
    await expect
      .poll(() => page.getByTestId("job-status").textContent(), { timeout: 60_000 })
      .toMatch(/^(done|failed|cancelled)$/);
    expect(await page.getByTestId("job-status").textContent()).toBe("done");
    await expect.poll(() => page.getByTestId("job-results").count()).toBe(1);
    await shot(page, "3-job-done");

    await page.getByTestId("job-results").getByRole("link").click();
    await page.waitForURL(new RegExp(`/admin/preparation/${projectId}$`));
    await hydrated(page);
    expect(await page.getByTestId("prep-translation").textContent()).toContain(
      "Of their 4 sections, 4 are translated into English and 4 back-translated",
    );
    expect(await page.getByTestId("prep-translation-job").textContent()).toMatch(/job \d+, done \(4 of 4 sections\)/);
    await shot(page, "4-project-after");
    expect(await page.content()).not.toContain(SECRET_KEY);

    const db = openDatabase(e2e.dbPath);
    try {
      const rows = db.select().from(prepTranslations).all();
      expect(rows).toHaveLength(4);
      expect(rows.every((r) => r.translation === "EN translation" && r.backTranslation === "RO translation")).toBe(
        true,
      );
    } finally {
      db.$client.close();
    }
    expect(stub.calls.every((c) => c.body.temperature === 0 && c.body.max_tokens === 384)).toBe(true);
  });
});
