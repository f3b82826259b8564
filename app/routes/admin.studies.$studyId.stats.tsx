import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { useMemo } from "react";
import { columnHelper, DataTable } from "~/ui/data-table";
import { MISSING_INFO } from "~/gold/domain/gold";
import type { LevelAgreement, PerDiagnosisRow } from "~/study-report/domain/study-report";
import { ci95, fixed3, percent } from "~/study-report/domain/study-report-format";
import type { IntervalSummary } from "~/stats/index";
import { getDb } from "~/platform/db.server";
import { requireById, requireRole } from "~/accounts/guard.server";
import { REPORT_FILE_STEM } from "~/study-report/domain/study-report-files";
import { getStudyReport, renderStudyReportCharts, type RenderedChart } from "~/study-report/study-report.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `Agreement statistics · ${data?.report.study.name ?? "Study"} · Concord` },
];

export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const report = requireById(params.studyId, (id) => getStudyReport(getDb(), id), "No such study.");
  const charts = await renderStudyReportCharts(report);
  return { report, charts };
}

const col = columnHelper<PerDiagnosisRow>();
const MISSING_LABEL = new Map<string, string>(MISSING_INFO.map((m) => [m.key, m.label]));

function Chart({ chart, base }: { chart: RenderedChart | undefined; base: string }) {
  if (!chart) return null;
  return (
    <figure className="card" data-chart={chart.id} style={{ margin: "0 0 1rem" }}>
      <div
        role="img"
        aria-label={chart.title}
        // Vega's SVG escapes every text it draws; the chart scales down to its column (the SVG has a viewBox).
        dangerouslySetInnerHTML={{ __html: chart.svg.replace("<svg ", '<svg style="max-width:100%;height:auto" ') }}
      />
      <figcaption>
        <small className="muted">{chart.caption}</small>{" "}
        <small>
          Download:{" "}
          <a href={`${base}/${chart.id}.svg`} download>
            SVG
          </a>{" "}
          ·{" "}
          <a href={`${base}/${chart.id}.png`} download>
            PNG
          </a>{" "}
          ·{" "}
          <a href={`${base}/${chart.id}.csv`} download>
            data (CSV)
          </a>
        </small>
      </figcaption>
    </figure>
  );
}

/** A value, or "n/a" with the reason as a tooltip (reasons are keyed by the value's JSON path). */
function Value({ text, path, reasons }: { text: string; path: string; reasons: Record<string, string> }) {
  const reason = reasons[path];
  return reason ? (
    <span title={reason} data-reason={path}>
      {text} <small className="muted">({reason})</small>
    </span>
  ) : (
    <>{text}</>
  );
}

function Interval({ e, path, reasons }: { e: IntervalSummary; path: string; reasons: Record<string, string> }) {
  return (
    <>
      <td className="num">
        <Value text={fixed3(e.value)} path={path} reasons={reasons} />
      </td>
      <td className="num">{e.se === null ? "" : fixed3(e.se)}</td>
      <td className="num">{ci95(e)}</td>
    </>
  );
}

/** Two columns that keep their own heights (a table beside its chart). */
function Pair({ children }: { children: React.ReactNode }) {
  return (
    <div className="grid2" style={{ alignItems: "start" }}>
      {children}
    </div>
  );
}

function CountTable({ head, rows }: { head: [string, string]; rows: [string, number][] }) {
  return (
    <table>
      <thead>
        <tr>
          <th>{head[0]}</th>
          <th className="num">{head[1]}</th>
        </tr>
      </thead>
      <tbody>
        {rows.length === 0 ? (
          <tr>
            <td colSpan={2} className="muted">
              None yet.
            </td>
          </tr>
        ) : (
          rows.map(([k, n]) => (
            <tr key={k}>
              <td>{k}</td>
              <td className="num">{n}</td>
            </tr>
          ))
        )}
      </tbody>
    </table>
  );
}

export default function StudyStatsPage() {
  const { report, charts } = useLoaderData<typeof loader>();
  const byId = new Map(charts.map((c) => [c.id, c]));
  const base = `/admin/studies/${report.study.id}/stats`;
  const { reasons } = report;
  const c = report.case_counts;
  const s = report.sufficiency;
  const e = report.earliest_section;
  const d = report.diagnosis;
  const p = report.per_diagnosis;
  const l = report.label_distributions;
  const sourceParts = [
    l.source.agreed ? `${l.source.agreed} agreed` : "",
    l.source.adjudicated ? `${l.source.adjudicated} adjudicated` : "",
    l.source.reference ? `${l.source.reference} imported reference` : "",
  ].filter(Boolean);
  const source = sourceParts.length ? `Gold labels of ${sourceParts.join(", ")} case(s).` : "No gold labels yet.";

  const columns = useMemo(
    () => [
      col.accessor("category", { header: "Category" }),
      col.accessor((r) => r.title ?? "", { id: "title", header: "Title" }),
      col.accessor("n", { header: "n" }),
      col.accessor("sufficiency_agreement", { header: "Sufficiency agreement", cell: (i) => percent(i.getValue()) }),
      col.accessor("diagnosis_agreement", {
        header: "Diagnosis agreement",
        cell: (i) => `${percent(i.getValue())} (${i.row.original.n_diagnosis_agreed}/${i.row.original.n})`,
      }),
      col.accessor("category_agreement", { header: "Category agreement", cell: (i) => percent(i.getValue()) }),
    ],
    [],
  );

  const levels: [string, string, LevelAgreement][] = [
    ["Diagnosis level", "diagnosis.diagnosis_level", d.diagnosis_level],
    ["Category (3 characters)", "diagnosis.category", d.category],
    ["Group (WHO block)", "diagnosis.group", d.group],
  ];

  return (
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
      <p className="muted">
        Agreement between the two primary annotations of each case, before adjudication (docs/statistics.md). Annotator A and B are
        each case's anonymised annotators. The same report:{" "}
        <code>npm run concord -- stats --study "{report.study.name}"</code>.
      </p>
      {report.notes.length ? (
        <div className="notice warn" role="status">
          {report.notes.map((n) => (
            <p key={n} style={{ margin: 0 }}>
              {n}
            </p>
          ))}
        </div>
      ) : null}

      <h2>Cases</h2>
      <Pair>
        <CountTable
          head={["State", "Cases"]}
          rows={[
            ["All cases", c.n_cases],
            ["No annotation submitted", c.annotations_in.none],
            ["One annotation submitted", c.annotations_in.one],
            ["Both annotations in", c.annotations_in.both],
            ["Agreed", c.outcomes.agreed],
            ["Disputed, awaiting adjudication", c.outcomes.disputed],
            ["Adjudicated", c.outcomes.adjudicated],
            ["Disputed on sufficiency (incl. adjudicated)", c.disputes_by_reason.sufficiency],
            ["Disputed on diagnosis (incl. adjudicated)", c.disputes_by_reason.diagnosis],
            ["With a gold label", c.with_gold],
          ]}
        />
        <Chart chart={byId.get("case-states")} base={base} />
      </Pair>

      <h2>Sufficiency</h2>
      <p>{s.n} case(s) with both primary annotations.</p>
      <Pair>
        <div>
          <table data-testid="sufficiency-matrix">
            <thead>
              <tr>
                <th>A \ B</th>
                {s.categories.map((k) => (
                  <th key={k} className="num">
                    {k}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {s.categories.map((k, i) => (
                <tr key={k}>
                  <th scope="row">{k}</th>
                  {s.matrix[i].map((n, j) => (
                    <td key={j} className="num">
                      {n}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
          <table data-testid="sufficiency-stats">
            <thead>
              <tr>
                <th>Statistic</th>
                <th className="num">Value</th>
                <th className="num">SE</th>
                <th className="num">95% CI</th>
              </tr>
            </thead>
            <tbody>
              <tr>
                <td>Percent agreement</td>
                <td className="num">
                  <Value
                    text={`${percent(s.percent_agreement)} (${s.n_agreed}/${s.n})`}
                    path="sufficiency.percent_agreement"
                    reasons={reasons}
                  />
                </td>
                <td />
                <td />
              </tr>
              <tr>
                <td>Cohen's κ</td>
                <td className="num">
                  <Value text={fixed3(s.cohen_kappa)} path="sufficiency.cohen_kappa" reasons={reasons} />
                </td>
                <td />
                <td />
              </tr>
              <tr>
                <td>Gwet's AC1</td>
                <Interval e={s.gwet_ac1} path="sufficiency.gwet_ac1" reasons={reasons} />
              </tr>
            </tbody>
          </table>
        </div>
        <Chart chart={byId.get("sufficiency-matrix")} base={base} />
      </Pair>

      <h2>Earliest sufficient section</h2>
      <p>
        {e.n} case(s) both annotators called sufficient; ordinal scale 1..{e.sections.length}.
      </p>
      <Pair>
        <div>
          <table data-testid="earliest-stats">
            <thead>
              <tr>
                <th>Statistic</th>
                <th className="num">Value</th>
                <th className="num">SE</th>
                <th className="num">95% CI</th>
              </tr>
            </thead>
            <tbody>
              <tr>
                <td>Exact agreement</td>
                <td className="num">
                  <Value
                    text={`${percent(e.exact_agreement)} (${e.n_exact}/${e.n})`}
                    path="earliest_section.exact_agreement"
                    reasons={reasons}
                  />
                </td>
                <td />
                <td />
              </tr>
              <tr>
                <td>Mean |A − B| (sections)</td>
                <td className="num">
                  <Value
                    text={fixed3(e.mean_absolute_difference)}
                    path="earliest_section.mean_absolute_difference"
                    reasons={reasons}
                  />
                </td>
                <td />
                <td />
              </tr>
              {(["linear", "quadratic"] as const).flatMap((w) => [
                <tr key={`k-${w}`}>
                  <td>Cohen's weighted κ ({w})</td>
                  <td className="num">
                    <Value
                      text={fixed3(e.weighted[w].cohen_kappa_weighted)}
                      path={`earliest_section.weighted.${w}.cohen_kappa_weighted`}
                      reasons={reasons}
                    />
                  </td>
                  <td />
                  <td />
                </tr>,
                <tr key={`ac2-${w}`}>
                  <td>Gwet's AC2 ({w})</td>
                  <Interval
                    e={e.weighted[w].gwet_ac2}
                    path={`earliest_section.weighted.${w}.gwet_ac2`}
                    reasons={reasons}
                  />
                </tr>,
              ])}
            </tbody>
          </table>
          <table>
            <thead>
              <tr>
                <th>|A − B| (sections)</th>
                <th className="num">Cases</th>
                <th className="num">Share</th>
              </tr>
            </thead>
            <tbody>
              {e.differences.map((x) => (
                <tr key={x.difference}>
                  <td>{x.difference}</td>
                  <td className="num">{x.n}</td>
                  <td className="num">{percent(x.share)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <div>
          <Chart chart={byId.get("earliest-section-differences")} base={base} />
          <Chart chart={byId.get("earliest-section-matrix")} base={base} />
        </div>
      </Pair>
      <Chart chart={byId.get("earliest-section-agreement")} base={base} />

      <h2>Diagnosis</h2>
      <p>{d.n} case(s) both annotators called sufficient, compared at three levels of ICD-10 (docs/icd10.md).</p>
      <table data-testid="diagnosis-levels">
        <thead>
          <tr>
            <th>Level</th>
            <th className="num">n</th>
            <th className="num">Categories</th>
            <th className="num">Percent agreement</th>
            <th className="num">Cohen's κ</th>
            <th className="num">Gwet's AC1</th>
            <th className="num">SE</th>
            <th className="num">95% CI</th>
          </tr>
        </thead>
        <tbody>
          {levels.map(([name, path, x]) => (
            <tr key={path}>
              <td>{name}</td>
              <td className="num">{x.n}</td>
              <td className="num">{x.n_categories}</td>
              <td className="num">
                <Value
                  text={`${percent(x.percent_agreement)} (${x.n_agreed}/${x.n})`}
                  path={`${path}.percent_agreement`}
                  reasons={reasons}
                />
              </td>
              <td className="num">
                <Value text={fixed3(x.cohen_kappa)} path={`${path}.cohen_kappa`} reasons={reasons} />
              </td>
              <Interval e={x.gwet_ac1} path={`${path}.gwet_ac1`} reasons={reasons} />
            </tr>
          ))}
        </tbody>
      </table>
      <Chart chart={byId.get("agreement-coefficients")} base={base} />

      <h2>Per diagnosis</h2>
      <p>
        {p.source === null
          ? "No case has both a gold diagnosis and annotator labels yet."
          : `The ${p.rows.length} most frequent of ${p.n_categories} gold categories; ` +
            (p.source === "reference_labels"
              ? "agreement from the imported dataset's agreement flags."
              : "agreement between the two annotators on the cases with that gold category.")}
      </p>
      <DataTable
        data={p.rows}
        columns={columns}
        rowProps={(r) => ({ "data-category": r.category })}
        empty="No gold diagnoses yet."
      />
      <Chart chart={byId.get("per-diagnosis")} base={base} />

      <h2>Expert action labels by section</h2>
      <p>
        {source} Each case's last section is in the Final column, so notes of 3, 4 and 5 sections end together (INTEROP
        §4.6).
      </p>
      <Pair>
        <table data-testid="action-labels">
          <thead>
            <tr>
              <th>Section</th>
              <th className="num">Clarify</th>
              <th className="num">Diagnose</th>
              <th className="num">Abstain</th>
              <th className="num">Total</th>
            </tr>
          </thead>
          <tbody>
            {l.action_labels.rows.map((r) => (
              <tr key={r.column}>
                <td>{r.column}</td>
                <td className="num">{r.clarify}</td>
                <td className="num">{r.diagnose}</td>
                <td className="num">{r.abstain}</td>
                <td className="num">{r.total}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <Chart chart={byId.get("action-labels")} base={base} />
      </Pair>

      <h2>Gold labels</h2>
      <p>
        {source} {l.sufficiency.sufficient} sufficient, {l.sufficiency.insufficient} insufficient.
      </p>
      <Pair>
        <CountTable head={["ICD-10 code", "Cases"]} rows={l.icd10_codes.map((r) => [r.code, r.n])} />
        <Chart chart={byId.get("icd10-codes")} base={base} />
      </Pair>
      <Pair>
        <CountTable head={["WHO block", "Cases"]} rows={l.icd10_groups.map((r) => [r.group, r.n])} />
        <Chart chart={byId.get("icd10-groups")} base={base} />
      </Pair>
      <Pair>
        <CountTable
          head={["Category", "Cases"]}
          rows={l.icd10_categories.map((r) => [r.title ? `${r.category} ${r.title}` : r.category, r.n])}
        />
        <CountTable
          head={["Missing information (insufficient)", "Cases"]}
          rows={l.missing_info.map((r) => [MISSING_LABEL.get(r.key) ?? r.key, r.n])}
        />
      </Pair>

      <h2>Cases by age group and number of sections</h2>
      <Pair>
        <div>
          <CountTable head={["Age group", "Cases"]} rows={l.age_groups.map((r) => [r.age_group, r.n])} />
          <CountTable head={["Sections", "Cases"]} rows={l.section_counts.map((r) => [String(r.sections), r.n])} />
        </div>
        <Chart chart={byId.get("age-groups")} base={base} />
      </Pair>

      {report.reference_agreement ? (
        <>
          <h2>Imported agreement flags</h2>
          <p>
            {report.reference_agreement.n} case(s) carry the imported dataset's agreement flags: percent agreement only
            (the file has no annotator labels).
          </p>
          <CountTable
            head={["Flag", "Agreed"]}
            rows={[
              [
                `diagnosis_sufficiency_agreement (${percent(
                  report.reference_agreement.sufficiency.percent_agreement,
                )} of ${report.reference_agreement.sufficiency.n})`,
                report.reference_agreement.sufficiency.n_agreed,
              ],
              [
                `diagnosis_agreement (${percent(report.reference_agreement.diagnosis.percent_agreement)} of ${
                  report.reference_agreement.diagnosis.n
                })`,
                report.reference_agreement.diagnosis.n_agreed,
              ],
            ]}
          />
        </>
      ) : null}
    </section>
  );
}
