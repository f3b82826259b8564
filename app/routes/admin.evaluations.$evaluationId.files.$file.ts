import type { LoaderFunctionArgs } from "@remix-run/node";
import { invariantFound, requireById, requireRole } from "~/accounts/guard.server";
import { evaluationTableFile } from "~/evaluation/evaluation-pages.server";
import { getEvaluation } from "~/evaluation/evaluations.server";
import { reviewsCsv } from "~/evaluation/model-review.server";
import { getDb } from "~/platform/db.server";
import { downloadResponse } from "~/platform/download.server";

/**
 * A table of the evaluation page as CSV (formula-safe) or its chart as SVG: `<table>-<mode>.csv|svg`; or the
 * clinicians' review figures, `reviews.csv` (docs/evaluation.md, "Clinician review of model steps").
 */
export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  const evaluation = requireById(params.evaluationId, (id) => getEvaluation(db, id), "No such evaluation.");
  const name = params.file ?? "";
  if (name === "reviews.csv")
    return downloadResponse({ filename: name, contentType: "text/csv; charset=utf-8" }, () =>
      reviewsCsv(db, evaluation.id),
    );
  const file = invariantFound(await evaluationTableFile(db, evaluation.id, name), "No such file.");
  return downloadResponse(
    { filename: file.filename, contentType: file.contentType, inline: name.endsWith(".svg") },
    () => file.body,
  );
}
