/** The parts of a judge-validation report page: the human raters' consistency, one judge's scores, the majorities. */
import { JUDGE_PREFIX, TASKS, type JudgeReport, type JudgeScores } from "~/judge-validation/domain/judge-report";

export const fmt = (v: number | null | undefined) => (v === null || v === undefined ? "—" : v.toFixed(3));

/** Each rater's macro-F1 against the others' majority, and Fleiss' κ across raters. */
export function HumanConsistency({ report }: { report: JudgeReport }) {
  const humans = Object.keys(report.humans);
  return (
    <>
      <table data-testid="humans">
        <thead>
          <tr>
            <th>Rater</th>
            <th className="num">Macro-F1 vs majority</th>
            <th className="num">n</th>
          </tr>
        </thead>
        <tbody>
          {humans.map((h) => (
            <tr key={h} data-rater={h}>
              <td>{h}</td>
              <td className="num">{fmt(report.humans[h].macro_f1)}</td>
              <td className="num">{report.humans[h].n}</td>
            </tr>
          ))}
          <tr>
            <th>Mean</th>
            <th className="num" data-testid="human-f1-mean">
              {fmt(report.human_macro_f1_mean)}
            </th>
            <th />
          </tr>
        </tbody>
      </table>
      <p>
        Fleiss' κ across raters: <strong data-testid="human-fleiss">{fmt(report.human_fleiss_kappa)}</strong>{" "}
        <span className="muted">({report.human_fleiss_n} responses with every rater's action)</span>
      </p>
    </>
  );
}

/** One candidate judge's scores per task and label, and its confusion matrix. */
export function JudgeDetails({ j, s, open }: { j: string; s: JudgeScores; open: boolean }) {
  const labels = Object.keys(s.confusion);
  return (
    <details className="card" open={open}>
      <summary>
        <strong>{j}</strong>: per task, per label, confusion
      </summary>
      <table>
        <thead>
          <tr>
            <th>Task</th>
            <th className="num">n</th>
            <th className="num">Accuracy</th>
            <th className="num">Balanced acc.</th>
            <th className="num">Macro-F1</th>
            <th className="num">Weighted F1</th>
            <th className="num">Cohen's κ</th>
            <th className="num">Fleiss' κ consensus+judge</th>
            <th className="num">Fleiss' κ humans+judge</th>
            <th className="num">n Fleiss</th>
          </tr>
        </thead>
        <tbody>
          {TASKS.map((t) => {
            const x = s.tasks[t];
            return (
              <tr key={t}>
                <td>{t}</td>
                <td className="num">{x.n}</td>
                <td className="num">{fmt(x.accuracy)}</td>
                <td className="num">{fmt(x.balanced_accuracy)}</td>
                <td className="num">{fmt(x.macro_f1)}</td>
                <td className="num">{fmt(x.weighted_f1)}</td>
                <td className="num">{fmt(x.cohen_kappa)}</td>
                <td className="num">{fmt(x.fleiss_kappa_consensus_judge)}</td>
                <td className="num">{fmt(x.fleiss_kappa_humans_plus_judge)}</td>
                <td className="num">{x.n_fleiss}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {labels.length ? (
        <div className="grid2">
          <table>
            <thead>
              <tr>
                <th>Action</th>
                <th className="num">Precision</th>
                <th className="num">Recall</th>
              </tr>
            </thead>
            <tbody>
              {labels.map((l) => (
                <tr key={l}>
                  <td>{l}</td>
                  <td className="num">{fmt(s.precision[l])}</td>
                  <td className="num">{fmt(s.recall[l])}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <table aria-label={`Confusion matrix of ${j}`}>
            <thead>
              <tr>
                <th>majority ↓ / judge →</th>
                {labels.map((l) => (
                  <th key={l} className="num">
                    {l}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {labels.map((t) => (
                <tr key={t}>
                  <th>{t}</th>
                  {labels.map((p) => (
                    <td key={p} className="num">
                      {s.confusion[t][p]}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </details>
  );
}

/** Per response, the majority action beside every rater's and judge's action. */
export function MajorityTable({
  report,
  byResponse,
}: {
  report: JudgeReport;
  byResponse: Record<string, Record<string, string | null>>;
}) {
  const judges = Object.keys(report.judges);
  const responses = Object.keys(report.majority);
  return (
    <table data-testid="majority">
      <thead>
        <tr>
          <th>Response</th>
          <th>Majority action</th>
          <th>Raters' actions</th>
          {judges.map((j) => (
            <th key={j}>{j}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {responses.map((r) => {
          const actions = byResponse[r] ?? {};
          const human = Object.entries(actions).filter(([name]) => !name.startsWith(JUDGE_PREFIX));
          return (
            <tr key={r} data-response={r}>
              <td>{r}</td>
              <td data-testid="majority-action">
                {report.majority[r] ?? (report.ties.includes(r) ? <em>tie</em> : <em className="muted">too few</em>)}
              </td>
              <td>{human.map(([name, a]) => `${name}: ${a ?? "—"}`).join(", ")}</td>
              {judges.map((j) => (
                <td key={j}>{actions[JUDGE_PREFIX + j] ?? "—"}</td>
              ))}
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
