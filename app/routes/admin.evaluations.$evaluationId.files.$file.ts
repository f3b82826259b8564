import type { LoaderFunctionArgs } from "@remix-run/node";
import { invariantFound, requireById, requireRole } from "~/accounts/guard.server";
import { evaluationTableFile } from "~/evaluation/evaluation-pages.server";
import { getEvaluation } from "~/evaluation/evaluations.server";
import { getDb } from "~/platform/db.server";
import { downloadResponse } from "~/platform/download.server";

/** A table of the evaluation page as CSV (formula-safe) or its chart as SVG: `<table>-<mode>.csv|svg`. */
export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  const evaluation = requireById(params.evaluationId, (id) => getEvaluation(db, id), "No such evaluation.");
  const name = params.file ?? "";
  const file = invariantFound(await evaluationTableFile(db, evaluation.id, name), "No such file.");
  return downloadResponse(
    { filename: file.filename, contentType: file.contentType, inline: name.endsWith(".svg") },
    () => file.body,
  );
}
