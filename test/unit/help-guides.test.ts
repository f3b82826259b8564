/**
 * The user guides as app pages (app/help/domain/guides.ts) and the links of the front page and the docs written for
 * readers (README.md, docs/guides/, docs/commands.md, docs/deploying.md, docs/development.md): every relative link
 * names a file of the repository and, with an anchor, a heading of that file; in the app a link between guides opens
 * the other guide's page at the same heading, a link to another file is shown as its path, and raw HTML is escaped.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import MarkdownIt from "markdown-it";
import { describe, expect, it } from "vitest";
import { GUIDES, headingSlug, headingSlugs, renderGuide, resolveDocLink } from "../../app/help/domain/guides";
import { COMMON_KEYS, WORKSPACE_KEYMAPS, type WorkspaceId } from "../../app/work-items/domain/keymap";

const READER_DOCS = [
  "README.md",
  ...GUIDES.map((g) => g.file),
  "docs/commands.md",
  "docs/deploying.md",
  "docs/development.md",
];

/** Every link target of a Markdown file, as written. */
function linksOf(markdown: string): string[] {
  const out: string[] = [];
  const walk = (tokens: ReturnType<MarkdownIt["parse"]>) => {
    for (const t of tokens) {
      if (t.type === "link_open") out.push(t.attrGet("href") ?? "");
      if (t.children) walk(t.children);
    }
  };
  walk(new MarkdownIt({ html: false }).parse(markdown, {}));
  return out;
}

const read = (file: string) => readFileSync(file, "utf8");

describe("headingSlug", () => {
  it("writes GitHub's anchors", () => {
    expect(headingSlug("Expert ratings (MENTAT option ratings)")).toBe("expert-ratings-mentat-option-ratings");
    expect(headingSlug("Saving, submitting, revising")).toBe("saving-submitting-revising");
    expect(headingSlug("data_gt.json")).toBe("data_gtjson");
    expect(headingSlug("Importing MENTAT's annotation files")).toBe("importing-mentats-annotation-files");
  });

  it("numbers a repeated heading as GitHub does", () => {
    expect(headingSlugs("# A\n\n## Keys\n\n## Keys\n")).toEqual(["a", "keys", "keys-1"]);
  });
});

describe("resolveDocLink", () => {
  it("resolves a relative link from the file that holds it", () => {
    expect(resolveDocLink("docs/guides/admin.md", "../safe-psych.md#reopening")).toEqual({
      path: "docs/safe-psych.md",
      hash: "reopening",
    });
    expect(resolveDocLink("docs/guides/admin.md", "rater.md")).toEqual({ path: "docs/guides/rater.md", hash: "" });
    expect(resolveDocLink("README.md", "docs/decisions/")).toEqual({ path: "docs/decisions/", hash: "" });
  });

  it("leaves URLs, app paths and anchors alone", () => {
    for (const href of ["https://example.org/x.md", "/help", "#keys", "mailto:a@b.c"])
      expect(resolveDocLink("docs/guides/admin.md", href)).toBeNull();
  });
});

describe.each(READER_DOCS)("the links of %s", (file) => {
  it("name files and headings that exist", () => {
    const broken: string[] = [];
    for (const href of linksOf(read(file))) {
      const local = resolveDocLink(file, href);
      if (!local) {
        if (href.startsWith("#") && !headingSlugs(read(file)).includes(href.slice(1))) broken.push(href);
        continue;
      }
      if (!existsSync(local.path)) {
        broken.push(`${href}: no file ${local.path}`);
        continue;
      }
      if (local.hash && !(statSync(local.path).isFile() && headingSlugs(read(local.path)).includes(local.hash)))
        broken.push(`${href}: no heading #${local.hash} in ${local.path}`);
    }
    expect(broken).toEqual([]);
  });
});

describe.each(GUIDES)("the guide $id in the app", ({ id, title, file }) => {
  const html = renderGuide(id, read(file));

  it("has the guide's title as its one level-1 heading", () => {
    expect(html.match(/<h1[ >]/g)).toHaveLength(1);
    expect(html).toContain(`>${title}</h1>`);
  });

  it("links other guides to their pages and heading ids that exist; shows other files as their path", () => {
    const hrefs = [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!);
    expect(hrefs.length).toBeGreaterThan(0);
    for (const href of hrefs) {
      expect(href).not.toMatch(/\.md(#|$)/);
      const m = /^\/help\/guides\/([a-z]+)(?:#(.+))?$/.exec(href);
      if (!m) {
        expect(href).toMatch(/^(#|https:)/);
        continue;
      }
      const target = GUIDES.find((g) => g.id === m[1]);
      expect(target, href).toBeDefined();
      if (m[2]) expect(renderGuide(target!.id, read(target!.file))).toContain(`id="${m[2]}"`);
    }
    // Links to protocol pages become their path.
    if (id === "admin") expect(html).toContain("<code>docs/safe-psych.md#reopening</code>");
  });
});

describe("renderGuide", () => {
  it("escapes raw HTML and refuses script URLs", () => {
    const html = renderGuide(
      "annotator",
      '# T\n\n<script>alert(1)</script> <b onclick="x">b</b> [x](javascript:alert(1))',
    );
    expect(html).not.toContain("<script>");
    expect(html).not.toContain("<b ");
    expect(html).toContain("&lt;script&gt;");
    expect(html).not.toContain('href="javascript:');
  });

  it("rewrites a link to another guide, keeps its text, and shows a protocol page's path after the text", () => {
    const html = renderGuide(
      "adjudicator",
      "# T\n\nSee [the save states](annotator.md#save-states) and [the rules](../safe-psych.md#reopening), [safe-psych.md](../safe-psych.md).",
    );
    expect(html).toContain('<a href="/help/guides/annotator#save-states">the save states</a>');
    expect(html).toContain("the rules (<code>docs/safe-psych.md#reopening</code>)");
    expect(html).toContain(", <code>docs/safe-psych.md</code>.");
  });

  it("gives every heading GitHub's anchor as its id", () => {
    expect(renderGuide("rater", "# Rater\n\n## Case review (MentalBench)\n")).toContain(
      '<h2 id="case-review-mentalbench">',
    );
  });

  it("opens a URL in a new tab", () => {
    expect(renderGuide("rater", "[w](https://who.int/)")).toContain(
      '<a href="https://who.int/" target="_blank" rel="noopener noreferrer">w</a>',
    );
  });
});

describe("the guides' keys", () => {
  /** A guide's text with the code marks dropped and lines joined, so "`S` / `I`" reads as the keymap shows it, "S / I". */
  const plain = (file: string) => read(file).replace(/`/g, "").replace(/\s+/g, " ");
  const guideOf: Record<WorkspaceId, string> = {
    annotation: "docs/guides/annotator.md",
    adjudication: "docs/guides/adjudicator.md",
    "judge-validation": "docs/guides/rater.md",
    screening: "docs/guides/rater.md",
    mentat: "docs/guides/rater.md",
    "case-review": "docs/guides/rater.md",
    preparation: "docs/guides/rater.md",
    correction: "docs/guides/rater.md",
    "model-review": "docs/guides/annotator.md",
  };

  it("name every label key of the workspace each guide describes, as the keymap shows it", () => {
    const missing: string[] = [];
    for (const [id, file] of Object.entries(guideOf) as [WorkspaceId, string][])
      for (const b of WORKSPACE_KEYMAPS[id].own) if (!plain(file).includes(b.show)) missing.push(`${id} ${b.show}`);
    for (const b of Object.values(COMMON_KEYS))
      if (!plain("docs/guides/annotator.md").includes(b.show)) missing.push(`common ${b.show}`);
    expect(missing).toEqual([]);
  });

  it("say that the next and previous keys save a draft before leaving (no label key moves on)", () => {
    expect(plain("docs/guides/annotator.md")).toContain(
      `Pressing ${COMMON_KEYS.next.show} or ${COMMON_KEYS.previous.show}, following a link, reloading or closing the tab first saves what you typed`,
    );
  });
});
