import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData, useSearchParams } from "@remix-run/react";
import { useMemo } from "react";
import { columnHelper, DataTable } from "~/ui/data-table";
import { getDb } from "~/platform/db.server";
import { requireRole } from "~/accounts/guard.server";
import { listAdjudicationQueue, type QueueRow } from "~/adjudication/adjudication.server";

export const meta: MetaFunction = () => [{ title: "Adjudication queue · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireRole(request, "adjudicator");
  return { rows: listAdjudicationQueue(getDb(), user.id), now: Date.now() };
}

function age(ms: number): string {
  const h = Math.floor(ms / 3_600_000);
  if (h < 1) return `${Math.max(1, Math.floor(ms / 60_000))} min`;
  if (h < 48) return `${h} h`;
  return `${Math.floor(h / 24)} days`;
}

const col = columnHelper<QueueRow & { age: number }>();

export default function Queue() {
  const { rows, now } = useLoaderData<typeof loader>();
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
    ],
    [],
  );
  return (
    <section>
      <h1>Adjudication queue</h1>
      {params.get("decided") ? (
        <p className="notice ok" role="status">
          Decision recorded for case {params.get("decided")}.
        </p>
      ) : null}
      <p className="muted">
        Disputed cases from all studies, oldest first. Cases you annotated yourself are never shown to you. You first
        record your own judgement; then the two annotations are shown as Annotator A and B.
      </p>
      <DataTable
        data={data}
        columns={columns}
        filterLabel="Filter"
        empty="No disputed cases are waiting."
        rowProps={(r) => ({ "data-case": r.externalId })}
      />
    </section>
  );
}
