import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { useMemo } from "react";
import { columnHelper, DataTable } from "~/ui/data-table";
import { WORK_STATE_LABELS } from "~/work-items/domain/work-item";
import { ListHeader, WorkProgressCard } from "~/work-items/ui/list-page";
import { getDb } from "~/platform/db.server";
import { requireRole } from "~/accounts/guard.server";
import { listRaterItems, nextItemId, type MyRatingRow } from "~/judge-validation/judge-ratings.server";
import { Time } from "~/ui/time";

export const meta: MetaFunction = () => [{ title: "My responses · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireRole(request, "rater");
  const rows = listRaterItems(getDb(), user.id);
  return { rows, next: nextItemId(rows, null) };
}

const col = columnHelper<MyRatingRow>();

export default function RateHome() {
  const { rows, next } = useLoaderData<typeof loader>();
  const columns = useMemo(
    () => [
      col.accessor("annotationId", {
        header: "Response",
        cell: (info) => <Link to={`/judge-validation/${info.row.original.itemId}`}>{info.getValue()}</Link>,
      }),
      col.accessor("setName", { header: "Validation set" }),
      col.accessor("state", {
        header: "State",
        cell: (info) => (
          <span className={`badge ${info.getValue()}`}>
            {WORK_STATE_LABELS[info.getValue()]}
            {info.row.original.open ? "" : " (closed)"}
          </span>
        ),
      }),
      col.accessor("updatedAt", {
        id: "updated",
        header: "Last saved",
        cell: (info) => {
          const at = info.getValue();
          return at ? <Time at={at} /> : "";
        },
      }),
    ],
    [],
  );
  return (
    <section>
      <ListHeader
        title="My responses"
        next={{
          to: next !== null ? `/judge-validation/${next}` : null,
          label: "Next response",
          testId: "next-response",
        }}
        allDone={rows.length ? "All your responses are submitted. Thank you." : null}
      />
      {rows.length === 0 ? (
        <p className="card">No model responses are assigned to you yet. The study manager assigns them.</p>
      ) : (
        <>
          <WorkProgressCard states={rows.map((r) => r.state)} />
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
