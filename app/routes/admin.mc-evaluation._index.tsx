import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { z } from "zod";
import { invariantFound, requireRole } from "~/accounts/guard.server";
import { getMcReport, mcReportsRoot, mcReportsWindow } from "~/mc-evaluation/reports.server";
import { McReportDetail, McReportList } from "~/mc-evaluation/ui/report-view";

export const meta: MetaFunction = () => [{ title: "Multiple-choice evaluation · Concord" }];

const QuerySchema = z.object({
  report: z
    .string()
    .regex(/^[\w][\w.-]*$/)
    .optional(),
});

export async function loader({ request }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const query = QuerySchema.safeParse(Object.fromEntries(new URL(request.url).searchParams));
  const name = query.success ? query.data.report : undefined;
  if (!query.success) invariantFound(null, "No such report.");
  const root = mcReportsRoot();
  return {
    root,
    // One window of the report folders, as the URL asks (docs/architecture.md, "Pages are windows").
    reports: mcReportsWindow(new URL(request.url).searchParams, root),
    report: name ? invariantFound(getMcReport(name, root), "No such report.") : null,
  };
}

export default function McEvaluation() {
  const { root, reports, report } = useLoaderData<typeof loader>();
  return (
    <section>
      <h1>Multiple-choice evaluation</h1>
      <p className="muted">
        Reports of <code>mc-run</code> / <code>mc-report</code> (MENTAT and MentalBench; docs/mc-evaluation.md) found
        under <code>{root}</code>.
      </p>
      {report ? <McReportDetail report={report} /> : <McReportList reports={reports} root={root} />}
    </section>
  );
}
