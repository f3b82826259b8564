import { WORK_STATE_LABELS } from "~/work-items/domain/work-item";
import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { useMemo } from "react";
import { columnHelper, DataTable } from "~/ui/data-table";
import { ListHeader, WorkProgressCard } from "~/work-items/ui/list-page";
import { getDb } from "~/platform/db.server";
import { requireRole } from "~/accounts/guard.server";
import {
  listClosedReviewerRounds,
  listReviewerEntries,
  nextEntryId,
  type ReviewRow,
} from "~/screening/screening-review.server";

export const meta: MetaFunction = () => [{ title: "Screening review · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireRole(request, "rater");
  const db = getDb();
  const rows = listReviewerEntries(db, user.id);
  return { rows, next: nextEntryId(rows, null), finished: listClosedReviewerRounds(db, user.id) };
}

const col = columnHelper<ReviewRow>();

export default function ReviewHome() {
  const { rows, next, finished } = useLoaderData<typeof loader>();
  const columns = useMemo(
    () => [
      col.accessor("studyName", { header: "Study" }),
      col.accessor("round", { header: "Round" }),
      col.accessor("position", {
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
        allDone={rows.length ? "All your items are submitted. Thank you." : null}
      />
      <p className="muted">
        Decide for each item whether it belongs to the study's subset, and if so its category. Review independently: you
        see neither the automatic screen's labels nor the other reviewers' votes. Everyone reviews the items in the same
        order.
      </p>
      {rows.length === 0 ? (
        <p className="card">No open round has items for you. The study manager opens rounds.</p>
      ) : (
        <>
          <WorkProgressCard states={rows.map((r) => r.state)} />
          <DataTable
            data={rows}
            columns={columns}
            filterLabel="Filter items"
            rowProps={(r) => ({ "data-entry": String(r.entryId), "data-state": r.state })}
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
