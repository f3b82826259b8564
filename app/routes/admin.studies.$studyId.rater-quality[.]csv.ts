import type { LoaderFunctionArgs } from "@remix-run/node";
import { getDb } from "~/platform/db.server";
import { requireById, requireRole } from "~/accounts/guard.server";
import { getStudy } from "~/annotation/studies.server";
import { raterQualityCsv } from "~/annotation/rater-quality.server";

/**
 * rater-quality.csv: the study's retest, calibration and training labels, each marked with its kind (docs/rater-quality.md,
 * "Exports"). Admin only; the reference-format files (data_gt.json, samples.json, data.csv) never hold them.
 */
export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  const study = requireById(params.studyId, (id) => getStudy(db, id), "No such study.");
  return new Response(raterQualityCsv(db, study.id), {
    headers: {
      "Content-Type": "text/csv; charset=utf-8",
      "Content-Disposition": 'attachment; filename="rater-quality.csv"',
      "Cache-Control": "no-store",
    },
  });
}
