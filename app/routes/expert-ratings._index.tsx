import type { LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { useMemo } from "react";
import { columnHelper } from "~/ui/data-table";
import { WindowTable } from "~/ui/window-table";
import styles from "~/expert-panel/ui/expert-ratings.css?url";
import { ListHeader, WorkListFilters, WorkProgressCard } from "~/work-items/ui/list-page";
import { WORK_STATE_LABELS } from "~/work-items/domain/work-item";
import { getDb } from "~/platform/db.server";
import { requireRole } from "~/accounts/guard.server";
import { expertQueuePage, type ExpertWorkRow } from "~/expert-panel/expert-queue-window.server";

export const meta: MetaFunction = () => [{ title: "Expert ratings · Concord" }];
export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];

/** The expert's start page: one bank's or set's window of their work, with progress. Own work only. */
export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireRole(request, "rater");
  // One collection's window, as the URL asks (docs/architecture.md, "Pages are windows").
  return expertQueuePage(getDb(), user.id, new URL(request.url).searchParams);
}

const col = columnHelper<ExpertWorkRow>();

export default function RatingsHome() {
  const { collections, window: w, counts, next } = useLoaderData<typeof loader>();
  const total = counts.not_started + counts.draft + counts.submitted + counts.locked;
  const columns = useMemo(
    () => [
      col.accessor("position", { id: "position", header: "#", cell: (info) => info.getValue() + 1 }),
      col.accessor("kind", { header: "Task" }),
      col.accessor("collection", { header: "Bank / set" }),
      col.accessor("externalId", {
        header: "Item",
        cell: (info) => <Link to={info.row.original.to}>{info.getValue()}</Link>,
      }),
      col.accessor("detail", { header: "Domain / kind" }),
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
        title="Expert ratings"
        next={{ to: next, label: "Next", testId: "next-item" }}
        allDone={total ? "Everything is submitted. Thank you." : null}
      />
      {total === 0 ? (
        <p className="card">
          Nothing is waiting for you. The study manager adds you to question banks and review sets.
        </p>
      ) : (
        <>
          <WorkProgressCard counts={counts} />
          <WindowTable
            window={w}
            columns={columns}
            sortable={["position"]}
            noun="items"
            testId="my-items"
            rowProps={(r) => ({ "data-item": r.externalId, "data-state": r.state })}
            filters={
              <WorkListFilters
                collection={{
                  name: "c",
                  label: "Bank or set",
                  selected: w.query.filters.c,
                  options: collections.map((c) => ({ value: c.key, label: c.name })),
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
