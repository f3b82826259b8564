/**
 * What screening gives shared code (docs/architecture.md, "Registration"): the guidelines of screening studies and
 * the reviewer's and the admin's links of the menu.
 */
import { eq, sql } from "drizzle-orm";
import { screeningRoundItems, screeningRounds } from "../../db/schema";
import { visibleScreeningStudies } from "../../db/schema-visible";
import { preparedOn } from "../platform/db.server";
import type { GuidelineScopeRegistration, NavEntry } from "../platform/registry.server";

const entryStudy = preparedOn((db) =>
  db
    .select({ s: screeningRounds.studyId })
    .from(screeningRoundItems)
    .innerJoin(screeningRounds, eq(screeningRounds.id, screeningRoundItems.roundId))
    .where(eq(screeningRoundItems.id, sql.placeholder("id")))
    .prepare(),
);

export const SCREENING_GUIDELINES: GuidelineScopeRegistration = {
  scope: "screening",
  studyExists: (db, id) =>
    db
      .select({ id: visibleScreeningStudies.id })
      .from(visibleScreeningStudies)
      .where(eq(visibleScreeningStudies.id, id))
      .get() !== undefined,
  workspaces: ["screening_vote"],
  studyOfItem: (db, _workspace, itemId) => entryStudy(db).get({ id: itemId })?.s ?? null,
};

export const SCREENING_NAV: readonly NavEntry[] = [
  {
    to: "/screening",
    label: "Screening review",
    role: "rater",
    listOf: { segments: ["screening"], label: "Screening review" },
  },
  { to: "/admin/screening", label: "Screening", role: "admin" },
];
