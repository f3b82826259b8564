import type { LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData, useNavigate } from "@remix-run/react";
import { useEffect, useMemo } from "react";
import { columnHelper, DataTable } from "~/components/data-table";
import styles from "~/components/expert-ratings.css?url";
import { EXPERT_STATE_LABELS, type ExpertWorkState } from "~/core/expert-scales";
import { getDb } from "~/lib/db.server";
import { requireRole } from "~/lib/guard.server";
import { listRaterItems } from "~/services/case-review.server";
import { listRaterQuestions, nextOpen } from "~/services/mentat.server";

export const meta: MetaFunction = () => [{ title: "Expert ratings · Concord" }];
export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];

interface WorkRow {
  to: string;
  kind: "Answer options" | "Generated case" | "Seed case";
  collection: string;
  externalId: string;
  detail: string;
  state: ExpertWorkState;
}

/** The expert's start page: their option-rating questions and review cases, with progress. Own work only. */
export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireRole(request, "rater");
  const db = getDb();
  const questions = listRaterQuestions(db, user.id);
  const items = listRaterItems(db, user.id);
  const rows: WorkRow[] = [
    ...questions.map((q) => ({
      to: `/ratings/mentat/${q.questionId}`,
      kind: "Answer options" as const,
      collection: q.bankName,
      externalId: q.externalId,
      detail: q.domain,
      state: q.state,
    })),
    ...items.map((i) => ({
      to: `/ratings/cases/${i.itemId}`,
      kind: i.kind === "seed" ? ("Seed case" as const) : ("Generated case" as const),
      collection: i.setName,
      externalId: i.externalId,
      detail: i.kind === "seed" ? "accept or reject" : "rate quality",
      state: i.state,
    })),
  ];
  return { rows, next: nextOpen(rows, -1)?.to ?? null };
}

const col = columnHelper<WorkRow>();

export default function RatingsHome() {
  const { rows, next } = useLoaderData<typeof loader>();
  const navigate = useNavigate();
  const done = rows.filter((r) => r.state === "submitted").length;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.target as HTMLElement).closest("input, textarea, select")) return;
      if ((e.key === "n" || e.key === "N") && next) navigate(next);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [next, navigate]);
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
        cell: (info) => <span className={`badge ${info.getValue()}`}>{EXPERT_STATE_LABELS[info.getValue()]}</span>,
      }),
    ],
    [],
  );
  return (
    <section>
      <div className="row">
        <h1>Expert ratings</h1>
        <span className="spacer" />
        {next ? (
          <Link to={next} className="button" data-testid="next-item">
            Next <kbd>N</kbd>
          </Link>
        ) : rows.length ? (
          <span className="notice ok">Everything is submitted. Thank you.</span>
        ) : null}
      </div>
      {rows.length === 0 ? (
        <p className="card">
          Nothing is waiting for you. The study manager adds you to question banks and review sets.
        </p>
      ) : (
        <>
          <div className="card" aria-label="Progress">
            <strong data-testid="progress">
              {done} of {rows.length} submitted
            </strong>
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
            filterLabel="Filter"
            rowProps={(r) => ({ "data-item": r.externalId, "data-state": r.state })}
          />
        </>
      )}
    </section>
  );
}
