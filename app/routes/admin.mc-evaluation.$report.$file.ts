import type { LoaderFunctionArgs } from "@remix-run/node";
import { invariantFound, requireRole } from "~/accounts/guard.server";
import { getMcReportFile } from "~/mc-evaluation/reports.server";
import { downloadResponse } from "~/platform/download.server";

/** A file of a multiple-choice report (a figure, a table's CSV, scores.json, …) by the name its manifest lists. */
export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const file = invariantFound(getMcReportFile(params.report ?? "", params.file ?? ""), "No such file.");
  const inline = /\.(svg|png)$/.test(params.file ?? "");
  return downloadResponse(
    { filename: params.file ?? "", contentType: file.contentType, inline },
    () => new Uint8Array(file.body),
  );
}
