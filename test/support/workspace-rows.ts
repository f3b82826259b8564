/**
 * The table of workspaces the browser tests drive (test/e2e/workspace-keys.test.ts, test/e2e/workspace-saving.test.ts),
 * on the demo data: a seventh workspace is tested by adding a row here (docs/architecture.md, "One workspace page").
 */
import type { Page } from "playwright-core";

export const DEMO_PASSWORD = "concord-demo";

export interface WorkspaceRow {
  workspace: string;
  user: string;
  /** The list page, and the prefix of its links to items. */
  list: string;
  itemPrefix: string;
  /** Brings the text field up when it is not there from the start. */
  prepare?: (page: Page) => Promise<void>;
  /** A text field typed into (Esc leaves it). */
  field: string;
  /** A text field whose text is part of the saved values (default: `field`), and how to bring it up. */
  saved?: { prepare: (page: Page) => Promise<void>; field: string };
  /**
   * Fills the rest of the form so that it can be submitted, for the revise row; null where submitted work is not
   * revised in the workspace (adjudication records its steps instead).
   */
  complete: ((page: Page) => Promise<void>) | null;
  /** What `field` holds once `complete` has been submitted (default empty): Discard brings it back. */
  submittedText?: string;
}

/** Presses a key outside any field (the form card takes the focus first). */
async function press(page: Page, ...keys: string[]) {
  await page.locator("body").click({ position: { x: 1, y: 1 } });
  for (const k of keys) await page.keyboard.press(k);
}

export const WORKSPACE_ROWS: WorkspaceRow[] = [
  {
    workspace: "annotation",
    user: "annotator1",
    list: "/annotate",
    itemPrefix: "/annotate/",
    field: "#notes",
    complete: async (page) => {
      await press(page, "i");
      await page.locator('input[name=missingInfo][value="collateral_history"]').check();
    },
  },
  {
    workspace: "adjudication",
    user: "adjudicator",
    list: "/adjudicate",
    itemPrefix: "/adjudicate/",
    // The independent judgement's only text field is the code search of a sufficient note.
    prepare: (page) => page.keyboard.press("s"),
    field: "#icd10-search",
    saved: {
      // The other missing information of an insufficient note is saved with the draft.
      prepare: async (page) => {
        if (await page.locator("#missingOther").isVisible()) return;
        await press(page, "i");
        await page.locator('input[name=missingInfo][value="other"]').check();
      },
      field: "#missingOther",
    },
    complete: null,
  },
  {
    workspace: "judge validation",
    user: "rater1",
    list: "/judge-validation",
    itemPrefix: "/judge-validation/",
    field: "#notes",
    complete: (page) => press(page, "d", "g"),
  },
  {
    workspace: "screening",
    user: "rater1",
    list: "/screening",
    itemPrefix: "/screening/",
    field: "#notes",
    complete: (page) => press(page, "n", "2"),
  },
  {
    workspace: "MENTAT",
    user: "rater1",
    list: "/expert-ratings",
    itemPrefix: "/mentat/",
    field: "#comment",
    complete: async (page) => {
      for (let i = 1; i <= 5; i++) await page.getByTestId(`score-${i}`).fill(String(10 * i));
    },
  },
  {
    workspace: "case review",
    user: "rater1",
    list: "/expert-ratings",
    itemPrefix: "/case-review/",
    field: "#comment",
    complete: async (page) => {
      // A generated case takes three scores (1–5 move on to the next dimension), a seed a decision.
      if (await page.locator("[data-dimension]").count()) await press(page, "4", "4", "4");
      else await press(page, "a");
    },
  },
  {
    // The demo's clinician review of model steps (app/demo/demo.server.ts, seedEvaluationDemo).
    workspace: "model review",
    user: "annotator1",
    list: "/model-review",
    itemPrefix: "/model-review/",
    field: "#reason",
    // The reason is required, so the submitted work holds one.
    complete: async (page) => {
      await press(page, "y");
      await page.locator("#reason").fill("Defensible at this step.");
    },
    submittedText: "Defensible at this step.",
  },
];

/** The first item of the list not started yet (else the first item): its path. */
export async function firstItem(page: Page, prefix: string, state?: string): Promise<string> {
  const hrefsOf = (selector: string) => page.$$eval(selector, (as) => as.map((a) => a.getAttribute("href") ?? ""));
  const fresh = state ? await hrefsOf(`tr[data-state="${state}"] a[href^="${prefix}"]`) : [];
  const all = await hrefsOf(`a[href^="${prefix}"]`);
  const found = [...fresh, ...all].find((h) => h.length > prefix.length);
  if (!found) throw new Error(`no link ${prefix}… on ${page.url()}`);
  return found;
}
