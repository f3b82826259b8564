import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData, useSearchParams } from "@remix-run/react";
import { useMemo } from "react";
import { columnHelper } from "~/ui/data-table";
import { WindowTable } from "~/ui/window-table";
import { getDb } from "~/platform/db.server";
import { requireRole } from "~/accounts/guard.server";
import type { QueueRow } from "~/adjudication/adjudication.server";
import { adjudicationQueuePage } from "~/adjudication/queue-window.server";
import { ListHeader, ProgressCard } from "~/work-items/ui/list-page";

export const meta: MetaFunction = () => [{ title: "Adjudication queue · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireRole(request, "adjudicator");
  const db = getDb();
  // One window of the queue, as the URL asks (docs/architecture.md, "Pages are windows").
  return { ...adjudicationQueuePage(db, user.id, new URL(request.url).searchParams), now: Date.now() };
}

function age(ms: number): string {
  const h = Math.floor(ms / 3_600_000);
  if (h < 1) return `${Math.max(1, Math.floor(ms / 60_000))} min`;
  if (h < 48) return `${h} h`;
  return `${Math.floor(h / 24)} days`;
}

const col = columnHelper<QueueRow & { age: number }>();

export default function Queue() {
  const { window: w, studies, waiting, withMine, reopened, done, next, now } = useLoaderData<typeof loader>();
  const [params] = useSearchParams();
  const rows = useMemo(() => w.rows.map((r) => ({ ...r, age: now - r.disputedAt })), [w.rows, now]);
  const columns = useMemo(
    () => [
      col.accessor("externalId", {
        header: "Case",
        cell: (info) => <Link to={`/adjudicate/${info.row.original.caseId}`}>{info.getValue()}</Link>,
      }),
      col.accessor("studyName", { header: "Study" }),
      col.accessor("reason", { header: "Disagreement on" }),
      col.accessor("age", { id: "disputedAt", header: "In queue", cell: (info) => age(info.getValue()) }),
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
        next={{ to: next !== null ? `/adjudicate/${next}` : null, label: "Next case", testId: "next-case" }}
        allDone={done ? "No disputed case is waiting. Thank you." : null}
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
        done={done}
        total={done + waiting}
        doneWord="decided by you"
        breakdown={`${waiting} waiting · ${withMine} with your independent judgement · ${reopened} reopened`}
      />
      <WindowTable
        window={{ ...w, rows }}
        columns={columns}
        sortable={["disputedAt"]}
        noun="cases"
        testId="queue"
        empty="No disputed cases are waiting."
        rowProps={(r) => ({ "data-case": r.externalId, "data-reopened": r.reopened ? "true" : "false" })}
        filters={
          <>
            {studies.length > 1 ? (
              <select name="study" aria-label="Study" defaultValue={w.query.filters.study}>
                <option value="">All studies</option>
                {studies.map((s) => (
                  <option key={s.id} value={s.id}>
                    {s.name}
                  </option>
                ))}
              </select>
            ) : null}
            <select name="reason" aria-label="Disagreement on" defaultValue={w.query.filters.reason}>
              <option value="">Any disagreement</option>
              <option value="sufficiency">sufficiency</option>
              <option value="diagnosis">diagnosis</option>
            </select>
          </>
        }
      />
    </section>
  );
}
