/**
 * What judge validation gives shared code (docs/architecture.md, "Registration"): the guidelines of judge sets and
 * the rater's and the admin's links of the menu.
 */
import { eq, sql } from "drizzle-orm";
import { judgeItems } from "../../db/schema";
import { visibleJudgeSets } from "../../db/schema-visible";
import { preparedOn } from "../platform/db.server";
import type { GuidelineScopeRegistration, NavEntry } from "../platform/registry.server";

const itemSet = preparedOn((db) =>
  db
    .select({ s: judgeItems.setId })
    .from(judgeItems)
    .where(eq(judgeItems.id, sql.placeholder("id")))
    .prepare(),
);

export const JUDGE_SET_GUIDELINES: GuidelineScopeRegistration = {
  scope: "judge_set",
  studyExists: (db, id) =>
    db.select({ id: visibleJudgeSets.id }).from(visibleJudgeSets).where(eq(visibleJudgeSets.id, id)).get() !==
    undefined,
  workspaces: ["judge_rating"],
  studyOfItem: (db, _workspace, itemId) => itemSet(db).get({ id: itemId })?.s ?? null,
};

export const JUDGE_VALIDATION_NAV: readonly NavEntry[] = [
  {
    to: "/judge-validation",
    label: "Rate responses",
    role: "rater",
    listOf: { segments: ["judge-validation"], label: "My responses" },
  },
  { to: "/admin/judge-validation", label: "Judges", role: "admin" },
];
