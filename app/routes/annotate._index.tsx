import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { useMemo } from "react";
import { columnHelper } from "~/ui/data-table";
import { WindowTable } from "~/ui/window-table";
import { ListHeader, ProgressCard, WorkListFilters } from "~/work-items/ui/list-page";
import { WORK_STATE_LABELS as STATE_LABELS } from "~/work-items/domain/work-item";
import { getDb } from "~/platform/db.server";
import { requireRole } from "~/accounts/guard.server";
import type { CaseState, MyCaseRow } from "~/annotation/annotations.server";
import { myCasesPage } from "~/annotation/my-cases-window.server";
import { myTrainingRounds, refreshMyQueue } from "~/annotation/rater-quality.server";
import { Time } from "~/ui/time";

export const meta: MetaFunction = () => [{ title: "My cases · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireRole(request, "annotator");
  // What the studies' rater-quality settings now call for joins the list first (docs/rater-quality.md).
  refreshMyQueue(getDb(), user.id);
  // One study's window of the list, as the URL asks (docs/architecture.md, "Pages are windows").
  const page = myCasesPage(getDb(), user.id, new URL(request.url).searchParams);
  return { ...page, training: myTrainingRounds(getDb(), user.id) };
}

const col = columnHelper<MyCaseRow>();

export default function AnnotateHome() {
  const { studies, window: w, counts, next, training } = useLoaderData<typeof loader>();
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  const done = counts.submitted + counts.locked;
  const columns = useMemo(
    () => [
      col.accessor("position", { id: "position", header: "#" }),
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
        title="My cases"
        next={{ to: next !== null ? `/annotate/${next}` : null, label: "Next case", testId: "next-case" }}
        allDone={total ? "All your cases are submitted. Thank you." : null}
      />
      {training.map((t) => (
        <p className="card" key={t.studyName} data-testid="training-round">
          <strong>Training round of {t.studyName}:</strong> {t.done} of {t.total} training cases done. After each one
          you see the reference label and its rationale; your cases of this study open when the round is done.
        </p>
      ))}
      {total === 0 ? (
        <p className="card">No cases are assigned to you yet. The study manager assigns them.</p>
      ) : (
        <>
          <ProgressCard
            done={done}
            total={total}
            breakdown={
              `${counts.not_started} not started · ${counts.draft} draft · ${done} submitted` +
              (counts.locked ? ` (${counts.locked === done ? "all" : counts.locked} locked)` : "")
            }
          />
          <WindowTable
            window={w}
            columns={columns}
            sortable={["position"]}
            noun="cases"
            testId="my-cases"
            rowProps={(r) => ({ "data-case": r.externalId, "data-state": r.state })}
            filters={
              <WorkListFilters
                collection={{
                  name: "study",
                  label: "Study",
                  selected: w.query.filters.study,
                  options: studies.map((s) => ({ value: s.id, label: s.name })),
                }}
                state={{
                  selected: w.query.filters.state,
                  counts,
                  states: Object.keys(STATE_LABELS) as CaseState[],
                  labels: STATE_LABELS,
                }}
              />
            }
          />
        </>
      )}
    </section>
  );
}
