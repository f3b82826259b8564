import type { LoaderFunctionArgs } from "@remix-run/node";
import { invariantFound, requireRole } from "~/accounts/guard.server";
import { getMcReportFile } from "~/mc-evaluation/reports.server";
import { downloadResponse } from "~/platform/download.server";

/** A run's per-item file of a multiple-choice report (runs/<model>_<format>_seed-<s>.csv|json), by its manifest name. */
export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const name = params.file ?? "";
  const file = invariantFound(getMcReportFile(params.report ?? "", `runs/${name}`), "No such file.");
  return downloadResponse({ filename: name, contentType: file.contentType }, () => new Uint8Array(file.body));
}
