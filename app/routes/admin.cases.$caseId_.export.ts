import type { LoaderFunctionArgs } from "@remix-run/node";
import { getDb } from "~/platform/db.server";
import { downloadResponse } from "~/platform/download.server";
import { requireById, requireRole } from "~/accounts/guard.server";
import { listCaseEvents } from "~/audit/audit.server";
import { getAdminCase } from "~/annotation/cases.server";

/** The admin case page's records as stored (labels, annotations, adjudications, history), as a download. Admin only. */
export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  const c = requireById(params.caseId, (id) => getAdminCase(db, id), "No such case.");
  return downloadResponse(
    { filename: `case-${c.id}.json`, contentType: "application/json; charset=utf-8" },
    () => JSON.stringify({ case: c, events: listCaseEvents(db, c.id) }, null, 2) + "\n",
  );
}
