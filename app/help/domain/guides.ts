/**
 * The user guides (docs/guides/*.md) as pages of the app (docs/development.md, "The docs"): which guides there are,
 * and how their Markdown becomes the HTML of `/help/guides/<id>`. Rendered as the study guidelines are
 * (app/guidelines/domain/guidelines.ts): markdown-it with raw HTML disabled, so any `<tag>` in a guide is escaped and
 * its link check refuses `javascript:`, `vbscript:`, `file:` and most `data:` URLs. Links are rewritten for the app:
 * a link to another guide opens that guide's page, a link to any other file of the repository (a protocol page, a
 * source file) is shown as its text and its path, since the app does not serve the repository.
 */
import MarkdownIt from "markdown-it";
import Token from "markdown-it/lib/token.mjs";
import { pushAll } from "../../stats/extremes";

/** Every user guide: its id in `/help/guides/<id>`, its title on the help page, and its file. */
export const GUIDES = [
  { id: "annotator", title: "Annotator's guide", file: "docs/guides/annotator.md" },
  { id: "adjudicator", title: "Adjudicator's guide", file: "docs/guides/adjudicator.md" },
  { id: "rater", title: "Rater's and expert's guide", file: "docs/guides/rater.md" },
  { id: "admin", title: "Study manager's guide", file: "docs/guides/admin.md" },
] as const;

export type GuideId = (typeof GUIDES)[number]["id"];

/** Where a guide is shown in the app. */
export function guidePath(id: GuideId): string {
  return `/help/guides/${id}`;
}

export function isGuideId(value: string): value is GuideId {
  return GUIDES.some((g) => g.id === value);
}

/**
 * The anchor of a heading, as GitHub writes it, so that `guide.md#save-states` means the same heading on GitHub and in
 * the app: lower case, punctuation dropped, each space a hyphen.
 */
export function headingSlug(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors of a Markdown text's headings, in order (a repeated heading gets `-1`, `-2`, … as on GitHub). */
export function headingSlugs(markdown: string): string[] {
  return withHeadingIds(md.parse(markdown, {}));
}

/**
 * A relative link of a file under docs/ resolved to a path from the repository root (`../safe-psych.md` from
 * `docs/guides/admin.md` is `docs/safe-psych.md`), or null for a link that is not a relative path (a URL, an anchor).
 */
export function resolveDocLink(fromFile: string, href: string): { path: string; hash: string } | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith("/") || href.startsWith("#")) return null;
  const [target = "", hash = ""] = href.split("#", 2) as [string, string?];
  const parts = fromFile.split("/").slice(0, -1);
  for (const part of target.split("/")) {
    if (part === "..") parts.pop();
    else if (part !== "." && part !== "") parts.push(part);
  }
  return { path: parts.join("/") + (target.endsWith("/") ? "/" : ""), hash };
}

const md = new MarkdownIt({ html: false, linkify: true, typographer: false });

/** Sets an `id` on every heading (GitHub's anchors) and returns them. */
function withHeadingIds(tokens: Token[]): string[] {
  const seen = new Map<string, number>();
  const ids: string[] = [];
  tokens.forEach((t, i) => {
    if (t.type !== "heading_open") return;
    const base = headingSlug(
      (tokens[i + 1]?.children ?? [])
        .filter((c) => c.type === "text" || c.type === "code_inline")
        .map((c) => c.content)
        .join(""),
    );
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    const id = n === 0 ? base : `${base}-${n}`;
    t.attrSet("id", id);
    ids.push(id);
  });
  return ids;
}

function token(type: "text" | "code_inline", content: string): Token {
  const t = new Token(type, type === "code_inline" ? "code" : "", 0);
  t.content = content;
  return t;
}

/** The HTML of the guide `id`, its links rewritten for the app (see the module's comment). */
export function renderGuide(id: GuideId, markdown: string): string {
  const file = GUIDES.find((g) => g.id === id)!.file;
  const tokens = md.parse(markdown, {});
  withHeadingIds(tokens);
  for (const block of tokens) {
    if (block.type !== "inline" || !block.children) continue;
    const out: Token[] = [];
    const children = block.children;
    for (let i = 0; i < children.length; i++) {
      const t = children[i]!;
      if (t.type !== "link_open") {
        out.push(t);
        continue;
      }
      const href = t.attrGet("href") ?? "";
      if (href.startsWith("#") || href.startsWith("/")) {
        out.push(t);
        continue;
      }
      const local = resolveDocLink(file, href);
      if (!local) {
        // A URL: opens in a new tab, so following it never leaves a workspace.
        t.attrSet("target", "_blank");
        t.attrSet("rel", "noopener noreferrer");
        out.push(t);
        continue;
      }
      const guide = GUIDES.find((g) => g.file === local.path);
      if (guide) {
        t.attrSet("href", guidePath(guide.id) + (local.hash ? `#${local.hash}` : ""));
        out.push(t);
        continue;
      }
      // Any other file: the link's text and its path, or only the path when the text names the file.
      let close = i + 1;
      while (close < children.length && children[close]!.type !== "link_close") close++;
      const inner = children.slice(i + 1, close);
      const text = inner.map((c) => c.content).join("");
      const shown = local.path + (local.hash ? `#${local.hash}` : "");
      if (/\.md$|\/$/.test(text) || shown.endsWith(text)) out.push(token("code_inline", shown));
      else pushAll(out, [...inner, token("text", " ("), token("code_inline", shown), token("text", ")")]);
      i = close;
    }
    block.children = out;
  }
  return md.renderer.render(tokens, md.options, {});
}
