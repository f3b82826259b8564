/**
 * The user guides as the app serves them (docs/development.md, "The docs"): each guide's Markdown is imported at
 * build time (Vite's `?raw`), so the server never reads the repository while it runs, and rendered once, on first
 * use, by `renderGuide` (app/help/domain/guides.ts). The guides hold no study data: every logged-in user may read
 * every guide (the route checks the login).
 */
import adjudicator from "../../docs/guides/adjudicator.md?raw";
import admin from "../../docs/guides/admin.md?raw";
import annotator from "../../docs/guides/annotator.md?raw";
import rater from "../../docs/guides/rater.md?raw";
import { GUIDES, isGuideId, renderGuide, type GuideId } from "./domain/guides";

const MARKDOWN: Record<GuideId, string> = { annotator, adjudicator, rater, admin };

export interface GuidePage {
  id: GuideId;
  title: string;
  /** Safe to insert as it is: rendered with raw HTML disabled. */
  html: string;
}

const rendered = new Map<GuideId, GuidePage>();

/** The guide `id` as a page, or null when there is no such guide. */
export function getGuidePage(id: string): GuidePage | null {
  if (!isGuideId(id)) return null;
  let page = rendered.get(id);
  if (!page) {
    const guide = GUIDES.find((g) => g.id === id)!;
    page = { id, title: guide.title, html: renderGuide(id, MARKDOWN[id]) };
    rendered.set(id, page);
  }
  return page;
}
