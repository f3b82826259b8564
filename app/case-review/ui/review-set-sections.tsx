/** The parts of a MentalBench review set's admin page: the quality report per dimension, the seeds, the items. */
import { Link } from "@remix-run/react";
import { useMemo } from "react";
import { columnHelper } from "~/ui/data-table";
import { REVIEW_DIMENSION_LABELS, REVIEW_ITEM_KINDS, REVIEW_SCALE } from "~/expert-panel/domain/expert-scales";
import { WindowTable } from "~/ui/window-table";
import type { ListWindow } from "~/platform/list-window";
import type { getReviewReport, ReviewItemRow } from "~/case-review/case-review.server";
import type { SeedOutcome } from "~/case-review/domain/case-review";
import { maxOf } from "../../stats/extremes";

type ReviewReport = ReturnType<typeof getReviewReport>;

const fmt = (v: number | null | undefined, d = 2) => (v === null || v === undefined ? "–" : v.toFixed(d));

function Bars({ counts }: { counts: number[] }) {
  const max = Math.max(1, maxOf(counts));
  return (
    <span className="bars" aria-label={counts.map((c, i) => `${REVIEW_SCALE[i]}: ${c}`).join(", ")}>
      {counts.map((c, i) => (
        <span key={i} style={{ height: `${(100 * c) / max}%` }} title={`${REVIEW_SCALE[i]}: ${c}`} />
      ))}
    </span>
  );
}

/** Per dimension: the ratings' distribution and the experts' agreement. */
export function DimensionReport({ report }: { report: ReviewReport }) {
  return (
    <>
      <p className="muted">
        {report.nReviews} submitted reviews of {report.nCases} cases and {report.nSeeds} seeds. Agreement with{" "}
        {report.weights} weights (
        <Link to={`?weights=${report.weights === "quadratic" ? "linear" : "quadratic"}`}>
          use {report.weights === "quadratic" ? "linear" : "quadratic"}
        </Link>
        ).
      </p>
      <table data-testid="dimension-report">
        <thead>
          <tr>
            <th>Dimension</th>
            <th className="num">n</th>
            <th className="num">Mean</th>
            <th className="num">SD</th>
            <th>Distribution 1–5</th>
            <th className="num">Krippendorff α (ordinal)</th>
            <th className="num">Gwet AC2 (95% CI)</th>
            <th className="num">Weighted κ</th>
          </tr>
        </thead>
        <tbody>
          {report.dimensions.map((d) => (
            <tr key={d.dimension} data-dimension={d.dimension}>
              <td>
                {REVIEW_DIMENSION_LABELS[d.dimension]}
                {d.perExpert.map((e) => (
                  <div key={e.rater} className="muted">
                    {e.rater}: {fmt(e.mean)} (n {e.n}, {e.distribution.join("/")})
                  </div>
                ))}
              </td>
              <td className="num">{d.n}</td>
              <td className="num">{fmt(d.mean)}</td>
              <td className="num">{fmt(d.sd)}</td>
              <td>
                <Bars counts={d.distribution} /> <small>{d.distribution.join("/")}</small>
              </td>
              <td className="num">{fmt(d.agreement.krippendorffAlphaOrdinal, 3)}</td>
              <td className="num">
                {fmt(d.agreement.gwetAc2.value, 3)}
                {d.agreement.gwetAc2.confidenceInterval
                  ? ` [${fmt(d.agreement.gwetAc2.confidenceInterval[0])}, ${fmt(
                      d.agreement.gwetAc2.confidenceInterval[1],
                    )}]`
                  : ""}
              </td>
              <td className="num" title={d.agreement.reasons.join("; ")}>
                {fmt(d.agreement.cohenWeightedKappa, 3)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** The accepted seeds, and each seed's decisions with their reasons. */
export function SeedsReport({
  report,
  seeds,
  accepted,
}: {
  report: ReviewReport;
  /** A window of the seeds' outcomes, cut from the report (its filter: the status). */
  seeds: ListWindow<SeedOutcome>;
  accepted: number;
}) {
  const columns = useMemo(
    () => [
      seedCol.accessor("id", { id: "id", header: "Seed" }),
      seedCol.accessor("status", { header: "Status" }),
      seedCol.accessor("accepts", { header: "Accept" }),
      seedCol.accessor("rejects", { header: "Reject" }),
      seedCol.display({
        id: "reasons",
        header: "Reasons",
        cell: (info) =>
          info.row.original.reasons.map((r) => (
            <div key={r.rater}>
              <strong>{r.rater}:</strong> {r.reason}
            </div>
          )),
      }),
    ],
    [],
  );
  return (
    <>
      <p>
        <strong data-testid="accepted-seeds">Accepted: {accepted}</strong>
        <br />
        <small className="muted">
          A seed is accepted when every expert who reviewed it accepted it. Agreement on decisions:{" "}
          {fmt(report.seedAgreement.percentAgreement)} (AC1 {fmt(report.seedAgreement.gwetAc1)}, Krippendorff α{" "}
          {fmt(report.seedAgreement.krippendorffAlphaNominal)}).
        </small>
      </p>
      {report.nSeeds ? (
        <WindowTable
          window={seeds}
          columns={columns}
          sortable={["id"]}
          noun="seeds"
          testId="seeds"
          filters={
            <select
              name="s_status"
              aria-label="Seed status"
              defaultValue={(seeds.query.filters as Record<string, string>).status}
            >
              <option value="">All seeds</option>
              <option value="accepted">accepted</option>
              <option value="rejected">rejected</option>
              <option value="pending">pending</option>
            </select>
          }
          rowProps={(r) => ({ "data-seed": r.id })}
        />
      ) : null}
    </>
  );
}

const seedCol = columnHelper<SeedOutcome>();

const col = columnHelper<ReviewItemRow>();

/** The set's items. */
export function ItemsTable({ items }: { items: ListWindow<ReviewItemRow> }) {
  const columns = useMemo(
    () => [
      col.accessor((r) => r.position + 1, { id: "position", header: "#" }),
      col.accessor("externalId", { id: "externalId", header: "Item" }),
      col.accessor("kind", { header: "Kind" }),
      col.accessor("caseType", { header: "Type" }),
      col.accessor("diagnosis", { header: "Diagnosis" }),
      col.accessor("seedId", { header: "Seed" }),
      col.accessor("submitted", { header: "Reviews" }),
    ],
    [],
  );
  return (
    <>
      <WindowTable
        window={items}
        columns={columns}
        sortable={["position", "externalId"]}
        noun="items"
        testId="items"
        filterLabel="Item id starts with"
        filters={
          <select name="kind" aria-label="Kind" defaultValue={(items.query.filters as Record<string, string>).kind}>
            <option value="">All kinds</option>
            {REVIEW_ITEM_KINDS.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        }
        rowProps={(r) => ({ "data-item": r.externalId })}
      />
    </>
  );
}
