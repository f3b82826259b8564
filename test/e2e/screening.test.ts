/**
 * Screening review in the browser (docs/screening.md): three reviewers work through a small round with the keyboard (Y/N,
 * category, 1–3 confidence, Ctrl+Enter), the round closes on its last vote, and the admin sees the round's figures and
 * the stop decision, the pairwise agreement that shows the lenient reviewer, the round's items filtered and sorted on
 * the server, and the release.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../app/platform/db.server";
import { createScreeningStudy } from "../../app/screening/screening.server";
import { importScreeningFiles } from "../../app/screening/screening-import.server";
import { openRound } from "../../app/screening/screening-rounds.server";
import { createUser } from "../../app/accounts/users.server";
import { hydrated, launchBrowser, logIn } from "../support/browser";
import { CATEGORIES, corpus, enc, itemsJsonl, labelsCsv, truthOf } from "../support/screening";
import { startApp, tempDbPath, type RunningApp } from "../support/server";

const PASSWORD = "e2e-password-1";
let app: RunningApp;
let browser: Browser;
let studyId: number;
let dir: string;

// Four screened-in items (all truly relevant) and six not_relevant ones (all truly not): 3 of them become controls.
const ITEMS = corpus().filter((c) =>
  ["r01", "r02", "r03", "b01", "n06", "n07", "n08", "n09", "n10", "n11"].includes(c.id),
);

beforeAll(async () => {
  const t = tempDbPath();
  const db = openDatabase(t.dbPath);
  await createUser(db, { username: "boss", password: PASSWORD, roles: ["admin"], actorId: null });
  const ids: string[] = [];
  for (const u of ["rev1", "rev2", "rev3"])
    ids.push((await createUser(db, { username: u, password: PASSWORD, roles: ["rater"], actorId: null })).id);
  studyId = createScreeningStudy(db, {
    name: "HB-Psych pilot",
    settings: {
      description: "",
      categories: CATEGORIES,
      reviewersPerRound: 3,
      inclusionVotes: 2,
      controlThreshold: 0.05,
      controlsPerRound: 3,
    },
    actorId: null,
  }).id;
  importScreeningFiles(db, {
    studyId,
    items: { bytes: enc(itemsJsonl(ITEMS)), filename: "hb.jsonl" },
    labels: { bytes: enc(labelsCsv(ITEMS)), filename: "screen.csv" },
    actorId: null,
  });
  openRound(db, { studyId, reviewerIds: ids, seed: 2024, controls: 3, actorId: null });
  db.$client.close();
  dir = t.dir;
  app = await startApp({ dbPath: t.dbPath });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function pageFor(username: string): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await logIn(page, app.url, username, PASSWORD);
  return page;
}

/** Votes on every item in the shared order with the keyboard; a lenient reviewer says yes to everything. */
async function reviewAll(page: Page, style: "truthful" | "lenient") {
  await page.goto(`${app.url}/screening`);
  await hydrated(page);
  expect((await page.getByTestId("progress").textContent())?.replace(/\s+/g, " ")).toBe("0 of 7 submitted");
  await page.keyboard.press("j");
  for (let n = 0; n < 7; n++) {
    await page.waitForURL(/\/screening\/\d+$/);
    await hydrated(page);
    const url = page.url();
    const first = (await page.locator('[data-testid="item-text"] article p').first().textContent())!;
    const id = /\((\w+)\)$/.exec(first)![1]!;
    if (style === "lenient" || truthOf(id)) {
      await page.keyboard.press("y");
      await page.locator("#category").waitFor();
      await page.selectOption("#category", "anxiety");
      await page.locator("#category").press("Enter");
    } else {
      await page.keyboard.press("n");
    }
    await page.keyboard.press("3");
    await page.keyboard.press("Control+Enter");
    await page.waitForURL((u) => u.href !== url);
  }
  await page.waitForURL(/\/screening$/);
}

describe("screening review in the browser", () => {
  it("keeps a draft across a reload, and refuses a relevant vote without a category", async () => {
    const page = await pageFor("rev1");
    try {
      await page.goto(`${app.url}/screening`);
      await hydrated(page);
      await page.getByTestId("next-item").click();
      await page.waitForURL(/\/screening\/\d+$/);
      await hydrated(page);
      await page.keyboard.press("y");
      await page.locator("#category").press("Escape");
      await page.keyboard.press("2");
      // Wait until the page shows the key's effect, then for the save that carries it: the footer's text can still
      // show the previous save for a moment after the key press.
      await expect.poll(() => page.locator("input[name=confidence][value=medium]").isChecked()).toBe(true);
      await expect
        .poll(() => page.getByTestId("save-state").getAttribute("data-state"), { timeout: 10_000 })
        .toBe("saved");
      await page.reload();
      await hydrated(page);
      expect(await page.getByTestId("vote-state").textContent()).toBe("draft");
      expect(await page.locator("input[name=relevant][value=yes]").isChecked()).toBe(true);
      expect(await page.locator("input[name=confidence][value=medium]").isChecked()).toBe(true);
      const url = page.url();
      await page.keyboard.press("Control+Enter");
      await expect.poll(() => page.getByTestId("form-message").textContent()).toContain("incomplete");
      expect(await page.locator(".field-error").first().textContent()).toContain("category");
      expect(page.url()).toBe(url);
    } finally {
      // Closed also on failure: a page left open would keep saving into the next test's items.
      await page.context().close();
    }
  });

  it("three reviewers finish the round; the admin sees the figures and the decision", async () => {
    for (const [user, style] of [
      ["rev1", "truthful"],
      ["rev2", "truthful"],
      ["rev3", "lenient"],
    ] as const) {
      const page = await pageFor(user);
      await reviewAll(page, style);
      if (user !== "rev3")
        await expect
          .poll(async () => (await page.getByTestId("progress").textContent())?.replace(/\s+/g, " "))
          .toBe("7 of 7 submitted");
      else
        await expect.poll(() => page.getByTestId("finished-rounds").textContent()).toContain("HB-Psych pilot, round 1");
      await page.context().close();
    }

    const admin = await pageFor("boss");
    await admin.goto(`${app.url}/admin/screening`);
    await admin.getByRole("link", { name: "HB-Psych pilot" }).click();
    await admin.waitForURL(new RegExp(`/admin/screening/${studyId}$`));
    await hydrated(admin);
    // The majority (two truthful reviewers) included no control: 0/3 = 0.0% ≤ 5%, so the set is final.
    expect(await admin.getByTestId("next-step").getAttribute("data-next")).toBe("final");
    expect(await admin.getByTestId("next-step").textContent()).toContain("the included set (4 items) is final");
    expect(await admin.getByTestId("rate-1").textContent()).toBe("0.0%");
    const decision = admin.getByTestId("decision-1").locator("[data-decision]");
    expect(await decision.getAttribute("data-decision")).toBe("stop");
    expect(await decision.textContent()).toBe("stop (≤ 5.0%)");
    expect(await decision.getAttribute("title")).toBe("0.0% ≤ 5.0%: the included set is final");
    const row = (await admin.locator('[data-testid="rounds"] tr[data-round="1"]').textContent())!;
    expect(row).toContain("relevant: 3 / 3");
    expect(row).toContain("borderline: 1 / 1");
    expect(row).toContain("not relevant (controls): 0 / 3");

    const manifest = await admin.request.get(`${app.url}/admin/screening/${studyId}/files/manifest.json`);
    expect(manifest.status()).toBe(200);
    const m = await manifest.json();
    expect(m).toMatchObject({ final: true, release: { included: 4 } });
    expect(m.rounds[0]).toMatchObject({ seed: 2024, controls: 3, included_controls: 0, decision: "stop" });

    await admin.getByRole("link", { name: "1 (screen)" }).click();
    await admin.waitForURL(/\/rounds\/1$/);
    // R1 and R2 agree on everything; the lenient R3 agrees with each only on the relevant items.
    const pairs = (await admin.locator("table").filter({ hasText: "Reviewer pair" }).textContent())!;
    expect(pairs).toContain("R1 (rev1) – R2 (rev2)");
    expect(pairs).toContain("100.0%");
    expect(pairs).toContain("57.1%");
    await expect.poll(() => admin.locator('tr[data-control="1"]').count()).toBe(3);
    // The item table is a window the server filters and sorts: the URL carries the choice, and Back returns.
    await hydrated(admin);
    const items = admin.getByTestId("round-items");
    const shownIds = () =>
      items.locator("tbody tr[data-item]").evaluateAll((rs) => rs.map((r) => r.getAttribute("data-item")));
    expect(await admin.getByTestId("round-items-count").textContent()).toBe("7 shown of 7 items");
    await admin.getByLabel("Show").selectOption("controls");
    await items.getByRole("button", { name: "Filter" }).click();
    await admin.waitForURL(/[?&]show=controls/);
    await expect.poll(() => admin.getByTestId("round-items-count").textContent()).toBe("3 shown of 3 items");
    expect(await items.locator('tbody tr[data-control="0"]').count()).toBe(0);
    await admin.getByLabel("Show").selectOption("included");
    await admin.getByLabel("Item, source or category starts with").fill("r0");
    await items.getByRole("button", { name: "Filter" }).click();
    await admin.waitForURL(/[?&]q=r0/);
    await expect.poll(async () => (await shownIds()).sort()).toEqual(["r01", "r02", "r03"]);
    await items.getByRole("link", { name: "Item" }).click();
    await admin.waitForURL(/[?&]sort=id/);
    await expect.poll(shownIds).toEqual(["r01", "r02", "r03"]);
    await items.getByRole("link", { name: /^Item/ }).click();
    await admin.waitForURL(/[?&]dir=desc/);
    await expect.poll(shownIds).toEqual(["r03", "r02", "r01"]);
    await admin.goBack();
    await admin.waitForURL((u) => !u.search.includes("dir=desc"));
    await expect.poll(shownIds).toEqual(["r01", "r02", "r03"]);
    await admin.context().close();
  });

  it("an admin creates a study, sees a bad file refused line by line, imports, and opens round 1 from the page", async () => {
    const admin = await pageFor("boss");
    await admin.goto(`${app.url}/admin/screening`);
    await hydrated(admin);
    await admin.fill("#name", "Web study");
    await Promise.all([
      admin.waitForURL(/\/admin\/screening\/\d+$/),
      admin.getByRole("button", { name: "Create study" }).click(),
    ]);
    await hydrated(admin);
    expect(await admin.getByTestId("next-step").getAttribute("data-next")).toBe("import_items");

    const items = join(dir, "web-items.jsonl");
    writeFileSync(items, itemsJsonl(ITEMS));
    const bad = join(dir, "web-labels.csv");
    writeFileSync(bad, labelsCsv(ITEMS) + "nobody,relevant,,,\n");
    await admin.setInputFiles("#items", items);
    await admin.setInputFiles("#labels", bad);
    await admin.getByRole("button", { name: "Import" }).click();
    const report = admin.getByTestId("import-report");
    await expect.poll(() => report.textContent()).toContain("nothing was written");
    expect(await report.textContent()).toContain('line 12: no item "nobody" in the study');
    expect(await admin.getByTestId("screen-counts").textContent()).toContain("Items0");

    const good = join(dir, "web-labels-ok.csv");
    writeFileSync(good, labelsCsv(ITEMS));
    await admin.setInputFiles("#items", items);
    await admin.setInputFiles("#labels", good);
    await admin.getByRole("button", { name: "Import" }).click();
    await expect.poll(() => admin.getByTestId("import-report").textContent()).toContain("Imported.");
    // The action's answer arrives before the page's data is reloaded: wait for the reload too.
    await expect.poll(() => admin.getByTestId("next-step").getAttribute("data-next")).toBe("open_round");

    await admin.fill("#seed", "77");
    await admin.fill("#controls", "2");
    await admin.getByRole("button", { name: "Open round 1" }).click();
    await expect
      .poll(() => admin.getByTestId("action-result").textContent())
      .toContain("Round 1 is open: 4 items and 2 concealed controls in one order (seed 77).");
    await expect.poll(() => admin.getByTestId("next-step").getAttribute("data-next")).toBe("in_review");
    await admin.context().close();
  });
});
