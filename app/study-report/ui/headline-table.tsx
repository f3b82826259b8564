/**
 * The figures a paper prints, per field, in one short table at the top of the statistics and rater-quality pages
 * (docs/statistics.md, "The study agreement report"): n, percent agreement, Cohen's κ and Gwet's AC1, each with its
 * 95% interval; the earliest section with its linear weights (exact agreement, weighted κ, AC2). A figure that is n/a
 * refers to the page's note that says why, once.
 */
import type {
  DiagnosisAgreement,
  EarliestSectionAgreement,
  SufficiencyAgreement,
} from "~/study-report/domain/study-report";
import { fixed3, percent } from "~/study-report/domain/study-report-format";
import { Value } from "./report-parts";

export interface HeadlineFigures {
  sufficiency: SufficiencyAgreement;
  diagnosis: DiagnosisAgreement;
  earliest_section: EarliestSectionAgreement;
  reasons: Record<string, string>;
}

type Ci = [number, number] | null | undefined;

const interval = (ci: Ci, format: (v: number) => string) =>
  ci ? (
    <small className="muted ci">
      {" "}
      [{format(ci[0])}, {format(ci[1])}]
    </small>
  ) : null;

const pct = (v: number) => percent(v);
const coef = (v: number) => fixed3(v);

function Cell(props: {
  value: number | null;
  ci: Ci;
  path: string;
  reasons: Record<string, string>;
  format: (v: number) => string;
}) {
  return (
    <td className="num">
      <Value
        text={props.value === null ? "n/a" : props.format(props.value)}
        path={props.path}
        reasons={props.reasons}
      />
      {props.value === null ? null : props.ci ? (
        interval(props.ci, props.format)
      ) : (
        // A value without an interval refers to the note saying why (e.g. a single item), when the report has one.
        <Value text="" path={`${props.path}.se`} reasons={props.reasons} />
      )}
    </td>
  );
}

interface Row {
  field: string;
  n: number;
  percent: [number | null, Ci, string];
  kappa: [number | null, Ci, string];
  ac1: [number | null, Ci, string];
}

/** The rows of the table, one per field; exported for the page tests. */
export function headlineRows(f: HeadlineFigures, fields: { sufficiency: string }): Row[] {
  const s = f.sufficiency;
  const level = (name: string, key: "diagnosis_level" | "category" | "group"): Row => {
    const l = f.diagnosis[key];
    const path = `diagnosis.${key}`;
    return {
      field: name,
      n: l.n,
      percent: [l.percent_agreement, l.percent_agreement_ci95, `${path}.percent_agreement`],
      kappa: [l.cohen_kappa, l.cohen_kappa_ci95, `${path}.cohen_kappa`],
      ac1: [l.gwet_ac1.value, l.gwet_ac1.ci95, `${path}.gwet_ac1`],
    };
  };
  const e = f.earliest_section;
  const linear = e.weighted.linear;
  return [
    {
      field: fields.sufficiency,
      n: s.n,
      percent: [s.percent_agreement, s.percent_agreement_ci95, "sufficiency.percent_agreement"],
      kappa: [s.cohen_kappa, s.cohen_kappa_ci95, "sufficiency.cohen_kappa"],
      ac1: [s.gwet_ac1.value, s.gwet_ac1.ci95, "sufficiency.gwet_ac1"],
    },
    level("Diagnosis (code)", "diagnosis_level"),
    level("Diagnosis category (3 characters)", "category"),
    level("Diagnosis block (WHO group)", "group"),
    {
      field: "Earliest sufficient section (linear weights: weighted κ, AC2)",
      n: e.n,
      percent: [e.exact_agreement, e.exact_agreement_ci95, "earliest_section.exact_agreement"],
      kappa: [
        linear.cohen_kappa_weighted,
        linear.cohen_kappa_weighted_ci95,
        "earliest_section.weighted.linear.cohen_kappa_weighted",
      ],
      ac1: [linear.gwet_ac2.value, linear.gwet_ac2.ci95, "earliest_section.weighted.linear.gwet_ac2"],
    },
  ];
}

export function HeadlineTable({
  figures,
  caption,
  sufficiencyField = "Sufficiency",
}: {
  figures: HeadlineFigures;
  caption: string;
  sufficiencyField?: string;
}) {
  const { reasons } = figures;
  return (
    <div className="table-scroll">
      <table data-testid="headline-table" className="headline">
        <caption
          className="muted"
          style={{ textAlign: "left", captionSide: "bottom", paddingTop: "0.3rem", fontWeight: 400 }}
        >
          <small>{caption}</small>
        </caption>
        <thead>
          <tr>
            <th>Field</th>
            <th className="num">n</th>
            <th className="num">% agreement [95% CI]</th>
            <th className="num">Cohen&apos;s κ [95% CI]</th>
            <th className="num">Gwet&apos;s AC1 [95% CI]</th>
          </tr>
        </thead>
        <tbody>
          {headlineRows(figures, { sufficiency: sufficiencyField }).map((r) => (
            <tr key={r.field}>
              <th scope="row" style={{ whiteSpace: "normal", fontWeight: 500 }}>
                {r.field}
              </th>
              <td className="num">{r.n}</td>
              <Cell value={r.percent[0]} ci={r.percent[1]} path={r.percent[2]} reasons={reasons} format={pct} />
              <Cell value={r.kappa[0]} ci={r.kappa[1]} path={r.kappa[2]} reasons={reasons} format={coef} />
              <Cell value={r.ac1[0]} ci={r.ac1[1]} path={r.ac1[2]} reasons={reasons} format={coef} />
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
