/**
 * What annotation gives shared code (docs/architecture.md, "Registration"): the guidelines of Safe-Psych studies and
 * the annotator's and the admin's links of the menu.
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import { visibleCases, visibleEvents, visibleStudies } from "../../db/schema-visible";
import { preparedOn } from "../platform/db.server";
import type { GuidelineScopeRegistration, NavEntry } from "../platform/registry.server";

const caseStudy = preparedOn((db) =>
  db
    .select({ s: visibleCases.studyId })
    .from(visibleCases)
    .where(eq(visibleCases.id, sql.placeholder("id")))
    .prepare(),
);

/**
 * A Safe-Psych study's guidelines: the annotation and the adjudication workspaces show them (their items are cases),
 * and its events carry the study, so an export counts the submissions made under each version.
 */
export const SAFE_PSYCH_GUIDELINES: GuidelineScopeRegistration = {
  scope: "safe_psych",
  studyExists: (db, id) =>
    db.select({ id: visibleStudies.id }).from(visibleStudies).where(eq(visibleStudies.id, id)).get() !== undefined,
  workspaces: ["annotation", "adjudication"],
  studyOfItem: (db, _workspace, itemId) => caseStudy(db).get({ id: itemId })?.s ?? null,
  submissionsByVersion(db, studyId) {
    const rows = db
      .select({ guidelineVersion: visibleEvents.guidelineVersion })
      .from(visibleEvents)
      .where(
        and(
          eq(visibleEvents.studyId, studyId),
          inArray(visibleEvents.entity, ["annotation", "adjudication"]),
          inArray(visibleEvents.action, ["submit", "revise", "independent", "decide"]),
        ),
      )
      .all();
    const counts: Record<string, number> = {};
    for (const r of rows) {
      const v = r.guidelineVersion;
      const key = v === undefined || v === null ? "none" : String(v);
      counts[key] = (counts[key] ?? 0) + 1;
    }
    return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
  },
};

export const ANNOTATION_NAV: readonly NavEntry[] = [
  { to: "/annotate", label: "Annotate", role: "annotator", listOf: { segments: ["annotate"], label: "My cases" } },
  // "Studies" covers the annotation studies' pages, not the other admin areas that also live under /admin.
  { to: "/admin", label: "Studies", role: "admin", activePattern: "^/admin(/(studies|import|cases)(/|$)|/?$)" },
];
