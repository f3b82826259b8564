import type { LoaderFunctionArgs } from "@remix-run/node";
import { getDb } from "~/platform/db.server";
import { parseId } from "~/platform/forms";
import { invariantFound, requireRole } from "~/accounts/guard.server";
import { getStudyReportFile } from "~/study-report/study-report.server";

/**
 * Downloads of the agreement-statistics page: `<chart>.svg|png|csv` and `study-report.json|md`. Always an
 * attachment, so an SVG is never rendered as a document of this origin.
 */
export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const id = parseId(params.studyId);
  const file = invariantFound(
    id !== null ? await getStudyReportFile(getDb(), id, params.file ?? "") : null,
    "No such file.",
  );
  return new Response(file.body, {
    headers: {
      "Content-Type": file.contentType,
      "Content-Disposition": `attachment; filename="${file.filename}"`,
      "Cache-Control": "private, no-store",
      "X-Content-Type-Options": "nosniff",
    },
  });
}
