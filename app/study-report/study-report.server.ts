/**
 * The study report (docs/statistics.md#the-study-agreement-report) from the database: loads each case's primary annotations, outcome, gold label
 * and reference labels, and hands them to the pure core (app/study-report/domain/study-report.ts). Admin only — it reads reference
 * labels and both annotators' labels side by side; callers are admin routes (guarded) and the local CLI.
 */
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { annotations, caseOutcomes, referenceLabels, studySummaryVersions, users } from "../../db/schema";
import { visibleCases } from "../../db/schema-visible";
import type { CaseLabel } from "../labels/labels";
import type { DisputeReason } from "../gold/public";
import { chartCsv, studyReportCharts, type ReportChart } from "./domain/study-report-charts";
import { formatStudyReportMarkdown } from "./domain/study-report-format";
import { buildStudyReport, referenceLabelOf, type StudyCaseRecord, type StudyReport } from "./domain/study-report";
import {
  buildRaterAgreement,
  MAX_PAGE_BATCHES,
  type RaterAgreementOptions,
  type RaterAgreementReport,
} from "./domain/rater-agreement";
import { raterAgreementCharts } from "./domain/rater-agreement-charts";
import type { Db } from "../platform/db.server";
import { runDbWorker } from "../platform/db-worker.server";
import { getTimeOnTask } from "./time-on-task.server";
import { icd10Index } from "../icd10/icd10.server";
import { labelOfAnnotation } from "../gold/public.server";
import { getStudy, requireStudyByName, type StudySummary } from "../annotation/public.server";

function categoryTitle(category: string): string | null {
  return icd10Index().lookup(category)?.title ?? null;
}

/**
 * Every case's record, or with `locked`, only the cases that have a locked primary annotation: the records agreement
 * per pair and over time reads (it ignores a case without both), so that it does not load a study of imported
 * reference labels case by case (the gold export's manifest asks for it on every export).
 */
function loadRecords(
  db: Db,
  studyId: number,
  options: { locked?: boolean } = {},
): { records: StudyCaseRecord[]; notes: string[] } {
  const annotated = options.locked
    ? sql`exists (select 1 from ${annotations} where ${annotations.caseId} = ${visibleCases.id} and ${annotations.status} = 'locked')`
    : undefined;
  const caseRows = db
    .select({
      id: visibleCases.id,
      externalId: visibleCases.externalId,
      numSections: visibleCases.numSections,
      ageGroup: visibleCases.ageGroup,
    })
    .from(visibleCases)
    .where(and(eq(visibleCases.studyId, studyId), annotated))
    .orderBy(asc(visibleCases.position))
    .all();
  const annotationRows = db
    .select({
      id: annotations.id,
      caseId: annotations.caseId,
      username: users.username,
      sufficiency: annotations.sufficiency,
      icd10: annotations.icd10,
      earliestSection: annotations.earliestSection,
      missingInfo: annotations.missingInfo,
      missingOther: annotations.missingOther,
      status: annotations.status,
      submittedAt: annotations.submittedAt,
    })
    .from(annotations)
    .innerJoin(visibleCases, eq(visibleCases.id, annotations.caseId))
    .innerJoin(users, eq(users.id, annotations.annotatorId))
    .where(and(eq(visibleCases.studyId, studyId), inArray(annotations.status, ["submitted", "locked"])))
    .orderBy(asc(annotations.id))
    .all();
  const outcomeRows = db
    .select({
      caseId: caseOutcomes.caseId,
      status: caseOutcomes.status,
      disputeReason: caseOutcomes.disputeReason,
      gold: caseOutcomes.gold,
      annotatorOrder: caseOutcomes.annotatorOrder,
    })
    .from(caseOutcomes)
    .where(eq(caseOutcomes.studyId, studyId))
    .all();
  const referenceRows = db
    .select({
      caseId: referenceLabels.caseId,
      diagnosisSufficiency: referenceLabels.diagnosisSufficiency,
      diagnosisSufficiencyAgreement: referenceLabels.diagnosisSufficiencyAgreement,
      diagnosis: referenceLabels.diagnosis,
      diagnosisAgreement: referenceLabels.diagnosisAgreement,
      earliestSufficientSection: referenceLabels.earliestSufficientSection,
    })
    .from(referenceLabels)
    .innerJoin(visibleCases, eq(visibleCases.id, referenceLabels.caseId))
    .where(and(eq(visibleCases.studyId, studyId), annotated))
    .all();

  const annotationsOf = new Map<number, typeof annotationRows>();
  for (const a of annotationRows) {
    const list = annotationsOf.get(a.caseId);
    if (list) list.push(a);
    else annotationsOf.set(a.caseId, [a]);
  }
  const outcomeOf = new Map(outcomeRows.map((o) => [o.caseId, o]));
  const referenceOf = new Map(referenceRows.map((r) => [r.caseId, r]));
  // One gold source per study: an imported dataset's labels only until the study has gold labels of its own, so
  // the distributions never mix a re-annotation with the labels it re-examines.
  const useReference = !outcomeRows.some((o) => o.gold !== null);
  const notes: string[] = [];
  let unreadableReference = 0;

  const records = caseRows.map((c): StudyCaseRecord => {
    const submitted = annotationsOf.get(c.id) ?? [];
    const outcome = outcomeOf.get(c.id) ?? null;
    const locked = submitted.filter((a) => a.status === "locked");
    let pair: [CaseLabel, CaseLabel] | null = null;
    let annotators: [string, string] | null = null;
    let completedAt: number | null = null;
    if (locked.length === 2) {
      // Annotator A and B as the adjudicator sees them (case_outcomes.annotator_order), else in annotation order.
      const order: number[] = outcome ? outcome.annotatorOrder : locked.map((a) => a.id);
      const sorted = [...locked].sort((x, y) => order.indexOf(x.id) - order.indexOf(y.id));
      pair = [labelOfAnnotation(sorted[0]), labelOfAnnotation(sorted[1])];
      // Who wrote each: the report orients pairs by rater identity, not by this A/B order (docs/statistics.md).
      annotators = [sorted[0].username, sorted[1].username];
      const times = locked.map((a) => a.submittedAt);
      completedAt = times.every((t) => t !== null) ? maxOf(times as number[]) : null;
    }
    const reference = referenceOf.get(c.id);
    const fromReference = reference ? referenceLabelOf(reference, c.numSections) : null;
    if (reference && fromReference?.gold === null && reference.diagnosisSufficiency) unreadableReference++;
    let gold: CaseLabel | null = null;
    let goldSource: StudyCaseRecord["goldSource"] = null;
    if (outcome?.gold && outcome.status !== "disputed") {
      gold = outcome.gold as CaseLabel;
      goldSource = outcome.status;
    } else if (useReference && fromReference?.gold) {
      gold = fromReference.gold;
      goldSource = "reference";
    }
    return {
      caseId: c.id,
      externalId: c.externalId,
      numSections: c.numSections,
      ageGroup: c.ageGroup,
      annotationsIn: submitted.length,
      annotations: pair,
      annotators,
      completedAt,
      outcome: outcome
        ? { status: outcome.status, disputeReason: outcome.disputeReason as DisputeReason | null }
        : null,
      gold,
      goldSource,
      referenceAgreement: fromReference ? fromReference.agreement : null,
    };
  });
  if (unreadableReference > 0)
    notes.push(`${unreadableReference} case(s) have reference labels that do not make a gold label`);
  return { records, notes };
}

function reportFor(db: Db, study: StudySummary): StudyReport {
  const { records, notes } = loadRecords(db, study.id);
  return buildStudyReport(records, { study: { id: study.id, name: study.name }, categoryTitle, notes });
}

/**
 * Agreement per pair of annotators and over time (docs/statistics.md, "Agreement per pair and over time") of a study
 * by id, or null when there is no such study. Admin only, like the report.
 */
export function getRaterAgreement(
  db: Db,
  studyId: number,
  options: RaterAgreementOptions = {},
): { study: { id: number; name: string }; agreement: RaterAgreementReport } | null {
  const study = getStudy(db, studyId);
  if (!study) return null;
  return {
    study: { id: study.id, name: study.name },
    agreement: buildRaterAgreement(loadRecords(db, study.id, { locked: true }).records, options),
  };
}

/** The same by study name; throws a 404 ServiceError naming the known studies when there is none. */
export function requireRaterAgreementByName(db: Db, name: string, options: RaterAgreementOptions = {}) {
  return getRaterAgreement(db, requireStudyByName(db, name).id, options)!;
}

/** The report of a study by id, or null when there is no such study. */
export function getStudyReport(db: Db, studyId: number): StudyReport | null {
  const study = getStudy(db, studyId);
  return study ? reportFor(db, study) : null;
}

/** The report of a study by name; throws a 404 ServiceError naming the known studies when there is none. */
export function requireStudyReportByName(db: Db, name: string): StudyReport {
  return reportFor(db, requireStudyByName(db, name));
}

export interface RenderedChart {
  id: string;
  title: string;
  caption: string;
  svg: string;
}

// Loaded on first use: the chart libraries are large, and the CLI's other commands never need them.
const charts = () => import("../charts/charts.server");

/** Every chart of the report as SVG, rendered on the server (vega-lite → vega → SVG). */
export async function renderStudyReportCharts(report: StudyReport): Promise<RenderedChart[]> {
  const { renderSvg } = await charts();
  return Promise.all(
    studyReportCharts(report).map(async (c) => ({
      id: c.id,
      title: c.title,
      caption: c.caption,
      svg: await renderSvg(c.spec),
    })),
  );
}

/** The charts of agreement per pair and over time as SVG. */
export async function renderRaterAgreementCharts(agreement: RaterAgreementReport): Promise<RenderedChart[]> {
  const { renderSvg } = await charts();
  return Promise.all(
    raterAgreementCharts(agreement).map(async (c) => ({
      id: c.id,
      title: c.title,
      caption: c.caption,
      svg: await renderSvg(c.spec),
    })),
  );
}

export interface ReportFile {
  filename: string;
  contentType: string;
  body: string | Uint8Array<ArrayBuffer>;
}

const FILE = /^([a-z0-9]+(?:-[a-z0-9]+)*)\.(svg|png|csv|json|md)$/;
import { RATER_AGREEMENT_FILE_STEM, REPORT_FILE_STEM } from "./domain/study-report-files";
import { maxOf } from "../stats/extremes";

function slug(name: string): string {
  return (
    name
      .normalize("NFKD")
      .replace(/[^\w.-]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .toLowerCase() || "study"
  );
}

/**
 * A download of the dashboard: `<chart>.svg`, `<chart>.png`, `<chart>.csv` (the rows the chart plots),
 * `study-report.json` / `study-report.md` (what `stats --json` / `--md` print), or `rater-agreement.json` (what
 * `stats --pairwise --over-time --json` prints). `batchSize` is the over-time section's. Null for an unknown file or
 * study.
 */
export async function getStudyReportFile(
  db: Db,
  studyId: number,
  file: string,
  options: RaterAgreementOptions = {},
): Promise<ReportFile | null> {
  const match = FILE.exec(file);
  if (!match) return null;
  const [, stem, ext] = match;
  const report = getStudyReport(db, studyId);
  if (!report) return null;
  const filename = `${slug(report.study.name)}-${file}`;
  if (stem === REPORT_FILE_STEM) {
    if (ext === "json")
      return { filename, contentType: "application/json; charset=utf-8", body: JSON.stringify(report, null, 2) + "\n" };
    if (ext === "md")
      return { filename, contentType: "text/markdown; charset=utf-8", body: formatStudyReportMarkdown(report) };
    return null;
  }
  const agreement = () => getRaterAgreement(db, studyId, options)!;
  if (stem === RATER_AGREEMENT_FILE_STEM) {
    if (ext !== "json") return null;
    const { study, agreement: a } = agreement();
    return {
      filename,
      contentType: "application/json; charset=utf-8",
      body: JSON.stringify({ study, ...a }, null, 2) + "\n",
    };
  }
  const chart: ReportChart | undefined =
    studyReportCharts(report).find((c) => c.id === stem) ??
    raterAgreementCharts(agreement().agreement).find((c) => c.id === stem);
  if (!chart) return null;
  const { renderSvg, svgToPng } = await charts();
  if (ext === "csv") return { filename, contentType: "text/csv; charset=utf-8", body: chartCsv(chart) };
  if (ext === "svg")
    return { filename, contentType: "image/svg+xml; charset=utf-8", body: await renderSvg(chart.spec) };
  if (ext === "png")
    return { filename, contentType: "image/png", body: new Uint8Array(svgToPng(await renderSvg(chart.spec))) };
  return null;
}

/**
 * What the agreement statistics page shows: the report, agreement per pair and over time, and their charts. Its
 * batches are at most MAX_PAGE_BATCHES (bigger than asked in a big study), so the page does not grow with the study.
 */
export async function getStatsPage(db: Db, studyId: number, options: Pick<RaterAgreementOptions, "batchSize"> = {}) {
  const report = getStudyReport(db, studyId);
  if (!report) return null;
  const { agreement } = getRaterAgreement(db, studyId, { ...options, maxBatches: MAX_PAGE_BATCHES })!;
  const [charts, agreementCharts] = await Promise.all([
    renderStudyReportCharts(report),
    renderRaterAgreementCharts(agreement),
  ]);
  return { report, charts, agreement, agreementCharts };
}

/** The statistics page's work and its downloads' (app/study-report/report-worker.ts). */
export type ReportWork =
  | { kind: "page"; studyId: number; batchSize?: number }
  | { kind: "file"; studyId: number; file: string; batchSize?: number }
  | { kind: "time"; studyId: number };

/** Does `work` on this connection: what the worker thread runs, and the fallback for a database in memory. */
export function reportWork(db: Db, work: ReportWork) {
  if (work.kind === "time") return timeOnTaskSummary(db, work.studyId);
  const options = work.batchSize === undefined ? {} : { batchSize: work.batchSize };
  return work.kind === "page"
    ? getStatsPage(db, work.studyId, options)
    : getStudyReportFile(db, work.studyId, work.file, options);
}

/** The study's time on task without its per-case list (the progress page shows a window of cases). */
function timeOnTaskSummary(db: Db, studyId: number) {
  const { per_case: _perCase, ...rest } = getTimeOnTask(db, studyId);
  return rest;
}

type TimeOnTaskSummary = ReturnType<typeof timeOnTaskSummary>;

/**
 * What is kept per connection and study until the study's summary version moves (`keptWhileVersion`): the time on
 * task, and the statistics page for each batch size asked (a few at most).
 */
type Kept<T> = { version: number; value: Promise<T> };
const timeOnTaskKept = new WeakMap<object, Map<number, Kept<TimeOnTaskSummary>>>();
const statsPageKept = new WeakMap<object, Map<string, Kept<StatsPage>>>();
/** Statistics pages kept per connection: a page is a few hundred KB, so a handful of studies and batch sizes. */
const STATS_PAGES_KEPT = 8;

/**
 * The value kept under `key` when it was computed at `version`, else `compute()`'s, kept with `version` (the oldest
 * entry dropped past `limit`). Concurrent asks share one computation; a failed one is not kept, so the next asks again.
 */
function keptWhileVersion<K, T>(
  byKey: Map<K, Kept<T>>,
  key: K,
  version: number,
  compute: () => Promise<T>,
  limit = Infinity,
): Promise<T> {
  const kept = byKey.get(key);
  if (kept && kept.version === version) return kept.value;
  const value = compute();
  byKey.delete(key);
  byKey.set(key, { version, value });
  while (byKey.size > limit) byKey.delete(byKey.keys().next().value as K);
  value.catch(() => {
    if (byKey.get(key)?.value === value) byKey.delete(key);
  });
  return value;
}

/** The study's summary version: moved by the triggers of `study_summary_versions` on every write that may change it. */
export function summaryVersion(db: Db, studyId: number): number {
  return (
    db
      .select({ version: studySummaryVersions.version })
      .from(studySummaryVersions)
      .where(eq(studySummaryVersions.studyId, studyId))
      .get()?.version ?? 0
  );
}

/**
 * The progress page's time on task (docs/statistics.md, "Time on task"; docs/architecture.md, "Pages are windows").
 * Its medians are exact, so they read every submitted annotation of the study: that is done on the statistics
 * worker thread, and the result is kept with the study's summary version, read first. A page asks again only when
 * the version has moved since (a submission, a decision, active time on submitted work: the triggers of
 * `study_summary_versions`); until then it costs one row. Concurrent pages share one computation.
 */
export function getTimeOnTaskOffThread(db: Db, studyId: number): Promise<TimeOnTaskSummary> {
  const version = summaryVersion(db, studyId);
  let byStudy = timeOnTaskKept.get(db.$client);
  if (!byStudy) timeOnTaskKept.set(db.$client, (byStudy = new Map()));
  return keptWhileVersion(byStudy, studyId, version, () =>
    runDbWorker<ReportWork, TimeOnTaskSummary>("study-report", db, { kind: "time", studyId }, (here) =>
      timeOnTaskSummary(here, studyId),
    ),
  );
}

type StatsPage = Awaited<ReturnType<typeof getStatsPage>>;

/**
 * The statistics page's data on a worker thread (docs/architecture.md, "Background jobs"): a big study's report and
 * charts take hundreds of milliseconds, which this server's thread spends answering other requests instead.
 */
export function getStatsPageOffThread(
  db: Db,
  studyId: number,
  options: Pick<RaterAgreementOptions, "batchSize"> = {},
): Promise<StatsPage> {
  const version = summaryVersion(db, studyId);
  let byPage = statsPageKept.get(db.$client);
  if (!byPage) statsPageKept.set(db.$client, (byPage = new Map()));
  const work: ReportWork = { kind: "page", studyId, batchSize: options.batchSize };
  return keptWhileVersion(
    byPage,
    `${studyId}:${options.batchSize ?? ""}`,
    version,
    () => runDbWorker<ReportWork, StatsPage>("study-report", db, work, (here) => getStatsPage(here, studyId, options)),
    STATS_PAGES_KEPT,
  );
}

/**
 * One chart of the statistics page as the page shows it (its own batches), from the page kept with the study's
 * summary version (`getStatsPageOffThread`), and that version: the page's `<img>` asks for each chart, so its SVG is
 * sent once, not in the HTML and again in the loader's data (docs/architecture.md, "Pages are windows").
 */
export async function getStatsPageChart(
  db: Db,
  studyId: number,
  chartId: string,
  options: Pick<RaterAgreementOptions, "batchSize"> = {},
): Promise<{ chart: RenderedChart; version: number } | null> {
  const version = summaryVersion(db, studyId);
  const page = await getStatsPageOffThread(db, studyId, options);
  const chart = page && [...page.charts, ...page.agreementCharts].find((c) => c.id === chartId);
  return chart ? { chart, version } : null;
}

/** A download of the statistics page (getStudyReportFile) made on a worker thread, as the page is. */
export function getStudyReportFileOffThread(
  db: Db,
  studyId: number,
  file: string,
  options: RaterAgreementOptions = {},
) {
  const work: ReportWork = { kind: "file", studyId, file, batchSize: options.batchSize };
  return runDbWorker<ReportWork, Awaited<ReturnType<typeof getStudyReportFile>>>("study-report", db, work, (here) =>
    getStudyReportFile(here, studyId, file, options),
  );
}
