import type { LoaderFunctionArgs } from "@remix-run/node";
import { getDb } from "~/platform/db.server";
import { downloadResponse } from "~/platform/download.server";
import { parseId } from "~/platform/forms";
import { invariantFound, requireRole } from "~/accounts/guard.server";
import { getStatsPageChart } from "~/study-report/study-report.server";
import { BatchSizeSchema } from "~/study-report/domain/rater-agreement";

/**
 * A chart of the agreement-statistics page as the page shows it, `<chart>.svg`: the page's `<img>` (lazy, inside its
 * fold) asks for it, so a chart's SVG is sent once and only when its section is opened (docs/architecture.md, "Pages
 * are windows"). Read from the page kept with the study's summary version; `v` is the version the page was built
 * at, so a chart asked with the version in force may be kept by the browser. An attachment, as every download of
 * the page: an `<img>` shows it, and it is never rendered as a document of this origin.
 */
export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const id = parseId(params.studyId);
  const url = new URL(request.url);
  const batch = BatchSizeSchema.safeParse(url.searchParams.get("batch") ?? undefined);
  const name = params.chart ?? "";
  const chartId = name.endsWith(".svg") ? name.slice(0, -".svg".length) : null;
  const found = invariantFound(
    id !== null && chartId !== null
      ? await getStatsPageChart(getDb(), id, chartId, batch.success ? { batchSize: batch.data } : {})
      : null,
    "No such chart.",
  );
  const current = url.searchParams.get("v") === String(found.version);
  return downloadResponse(
    {
      filename: name,
      contentType: "image/svg+xml; charset=utf-8",
      cacheControl: current ? "private, max-age=86400" : "private, no-store",
    },
    () => found.chart.svg,
  );
}
