/** What case review gives shared code (docs/architecture.md, "Registration"): the guidelines of review sets. */
import { eq, sql } from "drizzle-orm";
import { visibleReviewItems, visibleReviewSets } from "../../db/schema-visible";
import { preparedOn } from "../platform/db.server";
import type { GuidelineScopeRegistration } from "../platform/registry.server";

const itemSet = preparedOn((db) =>
  db
    .select({ s: visibleReviewItems.setId })
    .from(visibleReviewItems)
    .where(eq(visibleReviewItems.id, sql.placeholder("id")))
    .prepare(),
);

export const REVIEW_SET_GUIDELINES: GuidelineScopeRegistration = {
  scope: "review_set",
  studyExists: (db, id) =>
    db.select({ id: visibleReviewSets.id }).from(visibleReviewSets).where(eq(visibleReviewSets.id, id)).get() !==
    undefined,
  workspaces: ["case_review"],
  studyOfItem: (db, _workspace, itemId) => itemSet(db).get({ id: itemId })?.s ?? null,
};
