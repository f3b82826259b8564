import { asc, eq } from "drizzle-orm";
import { adjudications, annotations, caseOutcomes, referenceLabels, users } from "../../db/schema";
import { visibleCases, visibleStudies } from "../../db/schema-visible";
import type { CaseLabel } from "../labels/labels";
import type { Db } from "../platform/db.server";
import { getCaseSections } from "./studies.server";

/** Everything about a case for an admin: reference labels, outcome, adjudications. Never for annotators or adjudicators. */
export function getAdminCase(db: Db, caseId: number) {
  const row = db
    .select({
      id: visibleCases.id,
      studyId: visibleCases.studyId,
      studyName: visibleStudies.name,
      externalId: visibleCases.externalId,
      ageGroup: visibleCases.ageGroup,
      sex: visibleCases.sex,
      version: visibleCases.version,
    })
    .from(visibleCases)
    .innerJoin(visibleStudies, eq(visibleStudies.id, visibleCases.studyId))
    .where(eq(visibleCases.id, caseId))
    .get();
  if (!row) return null;
  const labels = db.select().from(referenceLabels).where(eq(referenceLabels.caseId, caseId)).get() ?? null;
  const outcome = db.select().from(caseOutcomes).where(eq(caseOutcomes.caseId, caseId)).get() ?? null;
  const decisions = db
    .select({
      id: adjudications.id,
      adjudicator: users.username,
      status: adjudications.status,
      independentLabel: adjudications.independentLabel,
      finalLabel: adjudications.finalLabel,
      rationale: adjudications.rationale,
      decidedAt: adjudications.decidedAt,
    })
    .from(adjudications)
    .innerJoin(users, eq(users.id, adjudications.adjudicatorId))
    .where(eq(adjudications.caseId, caseId))
    .orderBy(asc(adjudications.id))
    .all();
  const annotationRows = db
    .select({
      id: annotations.id,
      annotator: users.username,
      status: annotations.status,
      sufficiency: annotations.sufficiency,
      icd10: annotations.icd10,
      earliestSection: annotations.earliestSection,
      missingInfo: annotations.missingInfo,
      missingOther: annotations.missingOther,
      notes: annotations.notes,
      updatedAt: annotations.updatedAt,
    })
    .from(annotations)
    .innerJoin(users, eq(users.id, annotations.annotatorId))
    .where(eq(annotations.caseId, caseId))
    .orderBy(asc(annotations.id))
    .all();
  return {
    ...row,
    sections: getCaseSections(db, caseId),
    referenceLabels: labels && { ...labels, caseId: undefined },
    outcome: outcome && {
      status: outcome.status,
      disputeReason: outcome.disputeReason,
      sufficiencyAgreement: outcome.sufficiencyAgreement,
      diagnosisAgreement: outcome.diagnosisAgreement,
      gold: outcome.gold ? (outcome.gold as CaseLabel) : null,
      // The version a reopen from this page carries (a stale tab cannot reopen a newer decision).
      version: outcome.version,
    },
    adjudications: decisions,
    annotations: annotationRows,
  };
}
