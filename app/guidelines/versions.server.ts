/**
 * The version of a study's guidelines in force (docs/guidelines.md), apart from the rest of the guidelines service so
 * that the work-item engine, which records it with every submission, and the service, which writes through the
 * engine's transaction, do not import each other.
 */
import { and, desc, eq, sql } from "drizzle-orm";
import { guidelineVersions } from "../../db/schema";
import { preparedOn, type DbOrTx } from "../platform/db.server";
import type { GuidelineRef } from "./domain/guidelines";

const latestVersion = preparedOn((db) =>
  db
    .select()
    .from(guidelineVersions)
    .where(
      and(
        eq(guidelineVersions.scope, sql.placeholder("scope")),
        eq(guidelineVersions.scopeId, sql.placeholder("scopeId")),
      ),
    )
    .orderBy(desc(guidelineVersions.version))
    .limit(1)
    .prepare(),
);

export function latest(db: DbOrTx, ref: GuidelineRef) {
  return latestVersion(db).get({ scope: ref.scope, scopeId: ref.scopeId });
}

/** The number of the version in force, or null when the study has no guidelines. */
export function currentGuidelineVersion(db: DbOrTx, ref: GuidelineRef): number | null {
  return latest(db, ref)?.version ?? null;
}
