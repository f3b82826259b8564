/** The study report page's agreement per pair of annotators and over time (docs/statistics.md). */
import { Form } from "@remix-run/react";
import type { IntervalSummary } from "~/stats/index";
import type { MeasureAgreement, RaterAgreementReport } from "~/study-report/domain/rater-agreement";
import { RATER_AGREEMENT_FILE_STEM } from "~/study-report/domain/study-report-files";
import type { OrderFreeAgreement, RaterAgreement } from "~/study-report/domain/study-report-raters";
import { ci95, fixed3, percent } from "~/study-report/domain/study-report-format";
import { Chart, type ChartOnPage } from "./report-parts";

export interface RaterAgreementProps {
  agreement: RaterAgreementReport;
  charts: ReadonlyMap<string, ChartOnPage>;
  base: string;
  /** The batch size as typed, and the error when it was refused (the default is shown instead). */
  batchInput: string;
  batchError: string | null;
  /** The batch size asked for, or null: the page shows bigger batches when it would make too many. */
  batchSize: number | null;
}

const MEASURES = [
  ["sufficiency", "Sufficiency", "every case with both primary annotations"],
  ["diagnosis", "Diagnosis", "cases both annotators called sufficient, codes compared at diagnosis level"],
] as const;

/** The distinct reasons of the null coefficients under `prefix`, in order, numbered from 1 (kept per reasons record). */
const numbered = new WeakMap<Record<string, string>, Map<string, Map<string, number>>>();
function reasonNumbers(reasons: Record<string, string>, prefix: string): Map<string, number> {
  let byPrefix = numbered.get(reasons);
  if (!byPrefix) numbered.set(reasons, (byPrefix = new Map()));
  let numbers = byPrefix.get(prefix);
  if (!numbers) {
    numbers = new Map();
    for (const [path, reason] of Object.entries(reasons))
      if (path.startsWith(prefix) && /\.(percent_agreement|cohen_kappa|gwet_ac1)$/.test(path) && !numbers.has(reason))
        numbers.set(reason, numbers.size + 1);
    byPrefix.set(prefix, numbers);
  }
  return numbers;
}

/**
 * A coefficient with its interval, or n/a with the number of its reason in the section's list of reasons (reasons
 * are keyed by the value's JSON path): each reason is said once, under the tables, not beside each value.
 */
function Coefficient({
  e,
  path,
  reasons,
  asPercent = false,
}: {
  e: IntervalSummary;
  path: string;
  reasons: Record<string, string>;
  asPercent?: boolean;
}) {
  if (e.value === null) {
    const reason = reasons[path];
    const n =
      reason === undefined ? undefined : reasonNumbers(reasons, path.slice(0, path.indexOf(".") + 1)).get(reason);
    return n === undefined ? (
      <>n/a</>
    ) : (
      <>
        {`n/a`}
        <sup>{n}</sup>
      </>
    );
  }
  const show = asPercent ? percent : fixed3;
  return (
    <>
      {show(e.value)}
      {e.ci95 ? (
        <small className="muted">{` ${asPercent ? `[${percent(e.ci95[0])}, ${percent(e.ci95[1])}]` : ci95(e)}`}</small>
      ) : null}
    </>
  );
}

function MeasureCells({ m, path, reasons }: { m: MeasureAgreement; path: string; reasons: Record<string, string> }) {
  return (
    <>
      <td className="num">{m.n}</td>
      <td className="num">
        <Coefficient e={m.percent_agreement} path={`${path}.percent_agreement`} reasons={reasons} asPercent />
      </td>
      <td className="num">
        <Coefficient e={m.cohen_kappa} path={`${path}.cohen_kappa`} reasons={reasons} />
      </td>
      <td className="num">
        <Coefficient e={m.gwet_ac1} path={`${path}.gwet_ac1`} reasons={reasons} />
      </td>
    </>
  );
}

const MEASURE_HEAD = (
  <>
    <th className="num">n</th>
    <th className="num">% agreement [95% CI]</th>
    <th className="num">Cohen's κ [95% CI]</th>
    <th className="num">Gwet's AC1 [95% CI]</th>
  </>
);

/** The distinct reasons of the null values under `prefix`, listed once under the tables, numbered as the values cite them. */
function ReasonList({ reasons, prefix }: { reasons: Record<string, string>; prefix: string }) {
  const numbers = [...reasonNumbers(reasons, prefix)];
  if (!numbers.length) return null;
  return (
    <ol className="muted">
      {numbers.map(([r, n]) => (
        <li key={n} value={n}>
          <small>{`n/a: ${r}`}</small>
        </li>
      ))}
    </ol>
  );
}

/** Every pair of annotators: a matrix of κ and AC1 (with n) per measure, then each pair with its intervals. */
export function PairwiseSection({ agreement, charts, base }: RaterAgreementProps) {
  const { annotators, reasons } = agreement;
  const pairs = agreement.pairwise.pairs;
  const indexOf = (a: string, b: string) =>
    pairs.findIndex(
      (p) => (p.annotators[0] === a && p.annotators[1] === b) || (p.annotators[0] === b && p.annotators[1] === a),
    );
  return (
    <section data-testid="pairwise-agreement">
      <p>
        {annotators.length} annotator(s), {pairs.length} pair(s). Each pair on the cases it shared, before adjudication;
        κ reads the annotator whose username sorts first as the rows (the matrices are symmetric).{" "}
        <a href={`${base}/${RATER_AGREEMENT_FILE_STEM}.json`} download>
          JSON
        </a>
      </p>
      {pairs.length === 0 ? <p className="muted">No case has both primary annotations yet.</p> : null}
      {pairs.length > 0
        ? MEASURES.map(([key, label, about]) => (
            <div key={key}>
              <h3>{label}</h3>
              <p className="muted">
                <small>Over {about}. Each cell: Cohen's κ / Gwet's AC1 (n).</small>
              </p>
              <table data-testid={`pairwise-matrix-${key}`}>
                <thead>
                  <tr>
                    <th />
                    {annotators.map((a) => (
                      <th key={a} className="num">
                        {a}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {annotators.map((row) => (
                    <tr key={row}>
                      <th scope="row">{row}</th>
                      {annotators.map((column) => {
                        if (row === column)
                          return (
                            <td key={column} className="num muted">
                              —
                            </td>
                          );
                        const i = indexOf(row, column);
                        const m = pairs[i]![key];
                        return (
                          <td key={column} className="num">
                            {`${fixed3(m.cohen_kappa.value)} / ${fixed3(m.gwet_ac1.value)} `}
                            <small className="muted">{`(${m.n})`}</small>
                          </td>
                        );
                      })}
                    </tr>
                  ))}
                </tbody>
              </table>
              <table data-testid={`pairwise-${key}`} style={{ marginTop: "0.75rem" }}>
                <thead>
                  <tr>
                    <th>Pair</th>
                    {MEASURE_HEAD}
                  </tr>
                </thead>
                <tbody>
                  {pairs.map((p, i) => (
                    <tr key={p.annotators.join()}>
                      <td>{`${p.annotators[0]} – ${p.annotators[1]}`}</td>
                      <MeasureCells m={p[key]} path={`pairwise.pairs.${i}.${key}`} reasons={reasons} />
                    </tr>
                  ))}
                </tbody>
              </table>
              <Chart chart={charts.get(`pairwise-${key}`)} base={base} />
            </div>
          ))
        : null}
      <ReasonList reasons={reasons} prefix="pairwise." />
    </section>
  );
}

/** Agreement by ISO week and by batch of cases, pooled over the pairs, to show drift. */
export function OverTimeSection({ agreement, charts, base, batchInput, batchError, batchSize }: RaterAgreementProps) {
  const t = agreement.over_time;
  const { reasons } = agreement;
  const query = `?batch=${t.batch_size}`;
  return (
    <section data-testid="agreement-over-time">
      <p>
        {t.n_cases} case(s) with both primary annotations, bucketed by the later of the two submissions (UTC).
        {t.n_untimed ? ` ${t.n_untimed} case(s) without a submission time are left out.` : ""}
        {agreement.rule === "pair_order"
          ? " More than two annotators share the cases, so Cohen's κ is not pooled over their pairs (n/a); AC1 and percent agreement are."
          : ""}
      </p>
      {MEASURES.map(([key, label, about]) => (
        <div key={key}>
          <h3>{label} by ISO week</h3>
          <p className="muted">
            <small>Over {about}; weeks without a completed case are listed with n 0.</small>
          </p>
          <table data-testid={`by-week-${key}`}>
            <thead>
              <tr>
                <th>Week</th>
                <th>Starts</th>
                <th className="num">Cases</th>
                {MEASURE_HEAD}
              </tr>
            </thead>
            <tbody>
              {t.by_week.map((w, i) => (
                <tr key={w.week}>
                  <td>{w.week}</td>
                  <td>{w.start}</td>
                  <td className="num">{w.n_cases}</td>
                  <MeasureCells m={w[key]} path={`over_time.by_week.${i}.${key}`} reasons={reasons} />
                </tr>
              ))}
            </tbody>
          </table>
          <Chart chart={charts.get(`${key}-by-week`)} base={base} />
        </div>
      ))}
      <h3>By batch of cases</h3>
      <Form method="get" className="row" aria-label="Batch size">
        <label>
          Cases per batch{" "}
          <input
            type="number"
            name="batch"
            key={batchInput}
            min={2}
            step={1}
            defaultValue={batchInput}
            aria-invalid={batchError ? true : undefined}
            aria-describedby={batchError ? "batch-error" : undefined}
            style={{ width: "6rem" }}
          />
        </label>{" "}
        <button type="submit" className="button secondary">
          Show
        </button>
      </Form>
      {batchError ? (
        <p id="batch-error" className="field-error" role="alert">
          {batchError}
        </p>
      ) : null}
      {batchSize !== null && t.batch_size > batchSize ? (
        <p className="notice" role="status" data-testid="batch-widened">
          Batches of {t.batch_size} cases instead of {batchSize}: the page shows at most {t.by_batch.length} batches.
          Every batch of {batchSize}: the{" "}
          <a href={`${base}/${RATER_AGREEMENT_FILE_STEM}.json?batch=${batchSize}`} download>
            JSON
          </a>{" "}
          or <code>stats --over-time --batch-size {batchSize}</code>.
        </p>
      ) : null}
      {MEASURES.map(([key, label, about]) => (
        <div key={key}>
          <h3>
            {label} by batch of {t.batch_size} cases
          </h3>
          <p className="muted">
            <small>
              Over {about}; consecutive batches in the order the pairs were completed (the last may be smaller).
            </small>
          </p>
          <table data-testid={`by-batch-${key}`}>
            <thead>
              <tr>
                <th>Batch</th>
                <th>Cases</th>
                <th>Completed</th>
                {MEASURE_HEAD}
              </tr>
            </thead>
            <tbody>
              {t.by_batch.map((b, i) => (
                <tr key={b.batch}>
                  <td>{b.batch}</td>
                  <td>{`${b.first}–${b.last}`}</td>
                  <td>{`${b.from.slice(0, 10)} – ${b.to.slice(0, 10)}`}</td>
                  <MeasureCells m={b[key]} path={`over_time.by_batch.${i}.${key}`} reasons={reasons} />
                </tr>
              ))}
            </tbody>
          </table>
          <Chart chart={charts.get(`${key}-by-batch`)} base={base} query={query} />
        </div>
      ))}
      <ReasonList reasons={reasons} prefix="over_time." />
    </section>
  );
}

/**
 * The pooled figures that need no order of the two annotations (docs/statistics.md, "Study report: which annotator is which"): Fleiss'
 * κ, Krippendorff's α and Gwet's AC1 over all cases, whoever annotated them. Shown when more than two annotators share
 * the cases, where a pooled Cohen's κ would mix different pairs.
 */
export function OrderFreeSection({ raters }: { raters: Pick<RaterAgreement, "rule" | "order_free"> }) {
  if (raters.rule !== "pair_order") return null;
  const rows: [string, OrderFreeAgreement][] = [
    ["Sufficiency", raters.order_free.sufficiency],
    ["Diagnosis (cases both called sufficient)", raters.order_free.diagnosis_level],
  ];
  return (
    <section data-testid="order-free-agreement">
      <p className="muted">
        Over every case with both primary annotations, whichever pair annotated it; these coefficients do not depend on
        which annotation is read first.
      </p>
      <table>
        <thead>
          <tr>
            <th>Measure</th>
            <th className="num">n</th>
            <th className="num">Fleiss&apos; κ</th>
            <th className="num">Krippendorff&apos;s α</th>
            <th className="num">Gwet&apos;s AC1</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(([label, r]) => (
            <tr key={label}>
              <td>{label}</td>
              <td className="num">{r.n}</td>
              <td className="num">{fixed3(r.fleiss_kappa)}</td>
              <td className="num">{fixed3(r.krippendorff_alpha)}</td>
              <td className="num">{fixed3(r.gwet_ac1)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
