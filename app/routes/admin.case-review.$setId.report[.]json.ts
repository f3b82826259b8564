import type { LoaderFunctionArgs } from "@remix-run/node";
import { getDb } from "~/platform/db.server";
import { downloadResponse } from "~/platform/download.server";
import { requireById, requireRole } from "~/accounts/guard.server";
import { getReviewReport, getReviewSet } from "~/case-review/case-review.server";

/** The review report as JSON (the same object as `casereview-report --json`). Admin only. */
export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  const set = requireById(params.setId, (id) => getReviewSet(db, id), "No such review set.");
  const weights = new URL(request.url).searchParams.get("weights") === "linear" ? "linear" : "quadratic";
  return downloadResponse(
    {
      filename: `${set.name.replace(/[^A-Za-z0-9._-]+/g, "_")}.review-report.json`,
      contentType: "application/json; charset=utf-8",
    },
    () => JSON.stringify({ set: set.name, ...getReviewReport(db, set.id, { weights }) }, null, 2) + "\n",
  );
}
