import { eq } from "drizzle-orm";
import { cases, referenceLabels, studies } from "../../db/schema";
import type { Db } from "../lib/db.server";
import { getCaseSections } from "./studies.server";

/** Everything about a case for an admin, reference labels included. Never for annotators or adjudicators. */
export function getAdminCase(db: Db, caseId: number) {
  const row = db
    .select({
      id: cases.id,
      studyId: cases.studyId,
      studyName: studies.name,
      externalId: cases.externalId,
      ageGroup: cases.ageGroup,
      sex: cases.sex,
      version: cases.version,
    })
    .from(cases)
    .innerJoin(studies, eq(studies.id, cases.studyId))
    .where(eq(cases.id, caseId))
    .get();
  if (!row) return null;
  const labels = db.select().from(referenceLabels).where(eq(referenceLabels.caseId, caseId)).get() ?? null;
  return { ...row, sections: getCaseSections(db, caseId), referenceLabels: labels && { ...labels, caseId: undefined } };
}
