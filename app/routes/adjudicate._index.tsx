import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData, useSearchParams } from "@remix-run/react";
import { useMemo } from "react";
import { columnHelper, DataTable } from "~/ui/data-table";
import { getDb } from "~/platform/db.server";
import { requireRole } from "~/accounts/guard.server";
import { adjudicationProgress, listAdjudicationQueue, type QueueRow } from "~/adjudication/adjudication.server";
import { ListHeader, ProgressCard } from "~/work-items/ui/list-page";

export const meta: MetaFunction = () => [{ title: "Adjudication queue · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireRole(request, "adjudicator");
  const db = getDb();
  const rows = listAdjudicationQueue(db, user.id);
  return { rows, now: Date.now(), progress: adjudicationProgress(db, user.id, rows) };
}

function age(ms: number): string {
  const h = Math.floor(ms / 3_600_000);
  if (h < 1) return `${Math.max(1, Math.floor(ms / 60_000))} min`;
  if (h < 48) return `${h} h`;
  return `${Math.floor(h / 24)} days`;
}

const col = columnHelper<QueueRow & { age: number }>();

export default function Queue() {
  const { rows, now, progress } = useLoaderData<typeof loader>();
  const [params] = useSearchParams();
  const data = useMemo(() => rows.map((r) => ({ ...r, age: now - r.disputedAt })), [rows, now]);
  const columns = useMemo(
    () => [
      col.accessor("externalId", {
        header: "Case",
        cell: (info) => <Link to={`/adjudicate/${info.row.original.caseId}`}>{info.getValue()}</Link>,
      }),
      col.accessor("studyName", { header: "Study" }),
      col.accessor("reason", { header: "Disagreement on" }),
      col.accessor("age", { header: "In queue", cell: (info) => age(info.getValue()) }),
      col.accessor("numSections", { header: "Sections" }),
      col.accessor((r) => (r.mine === "independent_recorded" ? "independent judgement recorded" : ""), {
        id: "mine",
        header: "Your progress",
      }),
      col.accessor((r) => (r.reopened ? "reopened" : ""), {
        id: "reopened",
        header: "Reopened",
        cell: (info) => (info.getValue() ? <span className="badge reopened">reopened</span> : null),
      }),
    ],
    [],
  );
  return (
    <section>
      <ListHeader
        title="Adjudication queue"
        next={{ to: rows.length ? `/adjudicate/${rows[0]!.caseId}` : null, label: "Next case", testId: "next-case" }}
        allDone={progress.done ? "No disputed case is waiting. Thank you." : null}
      />
      {params.get("decided") ? (
        <p className="notice ok" role="status">
          Decision recorded for case {params.get("decided")}.
        </p>
      ) : null}
      <p className="muted">
        Disputed cases from all studies, oldest first. Cases you annotated yourself are never shown to you. You first
        record your own judgement; then the two annotations are shown as Annotator A and B. A case the study manager
        reopened is marked “reopened” and shows their reason.
      </p>
      <ProgressCard
        done={progress.done}
        total={progress.total}
        doneWord="decided by you"
        breakdown={`${rows.length} waiting · ${rows.filter((r) => r.mine === "independent_recorded").length} with your independent judgement · ${rows.filter((r) => r.reopened).length} reopened`}
      />
      <DataTable
        data={data}
        columns={columns}
        filterLabel="Filter"
        empty="No disputed cases are waiting."
        rowProps={(r) => ({ "data-case": r.externalId, "data-reopened": r.reopened ? "true" : "false" })}
      />
    </section>
  );
}
