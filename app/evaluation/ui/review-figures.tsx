/**
 * What the clinicians' review says of the failures (docs/evaluation.md, "Clinician review of model steps"): per
 * review, failure and model, "of N reviewed, K judged defensible (x%)", and the reviewers' agreement. Shown on the
 * evaluation page beside the metrics and on the reviews page.
 */
import type { DefensibleRow, ReviewAgreement } from "../domain/model-review";
import { FAILURE_LABELS, type FailureFilter } from "../domain/failures";

const pct = (x: number | null) => (x === null ? "—" : `${(100 * x).toFixed(1)}%`);
const coef = (x: number | null) => (x === null ? "—" : x.toFixed(3));

export function failureWords(failure: FailureFilter | "any"): string {
  return failure === "any" ? "Any step sent" : FAILURE_LABELS[failure];
}

/** One review's figures: a row per failure and model ("all models" first within each failure). */
export function DefensibleTable({ name, rows }: { name: string; rows: readonly DefensibleRow[] }) {
  const shown = [...rows].sort((a, b) =>
    a.failure === b.failure ? (a.model === "" ? -1 : b.model === "" ? 1 : 0) : 0,
  );
  return (
    <div className="table-scroll">
      <p className="muted">Review “{name}”: steps judged clinically defensible</p>
      <table data-testid="review-figures" data-review={name}>
        <thead>
          <tr>
            <th>Failure</th>
            <th>Model</th>
            <th>Reviewed</th>
            <th>Judged defensible</th>
            <th>Reviewers split</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((r) => (
            <tr key={`${r.failure}:${r.model}`} data-failure={r.failure} data-model={r.model || "all"}>
              <td>{failureWords(r.failure)}</td>
              <td>{r.model || <em>all models</em>}</td>
              <td>{r.reviewed}</td>
              <td data-testid="defensible">
                {r.reviewed ? `${r.defensible} of ${r.reviewed} (${pct(r.share)})` : "—"}
              </td>
              <td>{r.split}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The reviewers' agreement on the steps two of them submitted. */
export function AgreementLine({ agreement: a }: { agreement: ReviewAgreement }) {
  return (
    <p data-testid="review-agreement">
      {a.items === 0 ? (
        <span className="muted">Agreement: {a.kappaReason}.</span>
      ) : (
        <>
          Agreement on {a.items} step{a.items === 1 ? "" : "s"} reviewed twice: {pct(a.percentAgreement)} agree,
          Gwet&apos;s AC1 {coef(a.ac1)}, Cohen&apos;s κ {a.kappa === null ? `— (${a.kappaReason})` : coef(a.kappa)}.
        </>
      )}
    </p>
  );
}
