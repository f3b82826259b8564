import type { ActionFunctionArgs, LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useActionData, useLoaderData, useNavigation, useSearchParams } from "@remix-run/react";
import { useMemo } from "react";
import { z } from "zod";
import { ActionResult, ImportedNotice } from "~/ui/admin-notices";
import { columnHelper, DataTable } from "~/ui/data-table";
import { ExpertPanel } from "~/expert-panel/ui/expert-panel";
import styles from "~/expert-panel/ui/expert-ratings.css?url";
import { REVIEW_DIMENSION_LABELS, REVIEW_SCALE } from "~/expert-panel/domain/expert-scales";
import { getDb } from "~/platform/db.server";
import { parseIntent } from "~/platform/intent";
import { requireById, requireForm, requireRole } from "~/accounts/guard.server";
import {
  addReviewRaters,
  getReviewReport,
  getReviewSet,
  listReviewItems,
  listReviewPanel,
  removeReviewRater,
  type ReviewItemRow,
} from "~/case-review/case-review.server";
import { ServiceError } from "~/accounts/users.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `${data?.set.name ?? "Review set"} · Concord` },
];
export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];

function setOr404(param: string | undefined) {
  return requireById(param, (id) => getReviewSet(getDb(), id), "No such review set.");
}

export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const set = setOr404(params.setId);
  const db = getDb();
  const weights = new URL(request.url).searchParams.get("weights") === "linear" ? "linear" : "quadratic";
  return {
    set,
    items: listReviewItems(db, set.id),
    panel: listReviewPanel(db, set.id),
    report: getReviewReport(db, set.id, { weights }),
  };
}

const ActionSchema = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal(["add_rater", "remove_rater"]), raterId: z.string().min(1, "Choose an expert.") }),
]);

export async function action({ request, params }: ActionFunctionArgs) {
  const me = await requireRole(request, "admin");
  const form = await requireForm(request, me);
  const set = setOr404(params.setId);
  const parsed = parseIntent(form, ActionSchema);
  if (!parsed.ok) return { ok: false as const, message: parsed.message };
  try {
    if (parsed.data.intent === "add_rater")
      addReviewRaters(getDb(), { setId: set.id, raterIds: [parsed.data.raterId], actorId: me.id });
    else removeReviewRater(getDb(), { setId: set.id, raterId: parsed.data.raterId, actorId: me.id });
    return {
      ok: true as const,
      message:
        parsed.data.intent === "add_rater"
          ? "Added to the panel."
          : "Removed from the panel; submitted reviews are kept.",
    };
  } catch (e) {
    if (e instanceof ServiceError) return { ok: false as const, message: e.message };
    throw e;
  }
}

const fmt = (v: number | null | undefined, d = 2) => (v === null || v === undefined ? "–" : v.toFixed(d));

function Bars({ counts }: { counts: number[] }) {
  const max = Math.max(1, ...counts);
  return (
    <span className="bars" aria-label={counts.map((c, i) => `${REVIEW_SCALE[i]}: ${c}`).join(", ")}>
      {counts.map((c, i) => (
        <span key={i} style={{ height: `${(100 * c) / max}%` }} title={`${REVIEW_SCALE[i]}: ${c}`} />
      ))}
    </span>
  );
}

const col = columnHelper<ReviewItemRow>();

export default function ReviewSetPage() {
  const { set, items, panel, report } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const busy = useNavigation().state !== "idle";
  const [search] = useSearchParams();
  const imported = search.get("imported")?.split("-");
  const columns = useMemo(
    () => [
      col.accessor((r) => r.position + 1, { id: "position", header: "#" }),
      col.accessor("externalId", { header: "Item" }),
      col.accessor("kind", { header: "Kind" }),
      col.accessor("caseType", { header: "Type" }),
      col.accessor("diagnosis", { header: "Diagnosis" }),
      col.accessor("seedId", { header: "Seed" }),
      col.accessor("submitted", { header: "Reviews" }),
    ],
    [],
  );
  return (
    <section>
      <p>
        <Link to="/admin/expert">Expert ratings</Link> ›
      </p>
      <div className="row">
        <h1>{set.name}</h1>
        <span className="spacer" />
        <a
          className="button secondary"
          href={`/admin/expert/cases/${set.id}/report.json?weights=${report.weights}`}
          download
        >
          Report (JSON)
        </a>
      </div>
      <ImportedNotice counts={imported} />
      <ActionResult result={result} />

      <h2>Experts</h2>
      <ExpertPanel
        panel={panel}
        total={items.length}
        busy={busy}
        emptyText="Nobody reviews this set yet."
        everyoneText="Every active user with the rater role is on the panel."
      />

      <h2>Quality of the generated cases</h2>
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

      <h2>Seeds</h2>
      <p>
        <strong data-testid="accepted-seeds">
          Accepted ({report.acceptedSeeds.length}): {report.acceptedSeeds.join(", ") || "none yet"}
        </strong>
        <br />
        <small className="muted">
          A seed is accepted when every expert who reviewed it accepted it. Agreement on decisions:{" "}
          {fmt(report.seedAgreement.percentAgreement)} (AC1 {fmt(report.seedAgreement.gwetAc1)}, Krippendorff α{" "}
          {fmt(report.seedAgreement.krippendorffAlphaNominal)}).
        </small>
      </p>
      {report.seeds.length ? (
        <table>
          <thead>
            <tr>
              <th>Seed</th>
              <th>Status</th>
              <th className="num">Accept</th>
              <th className="num">Reject</th>
              <th>Reasons</th>
            </tr>
          </thead>
          <tbody>
            {report.seeds.map((s) => (
              <tr key={s.id} data-seed={s.id}>
                <td>{s.id}</td>
                <td>{s.status}</td>
                <td className="num">{s.accepts}</td>
                <td className="num">{s.rejects}</td>
                <td>
                  {s.reasons.map((r) => (
                    <div key={r.rater}>
                      <strong>{r.rater}:</strong> {r.reason}
                    </div>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}

      <h2>Items ({items.length})</h2>
      <DataTable
        data={items}
        columns={columns}
        filterLabel="Filter items"
        rowProps={(r) => ({ "data-item": r.externalId })}
      />
    </section>
  );
}
