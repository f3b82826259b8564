import { WORK_STATE_LABELS } from "~/work-items/domain/work-item";
import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { useMemo } from "react";
import { columnHelper } from "~/ui/data-table";
import { WindowTable } from "~/ui/window-table";
import { ListHeader, WorkListFilters, WorkProgressCard } from "~/work-items/ui/list-page";
import { getDb } from "~/platform/db.server";
import { requireRole } from "~/accounts/guard.server";
import { listClosedReviewerRounds, type ReviewRow } from "~/screening/screening-review.server";
import { screeningQueuePage } from "~/screening/screening-windows.server";

export const meta: MetaFunction = () => [{ title: "Screening review · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireRole(request, "rater");
  const db = getDb();
  // One open round's window of the reviewer's items, as the URL asks (docs/architecture.md, "Pages are windows").
  const page = screeningQueuePage(db, user.id, new URL(request.url).searchParams);
  return { ...page, finished: listClosedReviewerRounds(db, user.id) };
}

const col = columnHelper<ReviewRow>();

export default function ReviewHome() {
  const { rounds, window: w, counts, next, finished } = useLoaderData<typeof loader>();
  const total = counts.not_started + counts.draft + counts.submitted + counts.locked;
  const columns = useMemo(
    () => [
      col.accessor("studyName", { header: "Study" }),
      col.accessor("round", { header: "Round" }),
      col.accessor("position", {
        id: "position",
        header: "#",
        cell: (info) => <Link to={`/screening/${info.row.original.entryId}`}>{info.getValue()}</Link>,
      }),
      col.accessor("preview", { header: "Opening words" }),
      col.accessor("state", {
        header: "State",
        cell: (info) => <span className={`badge ${info.getValue()}`}>{WORK_STATE_LABELS[info.getValue()]}</span>,
      }),
    ],
    [],
  );
  return (
    <section>
      <ListHeader
        title="Screening review"
        next={{ to: next !== null ? `/screening/${next}` : null, label: "Next item", testId: "next-item" }}
        allDone={total ? "All your items are submitted. Thank you." : null}
      />
      <p className="muted">
        Decide for each item whether it belongs to the study's subset, and if so its category. Review independently: you
        see neither the automatic screen's labels nor the other reviewers' votes. Everyone reviews the items in the same
        order.
      </p>
      {total === 0 ? (
        <p className="card">No open round has items for you. The study manager opens rounds.</p>
      ) : (
        <>
          <WorkProgressCard counts={counts} />
          <WindowTable
            window={w}
            columns={columns}
            sortable={["position"]}
            noun="items"
            testId="my-items"
            rowProps={(r) => ({ "data-entry": String(r.entryId), "data-state": r.state })}
            filters={
              <WorkListFilters
                collection={{
                  name: "round",
                  label: "Round",
                  selected: w.query.filters.round,
                  options: rounds.map((r) => ({ value: r.id, label: `${r.studyName}, round ${r.number}` })),
                }}
                state={{ selected: w.query.filters.state, counts }}
              />
            }
          />
        </>
      )}
      {finished.length ? (
        <p className="muted" data-testid="finished-rounds">
          Finished: {finished.map((f) => `${f.studyName}, round ${f.round}`).join("; ")}.
        </p>
      ) : null}
    </section>
  );
}
