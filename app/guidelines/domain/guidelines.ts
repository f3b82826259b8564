/**
 * Guidelines and codebooks as pure rules (docs/guidelines.md): which studies have them, and how their Markdown is
 * rendered. Raw HTML is never passed through: markdown-it with `html: false` escapes it, and its link check refuses
 * `javascript:`, `vbscript:`, `file:` and most `data:` URLs, so the HTML is safe to insert as it is.
 */
import MarkdownIt from "markdown-it";

import type { GuidelineScope } from "../../../db/vocabulary";

/** Every kind of study that has guidelines: the list the schema stores. */
export { GUIDELINE_SCOPES, type GuidelineScope } from "../../../db/vocabulary";

/** Which study's guidelines: the kind and the study's id in its table. */
export interface GuidelineRef {
  scope: GuidelineScope;
  scopeId: number;
}

/** What a workspace shows: the version in force, rendered (HTML from `renderGuidelines`). */
export interface GuidelinesView {
  scope: GuidelineScope;
  scopeId: number;
  version: number;
  html: string;
  /** The viewing person has not been shown this version yet (stored per person, docs/guidelines.md). */
  firstVisit?: boolean;
}

/** What the admin's editor shows: the text in force and every version's date and author. */
export interface GuidelinesAdmin {
  scope: GuidelineScope;
  scopeId: number;
  current: { version: number; body: string; html: string } | null;
  versions: { version: number; createdAt: number; author: string | null }[];
}

/** The longest guidelines text accepted (characters). */
export const GUIDELINES_MAX = 100_000;

const md = new MarkdownIt({ html: false, linkify: true, typographer: false });
// Links open in a new tab, so following one never leaves a workspace with unsaved work.
const defaultLinkOpen =
  md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  tokens[idx]!.attrSet("target", "_blank");
  tokens[idx]!.attrSet("rel", "noopener noreferrer");
  return defaultLinkOpen(tokens, idx, options, env, self);
};

/**
 * The HTML of a guidelines text. Its headings are moved two levels down (`#` becomes `<h3>`), under the page's
 * level-1 heading and the panel's level-2 "Guidelines", so no heading level is skipped.
 */
export function renderGuidelines(markdown: string): string {
  const tokens = md.parse(markdown, {});
  for (const t of tokens) {
    if (t.type === "heading_open" || t.type === "heading_close") t.tag = `h${Math.min(6, Number(t.tag.slice(1)) + 2)}`;
  }
  return md.renderer.render(tokens, md.options, {});
}
