import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { useMemo } from "react";
import { columnHelper } from "~/ui/data-table";
import { WindowTable } from "~/ui/window-table";
import { WORK_STATE_LABELS } from "~/work-items/domain/work-item";
import { ListHeader, WorkListFilters, WorkProgressCard } from "~/work-items/ui/list-page";
import { getDb } from "~/platform/db.server";
import { requireRole } from "~/accounts/guard.server";
import type { MyRatingRow } from "~/judge-validation/judge-ratings.server";
import { judgeQueuePage } from "~/judge-validation/judge-windows.server";
import { Time } from "~/ui/time";

export const meta: MetaFunction = () => [{ title: "My responses · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireRole(request, "rater");
  // One set's window of the rater's own responses, as the URL asks (docs/architecture.md, "Pages are windows").
  return judgeQueuePage(getDb(), user.id, new URL(request.url).searchParams);
}

const col = columnHelper<MyRatingRow & { position: number }>();

export default function RateHome() {
  const { sets, window: w, counts, next } = useLoaderData<typeof loader>();
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  const columns = useMemo(
    () => [
      col.accessor("position", { id: "position", header: "#" }),
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
        allDone={total ? "All your responses are submitted. Thank you." : null}
      />
      {total === 0 ? (
        <p className="card">No model responses are assigned to you yet. The study manager assigns them.</p>
      ) : (
        <>
          <WorkProgressCard counts={counts} />
          <WindowTable
            window={w}
            columns={columns}
            sortable={["position"]}
            noun="responses"
            testId="my-responses"
            rowProps={(r) => ({ "data-response": r.annotationId, "data-state": r.state })}
            filters={
              <WorkListFilters
                collection={{
                  name: "set",
                  label: "Validation set",
                  selected: w.query.filters.set,
                  options: sets.map((s) => ({ value: s.id, label: s.name })),
                }}
                state={{ selected: w.query.filters.state, counts }}
              />
            }
          />
        </>
      )}
    </section>
  );
}
