import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData, useNavigate } from "@remix-run/react";
import { useEffect, useMemo } from "react";
import { columnHelper, DataTable } from "~/components/data-table";
import { RATING_STATE_LABELS, type RatingState } from "~/components/judge-labels";
import { getDb } from "~/lib/db.server";
import { requireRole } from "~/lib/guard.server";
import { listRaterItems, nextItemId, type MyRatingRow } from "~/services/judge-ratings.server";

export const meta: MetaFunction = () => [{ title: "My responses · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireRole(request, "rater");
  const rows = listRaterItems(getDb(), user.id);
  return { rows, next: nextItemId(rows, null) };
}

const col = columnHelper<MyRatingRow>();

export default function RateHome() {
  const { rows, next } = useLoaderData<typeof loader>();
  const navigate = useNavigate();
  const done = rows.filter((r) => r.state === "submitted").length;
  const count = (s: RatingState) => rows.filter((r) => r.state === s).length;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.target as HTMLElement).closest("input, textarea, select")) return;
      if ((e.key === "n" || e.key === "N") && next !== null) navigate(`/rate/${next}`);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [next, navigate]);
  const columns = useMemo(
    () => [
      col.accessor("annotationId", {
        header: "Response",
        cell: (info) => <Link to={`/rate/${info.row.original.itemId}`}>{info.getValue()}</Link>,
      }),
      col.accessor("setName", { header: "Validation set" }),
      col.accessor("state", {
        header: "State",
        cell: (info) => (
          <span className={`badge ${info.getValue()}`}>
            {RATING_STATE_LABELS[info.getValue()]}
            {info.row.original.open ? "" : " (closed)"}
          </span>
        ),
      }),
      col.accessor((r) => (r.updatedAt ? new Date(r.updatedAt).toISOString().replace("T", " ").slice(0, 16) : ""), {
        id: "updated",
        header: "Last saved (UTC)",
      }),
    ],
    [],
  );
  return (
    <section>
      <div className="row">
        <h1>My responses</h1>
        <span className="spacer" />
        {next !== null ? (
          <Link to={`/rate/${next}`} className="button" data-testid="next-response">
            Next response <kbd>N</kbd>
          </Link>
        ) : rows.length ? (
          <span className="notice ok">All your responses are submitted. Thank you.</span>
        ) : null}
      </div>
      {rows.length === 0 ? (
        <p className="card">No model responses are assigned to you yet. The study manager assigns them.</p>
      ) : (
        <>
          <div className="card" aria-label="Progress">
            <div className="row">
              <strong data-testid="progress">
                {done} of {rows.length} submitted
              </strong>
              <span className="muted">
                {count("not_started")} not started · {count("draft")} draft · {count("submitted")} submitted
              </span>
            </div>
            <div
              className="progress"
              role="progressbar"
              aria-valuemin={0}
              aria-valuemax={rows.length}
              aria-valuenow={done}
            >
              <div style={{ width: `${(100 * done) / rows.length}%` }} />
            </div>
          </div>
          <DataTable
            data={rows}
            columns={columns}
            filterLabel="Filter responses"
            rowProps={(r) => ({ "data-response": r.annotationId, "data-state": r.state })}
          />
        </>
      )}
    </section>
  );
}
