/**
 * Every workspace route re-exports the save plumbing of app/work-items/ui/save-action.ts whole
 * (docs/architecture.md, "Saving under load"): a route with the `clientAction` but without `headers` drops the saved
 * version, so the page's next autosave is refused as a conflict (the adjudication route did, until this test).
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const ROUTES = "app/routes";
const PLUMBING = ["clientAction", "headers", "shouldRevalidate"];

describe("workspace routes", () => {
  const routes = readdirSync(ROUTES)
    .filter((f) => f.endsWith(".tsx"))
    .map((f) => ({ file: `${ROUTES}/${f}`, text: readFileSync(`${ROUTES}/${f}`, "utf8") }))
    .filter((r) => /export \{[^}]*\bclientAction\b[^}]*\} from "~\/work-items\/ui\/save-action"/.test(r.text));

  it("are found (the nine workspaces)", () => {
    expect(routes.map((r) => r.file).sort()).toEqual(
      [
        "adjudicate.$caseId.tsx",
        "annotate.$caseId.tsx",
        "case-review.$itemId.tsx",
        "judge-validation.$itemId.tsx",
        "mentat.$questionId.tsx",
        "model-review.$key.tsx",
        "preparation.$noteId.tsx",
        "preparation.corrections.$key.tsx",
        "screening.$entryId.tsx",
      ].map((f) => `${ROUTES}/${f}`),
    );
  });

  it("each re-export clientAction, headers and shouldRevalidate together", () => {
    const missing = routes.flatMap((r) => {
      const names = /export \{([^}]*)\} from "~\/work-items\/ui\/save-action"/.exec(r.text)![1]!.split(",");
      const exported = new Set(names.map((n) => n.trim()));
      return PLUMBING.filter((p) => !exported.has(p)).map((p) => `${r.file}: ${p}`);
    });
    expect(missing).toEqual([]);
  });
});
