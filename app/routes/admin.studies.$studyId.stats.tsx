import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { getDb } from "~/platform/db.server";
import { invariantFound, requireRole } from "~/accounts/guard.server";
import { parseId } from "~/platform/forms";
import { REPORT_FILE_STEM } from "~/study-report/domain/study-report-files";
import { getStatsPageOffThread, summaryVersion, type RenderedChart } from "~/study-report/study-report.server";
import { BatchSizeSchema, MIN_BATCH_SIZE, packReasons, unpackReasons } from "~/study-report/domain/rater-agreement";
import { OrderFreeSection, OverTimeSection, PairwiseSection } from "~/study-report/ui/rater-agreement-sections";
import {
  CaseCountsSection,
  DiagnosisLevelsSection,
  EarliestSectionSection,
  SufficiencySection,
} from "~/study-report/ui/agreement-sections";
import {
  ActionLabelsSection,
  CaseMixSection,
  GoldLabelsSection,
  PerDiagnosisSection,
  ReferenceFlagsSection,
} from "~/study-report/ui/label-sections";
import { HeadlineTable } from "~/study-report/ui/headline-table";
import { Fold, ReasonNotes, ReasonNumbersProvider, type ChartOnPage } from "~/study-report/ui/report-parts";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `Agreement statistics · ${data?.report.study.name ?? "Study"} · Concord` },
];

export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const id = parseId(params.studyId);
  // The batch size of "Agreement over time", as typed; a refused one is shown with its error. Without one, the page
  // makes its own: a fixed number of batches whatever the study's size (docs/statistics.md, "The page at scale").
  const typed = new URL(request.url).searchParams.get("batch");
  const batch = typed === null || typed === "" ? null : BatchSizeSchema.safeParse(typed);
  const batchSize = batch?.success ? batch.data : null;
  const batchError =
    batch && !batch.success
      ? `Cases per batch must be a whole number of at least ${MIN_BATCH_SIZE}; showing the page's own batches.`
      : null;
  // Built on a worker thread and kept until the study's figures change: a big study's report and charts would hold
  // up every other request on this one.
  const db = getDb();
  const version = id !== null ? summaryVersion(db, id) : 0;
  const page = invariantFound(
    id !== null ? await getStatsPageOffThread(db, id, batchSize === null ? {} : { batchSize }) : null,
    "No such study.",
  );
  const batchInput = typed ?? String(page.agreement.over_time.batch_size);
  // Each chart is an image the browser asks for when its fold opens (admin.studies.$studyId.stats_.charts.$chart.ts),
  // so its SVG is not sent twice here: in the HTML and again in this data (docs/architecture.md, "Pages are windows").
  const query = new URLSearchParams({
    v: String(version),
    ...(batchSize === null ? {} : { batch: String(batchSize) }),
  });
  const shown = (c: RenderedChart): ChartOnPage => ({
    id: c.id,
    title: c.title,
    caption: c.caption,
    src: `/admin/studies/${id}/stats/charts/${c.id}.svg?${query}`,
  });
  return {
    report: page.report,
    // Each reason for n/a once, with the values it explains (a few reasons for hundreds of values).
    agreement: { ...page.agreement, reasons: packReasons(page.agreement.reasons) },
    charts: page.charts.map(shown),
    agreementCharts: page.agreementCharts.map(shown),
    batchSize,
    batchInput,
    batchError,
    batchAsked: typed !== null,
  };
}

export default function StudyStatsPage() {
  const { report, charts, agreement, agreementCharts, batchSize, batchInput, batchError, batchAsked } =
    useLoaderData<typeof loader>();
  const byId = new Map(charts.map((c) => [c.id, c]));
  const agreementProps = {
    agreement: { ...agreement, reasons: unpackReasons(agreement.reasons) },
    charts: new Map(agreementCharts.map((c) => [c.id, c])),
    base: `/admin/studies/${report.study.id}/stats`,
    batchInput,
    batchError,
    batchSize,
  };
  const base = `/admin/studies/${report.study.id}/stats`;
  const sections = { report, charts: byId, base };

  return (
    <ReasonNumbersProvider reasons={report.reasons}>
      <section>
        <p>
          <Link to="/admin">Studies</Link> › <Link to={`/admin/studies/${report.study.id}`}>{report.study.name}</Link> ›
        </p>
        <div className="row">
          <h1>Agreement statistics</h1>
          <span className="spacer" />
          <a href={`${base}/${REPORT_FILE_STEM}.json`} download className="button secondary">
            JSON
          </a>
          <a href={`${base}/${REPORT_FILE_STEM}.md`} download className="button secondary">
            Markdown
          </a>
        </div>
        {report.notes.length ? (
          <div className="notice warn" role="status">
            {report.notes.map((n) => (
              <p key={n} style={{ margin: 0 }}>
                {n}
              </p>
            ))}
          </div>
        ) : null}

        <HeadlineTable
          figures={report}
          caption={`The two primary annotations of each case, before adjudication; diagnosis and earliest section over the ${report.diagnosis.n} case(s) both annotators called sufficient. 95% Student-t intervals (docs/statistics.md).`}
        />
        <ReasonNotes reasons={report.reasons} />
        <p className="muted">
          <small>
            {report.raters.description} The same report:{" "}
            <code>npm run concord -- stats --study &quot;{report.study.name}&quot;</code>. The detail is below, folded.
          </small>
        </p>

        <Fold id="cases" title="Cases">
          <CaseCountsSection {...sections} />
        </Fold>
        <Fold id="sufficiency" title="Sufficiency">
          <SufficiencySection {...sections} />
        </Fold>
        <Fold id="earliest-section" title="Earliest sufficient section">
          <EarliestSectionSection {...sections} />
        </Fold>
        <Fold id="diagnosis" title="Diagnosis">
          <DiagnosisLevelsSection {...sections} />
        </Fold>
        <Fold id="pairwise" title="Agreement per pair of annotators">
          <PairwiseSection {...agreementProps} />
        </Fold>
        <Fold id="order-free" title="Pooled agreement, order-free">
          <OrderFreeSection raters={report.raters} />
        </Fold>
        {/* Opened when a batch size was asked for: the answer to the form is in it. */}
        <Fold id="over-time" title="Agreement over time" open={batchAsked}>
          <OverTimeSection {...agreementProps} />
        </Fold>
        <Fold id="per-diagnosis" title="Per diagnosis">
          <PerDiagnosisSection {...sections} />
        </Fold>
        <Fold id="action-labels" title="Expert action labels by section">
          <ActionLabelsSection {...sections} />
        </Fold>
        <Fold id="gold-labels" title="Gold labels">
          <GoldLabelsSection {...sections} />
        </Fold>
        <Fold id="case-mix" title="Cases by age group and number of sections">
          <CaseMixSection {...sections} />
        </Fold>
        {report.reference_agreement ? (
          <Fold id="reference-flags" title="Imported agreement flags">
            <ReferenceFlagsSection report={report} />
          </Fold>
        ) : null}
      </section>
    </ReasonNumbersProvider>
  );
}
