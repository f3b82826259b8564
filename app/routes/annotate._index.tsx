import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { useMemo, useState } from "react";
import { columnHelper, DataTable } from "~/ui/data-table";
import { ListHeader, WorkProgressCard } from "~/work-items/ui/list-page";
import { WORK_STATE_LABELS as STATE_LABELS } from "~/work-items/domain/work-item";
import { getDb } from "~/platform/db.server";
import { requireRole } from "~/accounts/guard.server";
import { listAnnotatorCases, nextCaseId, type CaseState, type MyCaseRow } from "~/annotation/annotations.server";
import { myTrainingRounds, refreshMyQueue } from "~/annotation/rater-quality.server";

export const meta: MetaFunction = () => [{ title: "My cases · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireRole(request, "annotator");
  // What the studies' rater-quality settings now call for joins the list first (docs/rater-quality.md).
  refreshMyQueue(getDb(), user.id);
  const rows = listAnnotatorCases(getDb(), user.id);
  return { rows, next: nextCaseId(rows, null), training: myTrainingRounds(getDb(), user.id) };
}

const col = columnHelper<MyCaseRow>();

export default function AnnotateHome() {
  const { rows, next, training } = useLoaderData<typeof loader>();
  const [state, setState] = useState<"" | CaseState>("");
  const shown = useMemo(() => (state ? rows.filter((r) => r.state === state) : rows), [rows, state]);
  const counts = (s: CaseState) => rows.filter((r) => r.state === s).length;
  const columns = useMemo(
    () => [
      col.accessor("position", { header: "#" }),
      col.accessor("studyName", { header: "Study" }),
      col.accessor("externalId", {
        header: "Case",
        cell: (info) => <Link to={`/annotate/${info.row.original.key}`}>{info.getValue()}</Link>,
      }),
      col.accessor("numSections", { header: "Sections" }),
      col.accessor("state", {
        header: "State",
        cell: (info) => <span className={`badge ${info.getValue()}`}>{STATE_LABELS[info.getValue()]}</span>,
      }),
      col.accessor((r) => (r.updatedAt ? new Date(r.updatedAt).toISOString().replace("T", " ").slice(0, 16) : ""), {
        id: "updated",
        header: "Last saved (UTC)",
      }),
    ],
    [],
  );
  return (
    <section>
      <ListHeader
        title="My cases"
        next={{ to: next !== null ? `/annotate/${next}` : null, label: "Next case", testId: "next-case" }}
        allDone={rows.length ? "All your cases are submitted. Thank you." : null}
      />
      {training.map((t) => (
        <p className="card" key={t.studyName} data-testid="training-round">
          <strong>Training round of {t.studyName}:</strong> {t.done} of {t.total} training cases done. After each one
          you see the reference label and its rationale; your cases of this study open when the round is done.
        </p>
      ))}
      {rows.length === 0 ? (
        <p className="card">No cases are assigned to you yet. The study manager assigns them.</p>
      ) : (
        <>
          <WorkProgressCard states={rows.map((r) => r.state)} />
          <DataTable
            data={shown}
            columns={columns}
            filterLabel="Filter by case or study"
            rowProps={(r) => ({ "data-case": r.externalId, "data-state": r.state })}
            toolbar={
              <select
                aria-label="Filter by state"
                value={state}
                onChange={(e) => setState(e.target.value as "" | CaseState)}
              >
                <option value="">All states</option>
                {(Object.keys(STATE_LABELS) as CaseState[]).map((s) => (
                  <option key={s} value={s}>
                    {STATE_LABELS[s]} ({counts(s)})
                  </option>
                ))}
              </select>
            }
          />
        </>
      )}
    </section>
  );
}
