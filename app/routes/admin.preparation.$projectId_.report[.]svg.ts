import type { LoaderFunctionArgs } from "@remix-run/node";
import { invariantFound, notFound, requireUser } from "~/accounts/guard.server";
import { parseId } from "~/platform/forms";
import { getDb } from "~/platform/db.server";
import { downloadResponse } from "~/platform/download.server";
import { preparationReportSvg } from "~/preparation/public.server";

/** The preparation report's chart (docs/preparation.md, "The report"), SVG. Admins only; 404 for anyone else. */
export async function loader({ request, params }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  if (!user.roles.includes("admin")) throw notFound();
  const id = parseId(params.projectId);
  const db = getDb();
  const svg = invariantFound(id === null ? null : await preparationReportSvg(db, id));
  return downloadResponse(
    { filename: "preparation-report.svg", contentType: "image/svg+xml", inline: true },
    () => svg,
  );
}
