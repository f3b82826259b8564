import type { LoaderFunctionArgs } from "@remix-run/node";
import { getDb } from "~/platform/db.server";
import { requireById, requireRole } from "~/accounts/guard.server";
import { getReviewReport, getReviewSet } from "~/case-review/case-review.server";

/** The review report as JSON (the same object as `casereview-report --json`). Admin only. */
export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  const set = requireById(params.setId, (id) => getReviewSet(db, id), "No such review set.");
  const weights = new URL(request.url).searchParams.get("weights") === "linear" ? "linear" : "quadratic";
  const body = JSON.stringify({ set: set.name, ...getReviewReport(db, set.id, { weights }) }, null, 2) + "\n";
  return new Response(body, {
    headers: {
      "Content-Type": "application/json; charset=utf-8",
      "Content-Disposition": `attachment; filename="${set.name.replace(/[^A-Za-z0-9._-]+/g, "_")}.review-report.json"`,
      "Cache-Control": "private, no-store",
    },
  });
}
