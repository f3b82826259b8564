import type { LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { useMemo } from "react";
import { columnHelper, DataTable } from "~/ui/data-table";
import styles from "~/expert-panel/ui/expert-ratings.css?url";
import { ListHeader, WorkProgressCard } from "~/work-items/ui/list-page";
import { WORK_STATE_LABELS, type WorkState } from "~/work-items/domain/work-item";
import { getDb } from "~/platform/db.server";
import { requireRole } from "~/accounts/guard.server";
import { listRaterItems } from "~/case-review/case-review.server";
import { listRaterQuestions } from "~/mentat/ratings.server";
import { nextOpenItem } from "~/work-items/domain/work-item";

export const meta: MetaFunction = () => [{ title: "Expert ratings · Concord" }];
export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];

interface WorkRow {
  to: string;
  kind: "Answer options" | "Generated case" | "Seed case";
  collection: string;
  externalId: string;
  detail: string;
  state: WorkState;
}

/** The expert's start page: their option-rating questions and review cases, with progress. Own work only. */
export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireRole(request, "rater");
  const db = getDb();
  const questions = listRaterQuestions(db, user.id);
  const items = listRaterItems(db, user.id);
  const rows: WorkRow[] = [
    ...questions.map((q) => ({
      to: `/mentat/${q.questionId}`,
      kind: "Answer options" as const,
      collection: q.bankName,
      externalId: q.externalId,
      detail: q.domain,
      state: q.state,
    })),
    ...items.map((i) => ({
      to: `/case-review/${i.itemId}`,
      kind: i.kind === "seed" ? ("Seed case" as const) : ("Generated case" as const),
      collection: i.setName,
      externalId: i.externalId,
      detail: i.kind === "seed" ? "accept or reject" : "rate quality",
      state: i.state,
    })),
  ];
  return { rows, next: nextOpenItem(rows, -1)?.to ?? null };
}

const col = columnHelper<WorkRow>();

export default function RatingsHome() {
  const { rows, next } = useLoaderData<typeof loader>();
  const columns = useMemo(
    () => [
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
        allDone={rows.length ? "Everything is submitted. Thank you." : null}
      />
      {rows.length === 0 ? (
        <p className="card">
          Nothing is waiting for you. The study manager adds you to question banks and review sets.
        </p>
      ) : (
        <>
          <WorkProgressCard states={rows.map((r) => r.state)} />
          <DataTable
            data={rows}
            columns={columns}
            filterLabel="Filter"
            rowProps={(r) => ({ "data-item": r.externalId, "data-state": r.state })}
          />
        </>
      )}
    </section>
  );
}
