/**
 * The paper's tables on the evaluation page (docs/evaluation.md, "Runs in the app"): each table with its chart (a
 * server-rendered SVG) and its CSV download, in the mode asked for.
 */
import type { MetricsTable } from "../domain/metrics-tables";

export function MetricsTables({
  tables,
  mode,
  base,
}: {
  tables: MetricsTable[];
  mode: "paper" | "reference";
  /** The evaluation's files route. */
  base: string;
}) {
  return (
    <>
      {tables.map((t) => (
        <section key={t.id} className="card" data-testid={`table-${t.id}`}>
          <h3>{t.title}</h3>
          {t.rows.length === 0 ? (
            <p className="muted">No run of a strategy this table applies to.</p>
          ) : (
            <>
              <div className="table-scroll">
                <table>
                  <thead>
                    <tr>
                      <th>Model</th>
                      <th>Strategy</th>
                      <th className="num">Seeds</th>
                      {t.columns.map((c) => (
                        <th key={c.key} className="num">
                          {c.label}
                        </th>
                      ))}
                    </tr>
                  </thead>
                  <tbody>
                    {t.rows.map((r) => (
                      <tr key={`${r.model} ${r.strategy}`} data-model={r.model} data-strategy={r.strategy}>
                        <td>{r.model}</td>
                        <td>{r.strategy}</td>
                        <td className="num">{r.seeds}</td>
                        {r.cells.map((_, i) => (
                          <td key={t.columns[i]!.key} className="num" data-metric={t.columns[i]!.key}>
                            {r.texts[i]}
                          </td>
                        ))}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <p className="row">
                <a href={`${base}/${t.id}-${mode}.csv`} download>
                  CSV
                </a>
                <a href={`${base}/${t.id}-${mode}.svg`}>Chart (SVG)</a>
              </p>
              <img
                src={`${base}/${t.id}-${mode}.svg`}
                alt={`Chart: ${t.title}`}
                loading="lazy"
                style={{ maxWidth: "100%" }}
              />
            </>
          )}
        </section>
      ))}
    </>
  );
}
