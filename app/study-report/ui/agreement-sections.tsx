/** The study report page's agreement sections: the two primary annotations of each case compared. */
import type { ReactNode } from "react";
import type { LevelAgreement, StudyReport } from "~/study-report/domain/study-report";
import { fixed3, percent } from "~/study-report/domain/study-report-format";
import { Chart, CountTable, Interval, Pair, Value, type ChartOnPage } from "./report-parts";

export interface SectionProps {
  report: StudyReport;
  /** The report's charts by id. */
  charts: ReadonlyMap<string, ChartOnPage>;
  /** The stats page's URL, under which the downloads live. */
  base: string;
}

/** A table of statistics: value, standard error and 95% interval (the last two empty for a point statistic). */
function StatsTable({ testId, children }: { testId: string; children: ReactNode }) {
  return (
    <table data-testid={testId}>
      <thead>
        <tr>
          <th>Statistic</th>
          <th className="num">Value</th>
          <th className="num">SE</th>
          <th className="num">95% CI</th>
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}

/** A statistic without an interval (a share, a κ): its value, with the reason when it is undefined. */
function PointRow(props: { label: string; text: string; path: string; reasons: Record<string, string> }) {
  return (
    <tr>
      <td>{props.label}</td>
      <td className="num">
        <Value text={props.text} path={props.path} reasons={props.reasons} />
      </td>
      <td />
      <td />
    </tr>
  );
}

/** Cases by state, from no annotation to a gold label. */
export function CaseCountsSection({ charts, base, report }: SectionProps) {
  const c = report.case_counts;
  return (
    <>
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
        <Chart chart={charts.get("case-states")} base={base} />
      </Pair>
    </>
  );
}

/** Sufficiency: the A × B matrix and its agreement statistics. */
export function SufficiencySection({ charts, base, report }: SectionProps) {
  const { reasons } = report;
  const s = report.sufficiency;
  return (
    <>
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
          <StatsTable testId="sufficiency-stats">
            <PointRow
              label="Percent agreement"
              text={`${percent(s.percent_agreement)} (${s.n_agreed}/${s.n})`}
              path="sufficiency.percent_agreement"
              reasons={reasons}
            />
            <PointRow label="Cohen's κ" text={fixed3(s.cohen_kappa)} path="sufficiency.cohen_kappa" reasons={reasons} />
            <tr>
              <td>Gwet's AC1</td>
              <Interval e={s.gwet_ac1} path="sufficiency.gwet_ac1" reasons={reasons} />
            </tr>
          </StatsTable>
        </div>
        <Chart chart={charts.get("sufficiency-matrix")} base={base} />
      </Pair>
    </>
  );
}

/** The earliest sufficient section, on the cases both annotators called sufficient. */
export function EarliestSectionSection({ charts, base, report }: SectionProps) {
  const { reasons } = report;
  const e = report.earliest_section;
  return (
    <>
      <p>
        {e.n} case(s) both annotators called sufficient; ordinal scale 1..{e.sections.length}.
      </p>
      <Pair>
        <div>
          <StatsTable testId="earliest-stats">
            <PointRow
              label="Exact agreement"
              text={`${percent(e.exact_agreement)} (${e.n_exact}/${e.n})`}
              path="earliest_section.exact_agreement"
              reasons={reasons}
            />
            <PointRow
              label="Mean |A − B| (sections)"
              text={fixed3(e.mean_absolute_difference)}
              path="earliest_section.mean_absolute_difference"
              reasons={reasons}
            />
            {(["linear", "quadratic"] as const).flatMap((w) => [
              <PointRow
                key={`k-${w}`}
                label={`Cohen's weighted κ (${w})`}
                text={fixed3(e.weighted[w].cohen_kappa_weighted)}
                path={`earliest_section.weighted.${w}.cohen_kappa_weighted`}
                reasons={reasons}
              />,
              <tr key={`ac2-${w}`}>
                <td>Gwet's AC2 ({w})</td>
                <Interval
                  e={e.weighted[w].gwet_ac2}
                  path={`earliest_section.weighted.${w}.gwet_ac2`}
                  reasons={reasons}
                />
              </tr>,
            ])}
          </StatsTable>
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
          <Chart chart={charts.get("earliest-section-differences")} base={base} />
          <Chart chart={charts.get("earliest-section-matrix")} base={base} />
        </div>
      </Pair>
      <Chart chart={charts.get("earliest-section-agreement")} base={base} />
    </>
  );
}

/** Diagnosis agreement at three levels of ICD-10. */
export function DiagnosisLevelsSection({ charts, base, report }: SectionProps) {
  const { reasons } = report;
  const d = report.diagnosis;
  const levels: [string, string, LevelAgreement][] = [
    ["Diagnosis level", "diagnosis.diagnosis_level", d.diagnosis_level],
    ["Category (3 characters)", "diagnosis.category", d.category],
    ["Group (WHO block)", "diagnosis.group", d.group],
  ];
  return (
    <>
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
      <Chart chart={charts.get("agreement-coefficients")} base={base} />
    </>
  );
}
