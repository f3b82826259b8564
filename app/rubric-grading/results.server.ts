/**
 * What the admin pages show of a rubric-graded evaluation (docs/rubric-grading.md, "Reports"): the sets, and for
 * one set (or subset) its progress and the report under either refusal policy. The same report as grade-report.
 */
import { z } from "zod";
import type { Db } from "../platform/db.server";
import { DEFAULT_BOOTSTRAP } from "./domain/score";
import { REFUSAL_POLICIES } from "./domain/evaluation";
import { buildReport, REPORT_FILES, reportFiles } from "./report.server";
import { getGradingSetById, listGradingSets, listModels, type GradingSet } from "./sets.server";
import { countPendingGrading } from "./work.server";

export { listGradingSets };

export const ResultsQuerySchema = z.object({
  policy: z.enum(REFUSAL_POLICIES).catch("as_returned"),
  subset: z
    .string()
    .max(200)
    .optional()
    .transform((s) => (s ? s : null))
    .catch(null),
});

export type ResultsQuery = z.infer<typeof ResultsQuerySchema>;

export function getGradingSet(db: Db, id: number): GradingSet | null {
  return getGradingSetById(db, id);
}

const reportOptions = (set: GradingSet, subset: string | null) => ({
  set,
  subset,
  bootstrap: DEFAULT_BOOTSTRAP,
  pairedTop: 5,
  alpha: 0.05,
});

export function getSetResults(db: Db, set: GradingSet, query: ResultsQuery) {
  const sets = listGradingSets(db);
  const subsets = sets.find((s) => s.id === set.id)?.subsets.map((s) => s.name) ?? [];
  const subset = query.subset && subsets.includes(query.subset) ? query.subset : null;
  const report = buildReport(db, reportOptions(set, subset));
  const judges = listModels(db, set.id, "judge").map((j) => ({
    name: j.name,
    model: j.model,
    temperature: j.temperature,
    ...countPendingGrading(db, j.id, set.id, { candidateIds: null, subsetId: null }),
  }));
  return {
    set: { id: set.id, name: set.name, contentSha256: set.contentSha256 },
    subsets,
    subset,
    policy: query.policy,
    judges,
    evaluation: report.evaluations[query.policy],
    judgeNames: report.judges,
    manifest: report.manifest,
  };
}

export const ResultFileSchema = z.enum(REPORT_FILES);

export async function getResultFile(
  db: Db,
  set: GradingSet,
  file: z.infer<typeof ResultFileSchema>,
  subset: string | null,
) {
  const names =
    listGradingSets(db)
      .find((s) => s.id === set.id)
      ?.subsets.map((s) => s.name) ?? [];
  const files = await reportFiles(
    buildReport(db, reportOptions(set, subset && names.includes(subset) ? subset : null)),
  );
  return files[file];
}
