/**
 * The figures of screening rounds as the admin pages show them (docs/screening.md): counts, AC1 with its interval, the
 * control-inclusion rate and the stop/continue decision. Presentation only; the numbers come from the server.
 */
import { Link } from "@remix-run/react";

export interface CoefficientView {
  value: number | null;
  se: number | null;
  ci95: [number, number] | null;
  reason: string | null;
}

export interface RoundSummaryView {
  number: number;
  kind: "screen" | "recall";
  seed: number;
  status: "open" | "closed";
  rule: { reviewersPerRound: number; inclusionVotes: number; controlThreshold: number };
  reviewers: { code: string; username: string; submitted: number }[];
  figures: {
    items: number;
    candidates: number;
    controls: number;
    votesExpected: number;
    votesIn: number;
    complete: boolean;
    included: number;
    includedCandidates: number;
    includedControls: number;
    byStratum: { stratum: string; isControl: boolean; n: number; included: number }[];
    controlInclusionRate: number | null;
    decision: "stop" | "continue" | null;
    relevanceAc1: CoefficientView;
    percentAgreement: number | null;
  };
  pairwise: { reviewers: [string, string]; nItems: number; ac1: CoefficientView; percentAgreement: number | null }[];
}

export const percent = (x: number | null, digits = 1) => (x === null ? "—" : `${(100 * x).toFixed(digits)}%`);

export function Ac1({ c }: { c: CoefficientView }) {
  if (c.value === null) return <span title={c.reason ?? undefined}>—</span>;
  return (
    <span title={c.se !== null ? `SE ${c.se.toFixed(3)}` : (c.reason ?? undefined)}>
      {c.value.toFixed(2)}
      {c.ci95 ? (
        <small className="muted">
          {" "}
          [{c.ci95[0].toFixed(2)}, {c.ci95[1].toFixed(2)}]
        </small>
      ) : null}
    </span>
  );
}

export function DecisionBadge({ round }: { round: RoundSummaryView }) {
  const f = round.figures;
  if (!f.complete || f.decision === null)
    return (
      <span className="badge draft">
        in review ({f.votesIn} of {f.votesExpected} votes)
      </span>
    );
  const threshold = percent(round.rule.controlThreshold);
  const rate = percent(f.controlInclusionRate);
  return f.decision === "continue" ? (
    <span
      className="badge draft"
      data-decision="continue"
      title={`${rate} > ${threshold}: a recall round is due`}
      style={{ whiteSpace: "nowrap" }}
    >
      continue (&gt; {threshold})
    </span>
  ) : (
    <span
      className="badge locked"
      data-decision="stop"
      title={`${rate} ≤ ${threshold}: the included set is final`}
      style={{ whiteSpace: "nowrap" }}
    >
      stop (≤ {threshold})
    </span>
  );
}

const STRATUM_NAMES: Record<string, string> = {
  relevant: "relevant",
  borderline: "borderline",
  not_relevant: "not relevant (controls)",
  clear: "clear",
  possible: "possible",
  no: "no (controls)",
};

/** One row per round: what the HealthBench-Psych paper reports for each round. */
export function RoundsTable({ rounds, studyId }: { rounds: RoundSummaryView[]; studyId: number }) {
  return (
    <table data-testid="rounds">
      <thead>
        <tr>
          <th>Round</th>
          <th className="num">Seed</th>
          <th>Reviewed (included / n)</th>
          <th className="num">Control-inclusion rate</th>
          <th>Relevance AC1 [95% CI]</th>
          <th className="num">Included</th>
          <th>Decision</th>
        </tr>
      </thead>
      <tbody>
        {rounds.map((r) => {
          // While votes are missing the figures are partial: show the round's size, not its outcome.
          const done = r.figures.complete;
          return (
            <tr key={r.number} data-round={r.number}>
              <td>
                <Link to={`/admin/screening/${studyId}/rounds/${r.number}`}>
                  {r.number} ({r.kind})
                </Link>
              </td>
              <td className="num">{r.seed}</td>
              <td>
                {r.figures.byStratum.map((s) => (
                  <div key={`${s.isControl}:${s.stratum}`}>
                    {STRATUM_NAMES[s.stratum] ?? s.stratum}: {done ? `${s.included} / ${s.n}` : s.n}
                  </div>
                ))}
              </td>
              <td className="num">
                {done ? (
                  <>
                    {r.figures.includedControls} / {r.figures.controls} ={" "}
                    <span data-testid={`rate-${r.number}`}>{percent(r.figures.controlInclusionRate)}</span>
                  </>
                ) : (
                  "—"
                )}
              </td>
              <td>{done ? <Ac1 c={r.figures.relevanceAc1} /> : "—"}</td>
              <td className="num">{done ? r.figures.included : "—"}</td>
              <td data-testid={`decision-${r.number}`}>
                <DecisionBadge round={r} />
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

export function PairwiseTable({ round }: { round: RoundSummaryView }) {
  return (
    <table>
      <thead>
        <tr>
          <th>Reviewer pair</th>
          <th className="num">Items</th>
          <th className="num">Agreement</th>
          <th>AC1 [95% CI]</th>
        </tr>
      </thead>
      <tbody>
        {round.pairwise.map((p) => (
          <tr key={p.reviewers.join("-")}>
            <td>
              {p.reviewers[0]} – {p.reviewers[1]}
            </td>
            <td className="num">{p.nItems}</td>
            <td className="num">{percent(p.percentAgreement)}</td>
            <td>
              <Ac1 c={p.ac1} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
