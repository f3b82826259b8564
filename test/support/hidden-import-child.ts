/**
 * An import that creates its parent, in its own process, for the hidden-parent tests (docs/reliability.md, "Bulk
 * imports"): `node --import tsx test/support/hidden-import-child.ts KIND DB FILE NAME BUDGET_MS [kill-after-chunk]`,
 * KIND one of judge (judge-import), screening (screening-import --items), casereview, mentat, cases (`import` of
 * a case file into the study NAME, new or existing), and three imports that
 * add rows to a parent the test prepared: mentat-ratings (`mentat-import-ratings`, NAME the bank), grading
 * (`grade-batch-ingest` of a Batch API output, NAME the judge's id, its set the judge's) and screening-existing
 * (`screening-import --items` into an existing study, NAME the study). Prints "chunk N" after
 * each committed chunk and "done" at the end; with `kill-after-chunk` it kills itself with SIGKILL after the second
 * chunk, as a `kill -9` half way through would.
 */
import { readFileSync } from "node:fs";
import { importResponses } from "../../app/judge-validation/judge-responses.server";
import { importIntoNewScreeningStudy, importScreeningFiles } from "../../app/screening/screening-import.server";
import { requireScreeningStudyByName } from "../../app/screening/screening.server";
import { importReviewSet } from "../../app/case-review/case-review.server";
import { importQuestionBank } from "../../app/mentat/banks.server";
import { importMentatAnnotations } from "../../app/mentat/mentat-annotations.server";
import { ingestBatchOutput } from "../../app/rubric-grading/batch.server";
import { gradingModels } from "../../db/schema";
import { eq } from "drizzle-orm";
import { openDatabase } from "../../app/platform/db.server";
import { importCases } from "../../app/annotation/studies.server";
import { SETTINGS } from "./screening";

const [kind, dbPath, file, name, budget, mode] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string?,
];
const db = openDatabase(dbPath);
let chunks = 0;
const chunked = {
  chunkBudgetMs: Number(budget),
  onChunk: (done: number) => {
    process.stdout.write(`chunk ${done}\n`);
    if (mode === "kill-after-chunk" && ++chunks === 2) process.kill(process.pid, "SIGKILL");
  },
};
const bytes = readFileSync(file);
const text = bytes.toString("utf8");
const written = (() => {
  switch (kind) {
    case "judge":
      return importResponses(db, { setName: name, files: [{ bytes, filename: file }], actorId: null }, chunked).written;
    case "screening":
      return importIntoNewScreeningStudy(db, {
        name,
        settings: SETTINGS,
        items: { bytes, filename: file },
        actorId: null,
        ...chunked,
      }).written;
    case "screening-existing":
      return importScreeningFiles(db, {
        studyId: requireScreeningStudyByName(db, name).id,
        items: { bytes, filename: file },
        actorId: null,
        ...chunked,
      }).written;
    case "casereview": {
      const r = importReviewSet(db, { setName: name, text, actorId: null, ...chunked });
      return r.ok && r.written;
    }
    case "mentat": {
      const r = importQuestionBank(db, { bankName: name, text, actorId: null, ...chunked });
      return r.ok && r.written;
    }
    case "mentat-ratings": {
      const r = importMentatAnnotations(db, {
        files: [{ name: file, text }],
        options: { bankName: name },
        actorId: null,
        ...chunked,
      });
      return r.ok && r.written;
    }
    case "cases": {
      const r = importCases(db, { studyName: name, bytes, filename: file, actorId: null }, chunked);
      if (!r.written) process.stderr.write(`${JSON.stringify([r.parse.errors, r.conflicts, r.seedConflict])}\n`);
      return r.written;
    }
    case "grading": {
      const judge = db
        .select()
        .from(gradingModels)
        .where(eq(gradingModels.id, Number(name)))
        .get()!;
      const r = ingestBatchOutput(db, { judge, setId: judge.setId, path: file, via: "batch", ...chunked });
      return r.errors.length === 0 && r.verdicts > 0;
    }
    default:
      throw new Error(`unknown kind ${kind}`);
  }
})();
process.stdout.write(written ? "done\n" : "refused\n");
