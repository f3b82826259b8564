/** Table 1 of a rubric-graded evaluation: rank, candidate, panel mean with its 95% CI, each judge's score. */
import type { Evaluation } from "../domain/evaluation";

const f = (x: number | null | undefined) => (x === null || x === undefined ? "—" : x.toFixed(3));

export function TableOne({ evaluation, judges }: { evaluation: Evaluation; judges: string[] }) {
  return (
    <table data-table="table-1">
      <thead>
        <tr>
          <th className="num">Rank</th>
          <th>Candidate</th>
          <th className="num">Panel</th>
          <th className="num">95% CI</th>
          {judges.map((j) => (
            <th key={j} className="num">
              {j}
            </th>
          ))}
          <th className="num">n</th>
          <th className="num">Refusals</th>
        </tr>
      </thead>
      <tbody>
        {evaluation.table.map((r) => (
          <tr key={r.candidate} data-candidate={r.candidate}>
            <td className="num">{r.rank}</td>
            <td>{r.candidate}</td>
            <td className="num">{f(r.panel?.mean)}</td>
            <td className="num">{r.panel ? `${f(r.panel.ci95[0])}–${f(r.panel.ci95[1])}` : "—"}</td>
            {judges.map((j) => (
              <td key={j} className="num">
                {f(r.judges[j]?.mean)}
              </td>
            ))}
            <td className="num">{r.conversations}</td>
            <td className="num">{r.refusals}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function JudgeAgreement({ evaluation }: { evaluation: Evaluation }) {
  const a = evaluation.agreement;
  return (
    <div className="card">
      <h3>Judge agreement</h3>
      <table>
        <thead>
          <tr>
            <th>Judges</th>
            <th className="num">Kendall τ-b</th>
          </tr>
        </thead>
        <tbody>
          {a.kendall.map((k) => (
            <tr key={`${k.a}|${k.b}`}>
              <td>
                {k.a} · {k.b}
              </td>
              <td className="num">{f(k.tau)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="muted">Grand mean {f(a.grandMean)}</p>
      <table>
        <thead>
          <tr>
            <th>Judge</th>
            <th className="num">Mean</th>
            <th className="num">Severity</th>
            <th>Self-preference (raw / corrected)</th>
          </tr>
        </thead>
        <tbody>
          {a.judges.map((j) => {
            const s = a.selfPreference.find((x) => x.judge === j.judge);
            return (
              <tr key={j.judge}>
                <td>{j.judge}</td>
                <td className="num">{f(j.mean)}</td>
                <td className="num">
                  {j.severity >= 0 ? "+" : ""}
                  {f(j.severity)}
                </td>
                <td>{s ? `${s.candidate}: ${f(s.raw)} / ${f(s.corrected)}` : "—"}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

export function PairedComparisons({ evaluation }: { evaluation: Evaluation }) {
  if (evaluation.paired.length === 0) return null;
  return (
    <table data-table="paired">
      <thead>
        <tr>
          <th>Pair</th>
          <th className="num">Difference</th>
          <th className="num">95% CI</th>
          <th className="num">p</th>
          <th className="num">p (Holm)</th>
          <th>Separates at 95%</th>
        </tr>
      </thead>
      <tbody>
        {evaluation.paired.map((p) => (
          <tr key={`${p.a}|${p.b}`}>
            <td>
              {p.a} − {p.b}
            </td>
            <td className="num">{f(p.difference)}</td>
            <td className="num">
              {f(p.ci95[0])}–{f(p.ci95[1])}
            </td>
            <td className="num">{f(p.p)}</td>
            <td className="num">{f(p.pHolm)}</td>
            <td>{p.significantHolm ? "yes (Holm)" : p.significant ? "uncorrected only" : "no"}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
