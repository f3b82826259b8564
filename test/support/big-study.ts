/**
 * A study of any size written straight into the database (one transaction of prepared inserts: 100,000 cases in a
 * few seconds), for the tests and the bench that check a page costs what it shows, not what the study holds
 * (docs/architecture.md, "Pages are windows"). Every case has three sections and two of the annotators; the first
 * `annotatedShare` of the cases have both annotations submitted and an agreed outcome, the next tenth one draft.
 */
import { randomBytes } from "node:crypto";
import type { Db } from "../../app/platform/db.server";

export interface BigStudy {
  studyId: number;
  annotatorIds: string[];
}

export function writeBigStudy(
  db: Db,
  opts: { name: string; cases: number; annotatorIds: string[]; annotatedShare?: number },
): BigStudy {
  const c = db.$client;
  const now = Date.now();
  const ids = opts.annotatorIds;
  const share = opts.annotatedShare ?? 0.3;
  const studyId = Number(
    c.prepare(`INSERT INTO studies (name, created_at) VALUES (?, ?)`).run(opts.name, now).lastInsertRowid,
  );
  const insCase = c.prepare(
    `INSERT INTO cases (study_id, external_id, position, age_group, sex, num_sections, content_hash, created_at)
     VALUES (?, ?, ?, '38-47', ?, 3, ?, ?)`,
  );
  const insSection = c.prepare(`INSERT INTO case_sections (case_id, ord, kind, content) VALUES (?, ?, ?, ?)`);
  const insAssignment = c.prepare(
    `INSERT INTO assignments (case_id, annotator_id, assigned_at, item_key) VALUES (?, ?, ?, ?)`,
  );
  const insAnnotation = c.prepare(
    `INSERT INTO annotations (assignment_id, case_id, annotator_id, status, sufficiency, icd10, earliest_section,
       updated_at, submitted_at) VALUES (?, ?, ?, ?, 'sufficient', 'F32.1', 2, ?, ?)`,
  );
  const insOutcome = c.prepare(
    `INSERT INTO case_outcomes (case_id, study_id, status, sufficiency_agreement, diagnosis_agreement, gold,
       annotator_order, updated_at) VALUES (?, ?, 'agreed', 1, 1, ?, ?, ?)`,
  );
  const kinds = ["presenting_symptoms", "psychiatric_history", "psychiatric_exam"];
  const gold = JSON.stringify({ sufficiency: "sufficient", icd10: "F32.1", earliestSection: 2 });
  c.transaction(() => {
    for (let i = 0; i < opts.cases; i++) {
      const caseId = Number(
        insCase.run(studyId, `big-${String(i).padStart(6, "0")}`, i, i % 2 ? "F" : "M", `h${i}`, now).lastInsertRowid,
      );
      kinds.forEach((k, j) => insSection.run(caseId, j + 1, k, `Section ${j + 1} of case ${i}.`));
      const pair = [ids[i % ids.length]!, ids[(i + 1) % ids.length]!];
      const assignmentIds = pair.map((a) =>
        Number(insAssignment.run(caseId, a, now, `k${randomBytes(6).toString("hex")}`).lastInsertRowid),
      );
      const done = i < opts.cases * share;
      const draft = !done && i < opts.cases * (share + 0.1);
      if (done) {
        const annotationIds = assignmentIds.map((aid, j) =>
          Number(insAnnotation.run(aid, caseId, pair[j], "locked", now, now).lastInsertRowid),
        );
        insOutcome.run(caseId, studyId, gold, JSON.stringify(annotationIds), now);
      } else if (draft) insAnnotation.run(assignmentIds[0], caseId, pair[0], "draft", now, null);
    }
  })();
  return { studyId, annotatorIds: ids };
}
