import type { LoaderFunctionArgs } from "@remix-run/node";
import { getDb } from "~/platform/db.server";
import { downloadResponse } from "~/platform/download.server";
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
  return downloadResponse(
    { filename: "rater-quality.csv", contentType: "text/csv; charset=utf-8", cacheControl: "no-store" },
    () => raterQualityCsv(db, study.id),
  );
}
