/**
 * Accessibility in the browser (docs/guidelines.md, "Accessibility"): axe-core, injected into the built app, finds no
 * serious or critical violation of WCAG 2 A/AA on any list page or workspace of the demo, as each demo role sees
 * it, nor on the login and the not-found pages. Each workspace is checked with its guidelines panel open (it opens
 * on a first visit), so the rendered guidelines are checked too.
 */
import axe from "axe-core";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hydrated, launchBrowser, logIn } from "../support/browser";
import { startApp, type RunningApp } from "../support/server";

const AXE_SOURCE = axe.source;
const DEMO_PASSWORD = "concord-demo";

let app: RunningApp;
let browser: Browser;

beforeAll(async () => {
  app = await startApp({ demo: true });
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

interface Finding {
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

/**
 * The serious and critical WCAG 2 A/AA violations axe finds on the page as it is now. (The contexts bypass the
 * app's Content-Security-Policy, which rightly refuses the injected script.)
 */
async function seriousViolations(page: Page): Promise<Finding[]> {
  await page.addScriptTag({ content: AXE_SOURCE });
  return page.evaluate(async () => {
    interface Violation {
      id: string;
      impact: string;
      help: string;
      nodes: { target: string[] }[];
    }
    const axe = (
      window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: Violation[] }> } }
    ).axe;
    const r = await axe.run(document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] },
      resultTypes: ["violations"],
    });
    return r.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(" ")) }));
  });
}

/** Visits `path` and returns what axe finds, keyed by the path, so a failure names the page. */
async function check(page: Page, path: string): Promise<Record<string, Finding[]>> {
  const res = await page.goto(`${app.url}${path}`);
  expect(res?.status(), path).toBeLessThan(500);
  await hydrated(page);
  return { [path]: await seriousViolations(page) };
}

/** The first link on the current page whose address starts with `prefix` (and is not the prefix itself). */
async function firstLink(page: Page, prefix: string, pattern = /\/\d+$/): Promise<string> {
  const hrefs = await page.$$eval(`a[href^="${prefix}"]`, (as) => as.map((a) => a.getAttribute("href") ?? ""));
  const found = hrefs.find((h) => pattern.test(h.split("?")[0]!));
  if (!found) throw new Error(`no link ${prefix}… on ${page.url()}`);
  return found;
}

async function asUser(username: string, visit: (page: Page) => Promise<Record<string, Finding[]>[]>) {
  const context = await browser.newContext({ bypassCSP: true });
  const page = await context.newPage();
  try {
    await logIn(page, app.url, username, DEMO_PASSWORD);
    const results = Object.assign({}, ...(await visit(page))) as Record<string, Finding[]>;
    const failing = Object.fromEntries(Object.entries(results).filter(([, v]) => v.length > 0));
    expect(failing).toEqual({});
    expect(Object.keys(results).length).toBeGreaterThan(0);
    return results;
  } finally {
    await context.close();
  }
}

describe("axe-core: no serious or critical WCAG 2 A/AA violation", () => {
  it("on the login page and the not-found page", async () => {
    const context = await browser.newContext({ bypassCSP: true });
    const page = await context.newPage();
    await page.goto(`${app.url}/login`);
    expect(await seriousViolations(page)).toEqual([]);
    const res = await page.goto(`${app.url}/no/such/page`);
    expect(res?.status()).toBe(404);
    expect(await seriousViolations(page)).toEqual([]);
    await context.close();
  }, 60_000);

  it("annotator: case list and annotation workspace", async () => {
    await asUser("annotator1", async (page) => {
      const out = [await check(page, "/annotate")];
      const ws = await firstLink(page, "/annotate/");
      out.push(await check(page, ws));
      expect(await page.isVisible("[data-testid=guidelines-panel]")).toBe(true);
      return out;
    });
  }, 120_000);

  it("adjudicator: queue and adjudication workspace", async () => {
    await asUser("adjudicator", async (page) => {
      const out = [await check(page, "/adjudicate")];
      const links = await page.$$eval('a[href^="/adjudicate/"]', (as) => as.length);
      if (links > 0) out.push(await check(page, await firstLink(page, "/adjudicate/")));
      return out;
    });
  }, 120_000);

  it("rater: every list and workspace", async () => {
    await asUser("rater1", async (page) => {
      const out = [await check(page, "/judge-validation")];
      out.push(await check(page, await firstLink(page, "/judge-validation/")));
      out.push(await check(page, "/screening"));
      out.push(await check(page, await firstLink(page, "/screening/")));
      expect(await page.textContent("[data-testid=inclusion-criterion]")).toContain("Inclusion criterion:");
      out.push(await check(page, "/expert-ratings"));
      const mentat = await firstLink(page, "/mentat/");
      // The list shows one bank or set at a time (docs/architecture.md, "Pages are windows"): the first review set's.
      const set = await page.$eval("select[name=c] option[value^=s]", (o) => (o as HTMLOptionElement).value);
      out.push(await check(page, `/expert-ratings?c=${set}`));
      const review = await firstLink(page, "/case-review/");
      out.push(await check(page, mentat));
      out.push(await check(page, review));
      return out;
    });
  }, 180_000);

  it("admin: every list page and study page", async () => {
    await asUser("admin", async (page) => {
      const out = [await check(page, "/admin")];
      const study = await firstLink(page, "/admin/studies/");
      out.push(await check(page, study));
      expect(await page.isVisible("[data-testid=guidelines-editor]")).toBe(true);
      out.push(await check(page, `${study}/progress`));
      out.push(await check(page, `${study}/stats`));
      for (const [list, prefix] of [
        ["/admin/judge", "/admin/judge/"],
        ["/admin/screening", "/admin/screening/"],
        ["/admin/expert", "/admin/expert/mentat/"],
        ["/admin/expert", "/admin/expert/cases/"],
      ] as const) {
        out.push(await check(page, list));
        const links = await page.$$eval(`a[href^="${prefix}"]`, (as) => as.length);
        if (links > 0) out.push(await check(page, await firstLink(page, prefix)));
      }
      for (const path of ["/admin/mc-evaluation", "/admin/grading", "/admin/users", "/admin/import"])
        out.push(await check(page, path));
      return out;
    });
  }, 240_000);
});

/** How far the page scrolls sideways: 0 when nothing is wider than the window. */
const sideways = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

describe("narrow and wide screens", () => {
  it("never scroll the page sideways: the header wraps, wide tables scroll in their own box", async () => {
    const pages: [string, string, { width: number; height: number }][] = [
      ["annotator1", "/annotate", { width: 390, height: 800 }],
      // A case of annotator1's that is locked: which cases the demo gives whom depends on the users' random ids.
      ["annotator1", "locked-case", { width: 390, height: 800 }],
      ["adjudicator", "/adjudicate", { width: 390, height: 800 }],
      ["rater1", "/judge-validation", { width: 390, height: 800 }],
      ["rater1", "/screening", { width: 390, height: 800 }],
      ["admin", "/admin/judge-validation/1", { width: 1280, height: 900 }],
    ];
    for (const [username, path, viewport] of pages) {
      const context = await browser.newContext({ viewport });
      const page = await context.newPage();
      await logIn(page, app.url, username, DEMO_PASSWORD);
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
      if (path === "locked-case") {
        await page.goto(app.url + "/annotate");
        await hydrated(page);
        const href = await page.locator('tr[data-state="locked"] a').first().getAttribute("href");
        await page.goto(app.url + href);
      } else await page.goto(app.url + path);
      await hydrated(page).catch((e) => {
        throw new Error(`${path} at ${viewport.width}px did not hydrate: ${errors.join(" | ")} (${e})`);
      });
      const over = await sideways(page);
      expect(over, `${username} ${path} at ${viewport.width}px`).toBe(0);
      // Log out stays on screen.
      const box = await page.getByRole("button", { name: "Log out" }).boundingBox();
      expect(box && box.x + box.width <= viewport.width, `${path}: Log out on screen`).toBe(true);
      if (path === "locked-case") {
        // A locked case: no ICD-10 search box, every field disabled.
        expect(await page.locator("#icd10-search").count()).toBe(0);
        expect(await page.locator("aside input:enabled, aside textarea:enabled").count()).toBe(0);
      }
      await context.close();
    }
  }, 120_000);
});
