import type { LoaderFunctionArgs } from "@remix-run/node";
import { invariantFound, notFound, requireUser } from "~/accounts/guard.server";
import { parseId } from "~/platform/forms";
import { getDb } from "~/platform/db.server";
import { downloadResponse } from "~/platform/download.server";
import { preparationReportCsv } from "~/preparation/public.server";

/** preparation-report.csv (docs/preparation.md, "The report"): formula-safe. Admins only; 404 for anyone else. */
export async function loader({ request, params }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  if (!user.roles.includes("admin")) throw notFound();
  const id = parseId(params.projectId);
  const db = getDb();
  const csv = invariantFound(id === null ? null : preparationReportCsv(db, id));
  return downloadResponse(
    { filename: "preparation-report.csv", contentType: "text/csv; charset=utf-8", cacheControl: "no-store" },
    () => csv,
  );
}
