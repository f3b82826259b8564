/**
 * Rater quality in the browser (docs/rater-quality.md): an annotator's training round — after each submission the
 * reference and its rationale appear, and real work opens when the round is done; then a retest and a new case of
 * the same study look alike to the annotator (the workspace's loader data and rendered page have the same keys and
 * structure, the list's rows the same attributes), a submitted retest is "Submitted" like the cases beside it, and a
 * case number in the address answers 404; the admin's page shows the settings and the report.
 * Screenshots land in test/e2e/screenshots (not committed).
 */
import { mkdirSync } from "node:fs";
import { and, eq, isNull } from "drizzle-orm";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { annotations, assignments, qualityItems } from "../../db/schema";
import { openDatabase, type Db } from "../../app/platform/db.server";
import { importCases, requireStudyByName } from "../../app/annotation/studies.server";
import { autoAssign } from "../../app/annotation/assignments.server";
import { addCalibrationCase, setQualitySettings } from "../../app/annotation/rater-quality.server";
import { EMPTY_VALUES, submitAnnotation } from "../../app/annotation/annotations.server";
import { createUser } from "../../app/accounts/users.server";
import { QUALITY_OFF } from "../../app/annotation/domain/rater-quality";
import { hydrated, launchBrowser, logIn } from "../support/browser";
import { PASSWORD, smallStudyJsonl } from "../support/fixtures";
import { startApp, tempDbPath, type RunningApp } from "../support/server";

let app: RunningApp;
let browser: Browser;
let dbPath: string;
const ids: Record<string, string> = {};
const SHOTS = "test/e2e/screenshots";

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  const t = tempDbPath();
  dbPath = t.dbPath;
  const db = openDatabase(dbPath);
  for (const [username, roles] of [
    ["boss", ["admin"]],
    ["ann1", ["annotator"]],
    ["ann2", ["annotator"]],
  ] as const)
    ids[username] = (await createUser(db, { username, password: PASSWORD, roles: [...roles], actorId: null })).id;
  importCases(db, { studyName: "Earlier", bytes: smallStudyJsonl(3), filename: "e.jsonl", actorId: null });
  importCases(db, { studyName: "Pilot", bytes: smallStudyJsonl(4), filename: "p.jsonl", actorId: null });
  const study = requireStudyByName(db, "Pilot");
  autoAssign(db, { studyId: study.id, annotatorIds: [ids.ann1!, ids.ann2!], seed: 7, actorId: null });
  setQualitySettings(db, {
    studyId: study.id,
    settings: { ...QUALITY_OFF, retestFraction: 0.5, training: true, accuracyThreshold: 0.8, seed: 5 },
    actorId: null,
  });
  const externalIds = ["case-01", "case-02"];
  for (const [i, ext] of externalIds.entries())
    addCalibrationCase(db, {
      studyId: study.id,
      actorId: null,
      entry: {
        sourceStudy: "Earlier",
        externalId: ext,
        purpose: "training",
        rationale: `Rationale ${i + 1}: the history section settles it.`,
        reference: { sufficiency: "sufficient", icd10: "F32.1", earliestSection: 1, missingInfo: [], missingOther: "" },
      },
    });
  db.$client.close();
  app = await startApp({ dbPath });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function pageAs(username: string): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await logIn(page, app.url, username, PASSWORD);
  return page;
}

/** The loader data of the workspace route, as the page received it. */
async function workspaceData(page: Page): Promise<unknown> {
  return page.evaluate(() => {
    const ctx = (window as unknown as { __remixContext: { state: { loaderData: Record<string, unknown> } } })
      .__remixContext;
    return ctx.state.loaderData["routes/annotate.$caseId"];
  });
}

/** Keys and structure of a value; every leaf is just "leaf". */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return v.length ? [shape(v[0])] : [];
  if (v && typeof v === "object")
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, shape((v as Record<string, unknown>)[k])]),
    );
  return "leaf";
}

/**
 * The rendered workspace as tags and attribute names (no text, no attribute values). The note's sections are the
 * case's content (how many there are differs from case to case), so they count once.
 */
async function domSkeleton(page: Page): Promise<string> {
  return page.evaluate(() => {
    const walk = (el: Element): string => {
      const children = [...el.children].map(walk);
      const inner = el.getAttribute("aria-label") === "Clinical note" ? [...new Set(children)] : children;
      return `<${el.tagName.toLowerCase()} ${[...el.attributes]
        .map((a) => a.name)
        .sort()
        .join(" ")}>${inner.join("")}</>`;
    };
    return walk(document.querySelector("section[data-case-id]")!);
  });
}

describe("rater quality in the browser", () => {
  it("runs a training round: the reference and rationale after each submission, then real work opens", async () => {
    const page = await pageAs("ann1");
    await page.goto(`${app.url}/annotate`);
    await hydrated(page);
    await page.getByTestId("training-round").waitFor();
    expect(await page.locator("tbody tr").count()).toBe(2);
    await page.screenshot({ path: `${SHOTS}/rater-quality-training-list.png`, fullPage: true });

    for (const n of [1, 2]) {
      await page.getByTestId("next-case").click();
      await page.locator("section[data-case-id]").waitFor();
      await hydrated(page);
      expect(await page.getByTestId("training-reveal").count()).toBe(0);
      await page.keyboard.press("i");
      await page.keyboard.press("m");
      await page.keyboard.press("Space");
      await page.keyboard.press("Control+Enter");
      await page.getByTestId("training-reveal").waitFor();
      expect(await page.getByTestId("reference-icd10").textContent()).toBe("F32.1");
      expect(await page.getByTestId("reference-rationale").textContent()).toContain(`Rationale`);
      if (n === 1) await page.screenshot({ path: `${SHOTS}/rater-quality-training-reveal.png`, fullPage: true });
      await page.getByTestId("training-next").click();
      await page.waitForURL(/\/annotate(\/k[0-9a-f]{12})?$/);
      if (n === 1) {
        // Still in training: real work is not reachable, even by its address.
        await page.goto(`${app.url}/annotate`);
        await hydrated(page);
        expect(await page.getByTestId("training-round").textContent()).toContain("1 of 2");
      }
    }
    await page.goto(`${app.url}/annotate`);
    await hydrated(page);
    await expect.poll(() => page.getByTestId("training-round").count()).toBe(0);
    // The study's four cases are open now, the training cases listed as done.
    await expect.poll(() => page.locator('tbody tr[data-state="not_started"]').count()).toBe(4);
    await page.screenshot({ path: `${SHOTS}/rater-quality-real-work.png`, fullPage: true });
    await page.context().close();
  });

  it("shows a retest exactly like a new case: loader data, page and list row", async () => {
    // Submit ann1's cases one by one until a retest is in the queue while a new case is still open.
    const db: Db = openDatabase(dbPath);
    let retestKey: string | undefined;
    let openKey: string | undefined;
    for (let t = 10; !retestKey; t++) {
      const open = db
        .select({ caseId: assignments.caseId, key: assignments.itemKey })
        .from(assignments)
        .leftJoin(annotations, eq(annotations.assignmentId, assignments.id))
        .where(and(eq(assignments.annotatorId, ids.ann1!), isNull(annotations.id)))
        .all();
      expect(open.length).toBeGreaterThan(1);
      const values = { ...EMPTY_VALUES, sufficiency: "sufficient" as const, icd10: "F20.0", earliestSection: 1 };
      expect(submitAnnotation(db, { userId: ids.ann1!, caseId: open[0]!.caseId, values, version: 0, now: t }).ok).toBe(
        true,
      );
      retestKey = db
        .select({ key: qualityItems.itemKey })
        .from(qualityItems)
        .where(and(eq(qualityItems.annotatorId, ids.ann1!), eq(qualityItems.kind, "retest")))
        .get()?.key;
      openKey = open[1]!.key!;
    }
    db.$client.close();

    const seen: { data: unknown; dom: string; title: string }[] = [];
    let page!: Page;
    // Each page in a fresh session, so that nothing the first visit left in the browser changes the second.
    for (const key of [retestKey, openKey!]) {
      if (page) await page.context().close();
      page = await pageAs("ann1");
      await page.goto(`${app.url}/annotate/${key}`);
      await hydrated(page);
      await page.locator(`section[data-case-id="${key}"]`).waitFor();
      seen.push({ data: await workspaceData(page), dom: await domSkeleton(page), title: await page.title() });
    }
    await page.screenshot({ path: `${SHOTS}/rater-quality-new-case.png`, fullPage: true });
    expect(shape(seen[0]!.data)).toEqual(shape(seen[1]!.data));
    expect(seen[0]!.dom).toBe(seen[1]!.dom);
    expect(seen[0]!.title).toBe(seen[1]!.title);
    expect(JSON.stringify(seen[0]!.data)).not.toMatch(/retest|calibration/i);

    await page.goto(`${app.url}/annotate`);
    await hydrated(page);
    const rows = await page.locator("tbody tr").evaluateAll((trs) =>
      trs.map((tr) => ({
        attrs: [...tr.attributes]
          .map((a) => a.name)
          .sort()
          .join(" "),
        href: tr.querySelector("a")?.getAttribute("href") ?? "",
        cells: tr.children.length,
      })),
    );
    const retestRow = rows.find((r) => r.href.endsWith(retestKey!))!;
    const openRow = rows.find((r) => r.href.endsWith(openKey!))!;
    expect({ ...retestRow, href: "" }).toEqual({ ...openRow, href: "" });
    for (const r of rows) expect(r.href).toMatch(/^\/annotate\/k[0-9a-f]{12}$/);

    // Submitted in the browser, the retest stays "Submitted" like ann1's other submitted cases (ann2 has submitted
    // nothing, so no case of theirs is locked): the state column does not mark it.
    await page.goto(`${app.url}/annotate/${retestKey}`);
    await hydrated(page);
    await page.keyboard.press("i");
    await page.keyboard.press("m");
    await page.keyboard.press("Space");
    await page.keyboard.press("Control+Enter");
    await page.waitForURL((url) => !url.pathname.endsWith(retestKey!));
    await page.goto(`${app.url}/annotate`);
    await hydrated(page);
    const states = await page.locator("tbody tr").evaluateAll((trs) =>
      trs.map((tr) => ({
        href: tr.querySelector("a")?.getAttribute("href") ?? "",
        state: tr.dataset.state,
        training: tr.dataset.case?.startsWith("training") ?? false,
      })),
    );
    expect.soft(states.find((r) => r.href.endsWith(retestKey!))!.state).toBe("submitted");
    // (The training cases, known as such, lock at their submission: their reference is shown next.)
    expect.soft(states.filter((r) => r.state === "locked" && !r.training)).toEqual([]);

    // A case number in the address answers 404 for every case of the study, those behind a retest included.
    const db2: Db = openDatabase(dbPath);
    const caseIds = db2
      .select({ caseId: assignments.caseId })
      .from(assignments)
      .where(eq(assignments.annotatorId, ids.ann1!))
      .all()
      .map((a) => a.caseId);
    db2.$client.close();
    for (const caseId of caseIds) {
      const res = await page.goto(`${app.url}/annotate/${caseId}`);
      expect.soft(res?.status(), `/annotate/${caseId}`).toBe(404);
    }
    await page.context().close();
  });

  it("gives the admin the settings, the calibration set and the report", async () => {
    const page = await pageAs("boss");
    await page.goto(`${app.url}/admin`);
    await page.getByRole("link", { name: "Pilot" }).first().click();
    await page.getByRole("link", { name: "Rater quality" }).click();
    // With rater quality on, the page leads with the test–retest figures; the settings are folded below.
    await page.getByTestId("quality-settings").waitFor({ state: "attached" });
    await page.locator("details#settings > summary").click();
    await page.getByTestId("quality-settings").waitFor();
    expect(await page.locator("#retestFraction").inputValue()).toBe("0.5");
    expect(await page.getByTestId("calibration-set").locator("tbody tr").count()).toBe(2);
    // The report says which first label a retest is compared with.
    expect(await page.getByTestId("retest-first-label").textContent()).toContain(
      "first label as it was when the retest entered the annotator's queue",
    );
    await page.screenshot({ path: `${SHOTS}/rater-quality-admin.png`, fullPage: true });
    await page.context().close();
  });
});
