/** The study report page's sections on the gold labels: per diagnosis, action labels, distributions. */
import { useMemo } from "react";
import { columnHelper, DataTable } from "~/ui/data-table";
import { MISSING_INFO, REFERENCE_NAMES } from "~/labels/labels";
import type { PerDiagnosisRow, StudyReport } from "~/study-report/domain/study-report";
import { percent } from "~/study-report/domain/study-report-format";
import { Chart, CountTable, Pair } from "./report-parts";
import type { SectionProps } from "./agreement-sections";

const col = columnHelper<PerDiagnosisRow>();
const MISSING_LABEL = new Map<string, string>(MISSING_INFO.map((m) => [m.key, m.label]));

/** Which gold labels the distributions count, in words. */
function goldSource(l: StudyReport["label_distributions"]): string {
  const sourceParts = [
    l.source.agreed ? `${l.source.agreed} agreed` : "",
    l.source.adjudicated ? `${l.source.adjudicated} adjudicated` : "",
    l.source.reference ? `${l.source.reference} imported reference` : "",
  ].filter(Boolean);
  return sourceParts.length ? `Gold labels of ${sourceParts.join(", ")} case(s).` : "No gold labels yet.";
}

function usePerDiagnosisColumns() {
  return useMemo(
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
}

/** Agreement per gold diagnosis, most frequent first. */
export function PerDiagnosisSection({ charts, base, report }: SectionProps) {
  const p = report.per_diagnosis;
  const columns = usePerDiagnosisColumns();
  return (
    <>
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
      <Chart chart={charts.get("per-diagnosis")} base={base} />
    </>
  );
}

/** The experts' action labels by section. */
export function ActionLabelsSection({ charts, base, report }: SectionProps) {
  const l = report.label_distributions;
  const source = goldSource(report.label_distributions);
  return (
    <>
      <p>{source} Each case's last section is in the Final column, so notes of 3, 4 and 5 sections end together.</p>
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
        <Chart chart={charts.get("action-labels")} base={base} />
      </Pair>
    </>
  );
}

/** The gold labels' codes, blocks, categories and missing information. */
export function GoldLabelsSection({ charts, base, report }: SectionProps) {
  const l = report.label_distributions;
  const source = goldSource(report.label_distributions);
  return (
    <>
      <p>
        {source} {l.sufficiency.sufficient} sufficient, {l.sufficiency.insufficient} insufficient.
      </p>
      <Pair>
        <CountTable head={["ICD-10 code", "Cases"]} rows={l.icd10_codes.map((r) => [r.code, r.n])} />
        <Chart chart={charts.get("icd10-codes")} base={base} />
      </Pair>
      <Pair>
        <CountTable head={["WHO block", "Cases"]} rows={l.icd10_groups.map((r) => [r.group, r.n])} />
        <Chart chart={charts.get("icd10-groups")} base={base} />
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
    </>
  );
}

/** Cases by age group and number of sections. */
export function CaseMixSection({ charts, base, report }: SectionProps) {
  const l = report.label_distributions;
  return (
    <>
      <Pair>
        <div>
          <CountTable head={["Age group", "Cases"]} rows={l.age_groups.map((r) => [r.age_group, r.n])} />
          <CountTable head={["Sections", "Cases"]} rows={l.section_counts.map((r) => [String(r.sections), r.n])} />
        </div>
        <Chart chart={charts.get("age-groups")} base={base} />
      </Pair>
    </>
  );
}

/** The agreement flags imported with a reference dataset, when there are any. */
export function ReferenceFlagsSection({ report }: { report: StudyReport }) {
  return (
    <>
      {report.reference_agreement ? (
        <>
          <p>
            {report.reference_agreement.n} case(s) carry the imported dataset's agreement flags: percent agreement only
            (the file has no annotator labels).
          </p>
          <CountTable
            head={["Flag", "Agreed"]}
            rows={[
              [
                `${REFERENCE_NAMES.sufficiencyAgreement} (${percent(
                  report.reference_agreement.sufficiency.percent_agreement,
                )} of ${report.reference_agreement.sufficiency.n})`,
                report.reference_agreement.sufficiency.n_agreed,
              ],
              [
                `${REFERENCE_NAMES.diagnosisAgreement} (${percent(report.reference_agreement.diagnosis.percent_agreement)} of ${
                  report.reference_agreement.diagnosis.n
                })`,
                report.reference_agreement.diagnosis.n_agreed,
              ],
            ]}
          />
        </>
      ) : null}
    </>
  );
}
