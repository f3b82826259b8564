/**
 * One annotator's side of a submission race, in its own OS process with its own database connection:
 *
 *   node --import tsx test/support/submit-race.ts DBPATH USERID PLAN_JSON
 *
 * PLAN_JSON is an array of { caseId, values, version, offsetMs }. The process opens the database, warms up (ICD-10
 * table, first query), prints "ready" and waits for one line on stdin: START_AT_MS (epoch ms). For each plan entry it
 * then spins until START_AT_MS + offsetMs and calls submitAnnotation, printing one JSON line per entry:
 * { caseId, result, startedAt, endedAt, spunMs } — or { caseId, error } if it threw (e.g. SQLITE_BUSY).
 */
import { createInterface } from "node:readline";
import { openDatabase } from "../../app/platform/db.server";
import { icd10Index } from "../../app/icd10/icd10.server";
import { getAnnotatorCase, submitAnnotation, type AnnotationValues } from "../../app/annotation/annotations.server";

interface PlanEntry {
  caseId: number;
  values: AnnotationValues;
  version: number;
  offsetMs: number;
}

const [dbPath, userId, planJson] = process.argv.slice(2);
if (!dbPath || !userId || !planJson) {
  console.error("usage: submit-race.ts DBPATH USERID PLAN_JSON");
  process.exit(2);
}
const plan = JSON.parse(planJson) as PlanEntry[];
const db = openDatabase(dbPath);
icd10Index();
getAnnotatorCase(db, { userId, caseId: plan[0]!.caseId });
console.log("ready");

const rl = createInterface({ input: process.stdin });
const line: string = await new Promise((resolve) => rl.once("line", resolve));
rl.close();
const startAt = Number(line.trim());

for (const entry of plan) {
  const at = startAt + entry.offsetMs;
  const spunFrom = Date.now();
  while (Date.now() < at) {
    // Busy-wait: a timer would add scheduling jitter of a millisecond or more.
  }
  const startedAt = Date.now();
  try {
    const result = submitAnnotation(db, { userId, caseId: entry.caseId, values: entry.values, version: entry.version });
    console.log(
      JSON.stringify({ caseId: entry.caseId, result, startedAt, endedAt: Date.now(), spunMs: startedAt - spunFrom }),
    );
  } catch (e) {
    console.log(
      JSON.stringify({
        caseId: entry.caseId,
        error: String((e as Error)?.message ?? e),
        code: (e as { code?: string }).code ?? null,
      }),
    );
  }
}
db.$client.close();
