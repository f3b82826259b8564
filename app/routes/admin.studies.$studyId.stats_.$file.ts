import type { LoaderFunctionArgs } from "@remix-run/node";
import { getDb } from "~/platform/db.server";
import { downloadResponse } from "~/platform/download.server";
import { parseId } from "~/platform/forms";
import { invariantFound, requireRole } from "~/accounts/guard.server";
import { getStudyReportFileOffThread } from "~/study-report/study-report.server";
import { BatchSizeSchema, MIN_BATCH_SIZE } from "~/study-report/domain/rater-agreement";

/**
 * Downloads of the agreement-statistics page: `<chart>.svg|png|csv` and `study-report.json|md`. Always an
 * attachment, so an SVG is never rendered as a document of this origin.
 */
export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const id = parseId(params.studyId);
  // The over-time charts' batch size (docs/statistics.md, "Agreement per pair and over time"); default when absent.
  const typed = new URL(request.url).searchParams.get("batch");
  const batch = typed === null ? null : BatchSizeSchema.safeParse(typed);
  if (batch && !batch.success)
    return new Response(`batch must be a whole number of at least ${MIN_BATCH_SIZE}.`, {
      status: 400,
      headers: { "Content-Type": "text/plain; charset=utf-8" },
    });
  return downloadResponse({ filename: params.file ?? "", contentType: "application/octet-stream" }, async () => {
    const file = invariantFound(
      id !== null
        ? await getStudyReportFileOffThread(getDb(), id, params.file ?? "", { batchSize: batch?.data })
        : null,
      "No such file.",
    );
    return { filename: file.filename, contentType: file.contentType, body: file.body };
  });
}
