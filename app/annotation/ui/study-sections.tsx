/** The parts of a study's admin page: annotators and assignment, reassignment, adjudication mode, cases (windows). */
import { Form, Link, useSearchParams } from "@remix-run/react";
import { useMemo } from "react";
import { columnHelper } from "~/ui/data-table";
import { WindowTable } from "~/ui/window-table";
import { Csrf } from "~/ui/root-data";
import type { AssignmentRow, listStudyAnnotators } from "~/annotation/assignments.server";
import { ASSIGNMENT_STATES, type AssignmentState } from "~/annotation/domain/assignment";
import type { CaseRow } from "~/annotation/studies.server";
import type { ListWindow } from "~/platform/list-window";
import { ADJUDICATION_MODES, type AdjudicationMode } from "~/accounts/roles";

type Annotators = ReturnType<typeof listStudyAnnotators>;

export const MODE_LABELS: Record<(typeof ADJUDICATION_MODES)[number], string> = {
  two_phase: "two-phase (independent judgement first, then Annotator A/B revealed)",
  reveal_only: "reveal-only (Annotator A/B shown from the start)",
  independent_only: "independent-only (annotations never shown)",
};

/** Each annotator's assigned, started and submitted cases. */
export function AnnotatorsTable({ annotators }: { annotators: Annotators }) {
  return (
    <div className="table-scroll">
      <table>
        <thead>
          <tr>
            <th>Annotator</th>
            <th className="num">Assigned</th>
            <th className="num">Started</th>
            <th className="num">Submitted</th>
          </tr>
        </thead>
        <tbody>
          {annotators.map((a) => (
            <tr key={a.id} data-annotator={a.username}>
              <td>
                {a.username} {a.active ? null : <span className="badge">deactivated</span>}
              </td>
              <td className="num">{a.assigned}</td>
              <td className="num">{a.started}</td>
              <td className="num">{a.submitted}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Assigning every case two annotators from the active ones chosen here, reproducibly with the seed. */
export function AssignForm({ annotators, busy }: { annotators: Annotators; busy: boolean }) {
  const active = annotators.filter((a) => a.active);
  return (
    <>
      <Form method="post" className="card">
        <Csrf />
        <h3 style={{ marginTop: 0 }}>Assign cases automatically</h3>
        <p className="muted">
          Every case without two annotators gets them, from the people chosen here: balanced load, never the same person
          twice, reproducible with the seed.
        </p>
        {active.map((a) => (
          <label key={a.id} className="inline">
            <input type="checkbox" name="annotators" value={a.id} defaultChecked /> {a.username}
          </label>
        ))}
        <label htmlFor="seed">Seed</label>
        <input id="seed" name="seed" type="number" defaultValue={1} min={0} />
        <p>
          <button type="submit" name="intent" value="assign" disabled={busy}>
            Assign
          </button>
        </p>
      </Form>
    </>
  );
}

/** The study's assignments, one window at a time, each unstarted one movable to another active annotator. */
export function AssignmentsSection({
  assignments: w,
  annotators,
  busy,
}: {
  assignments: ListWindow<AssignmentRow>;
  annotators: Annotators;
  busy: boolean;
}) {
  const active = annotators.filter((a) => a.active);
  const columns = useMemo(
    () => [
      acol.accessor("externalId", { header: "Case" }),
      acol.accessor("annotator", {
        header: "Annotator",
        cell: (i) => (
          <>
            {i.getValue()} {i.row.original.annotatorActive ? null : <span className="badge">deactivated</span>}
          </>
        ),
      }),
      acol.accessor("state", { header: "State", cell: (i) => ASSIGNMENT_STATE_LABELS[i.getValue()] }),
      acol.display({
        id: "move",
        header: "Move to",
        cell: (i) => {
          const r = i.row.original;
          if (r.state !== "unstarted") return <span className="muted">started</span>;
          return (
            <Form method="post" className="row" preventScrollReset>
              <Csrf />
              <input type="hidden" name="assignmentId" value={r.assignmentId} />
              <select name="to" aria-label={`Move case ${r.externalId} from ${r.annotator} to`} defaultValue="">
                <option value="">Choose…</option>
                {active
                  .filter((a) => a.id !== r.annotatorId)
                  .map((a) => (
                    <option key={a.id} value={a.id}>
                      {a.username}
                    </option>
                  ))}
              </select>
              <button type="submit" name="intent" value="reassign" className="secondary" disabled={busy}>
                Reassign
              </button>
            </Form>
          );
        },
      }),
    ],
    [active, busy],
  );
  const f = w.query.filters as Record<string, string>;
  return (
    <WindowTable
      window={w}
      columns={columns}
      sortable={[]}
      noun="assignments"
      testId="assignments"
      rowProps={(r) => ({ "data-assignment": String(r.assignmentId), "data-case": r.externalId })}
      filters={
        <>
          <select name="a_annotator" aria-label="Annotator" defaultValue={f.annotator ?? ""}>
            <option value="">Every annotator</option>
            {annotators.map((a) => (
              <option key={a.id} value={a.id}>
                {a.username}
              </option>
            ))}
          </select>
          <select name="a_state" aria-label="State" defaultValue={f.state ?? ""}>
            <option value="">Any state</option>
            {ASSIGNMENT_STATES.map((s) => (
              <option key={s} value={s}>
                {ASSIGNMENT_STATE_LABELS[s]}
              </option>
            ))}
          </select>
        </>
      }
    />
  );
}

const ASSIGNMENT_STATE_LABELS: Record<AssignmentState, string> = {
  unstarted: "not started",
  draft: "draft",
  done: "submitted",
};

const acol = columnHelper<AssignmentRow>();

export interface BulkPlan {
  from: string;
  to: string;
  move: number;
  blocked: number;
}

/**
 * Moving all of one annotator's unstarted work in the study to another: first counted (a GET: the count shows in
 * the page, nothing moves), then confirmed with that count; the server checks it again as it writes.
 */
export function BulkReassignForm({
  annotators,
  plan,
  busy,
}: {
  annotators: Annotators;
  plan: BulkPlan | null;
  busy: boolean;
}) {
  const [params] = useSearchParams();
  const name = (id: string) => annotators.find((a) => a.id === id)?.username ?? "?";
  const kept = [...params.entries()].filter(([k]) => k !== "move_from" && k !== "move_to");
  return (
    <div className="card" data-testid="bulk-reassign">
      <h3 style={{ marginTop: 0 }}>Move unstarted work</h3>
      <Form method="get" className="row" preventScrollReset>
        {kept.map(([k, v]) => (
          <input key={k} type="hidden" name={k} value={v} />
        ))}
        <label htmlFor="move_from" style={{ margin: 0 }}>
          Every unstarted case of
        </label>
        <select id="move_from" name="move_from" defaultValue={plan?.from ?? ""} required>
          <option value="">Choose…</option>
          {annotators.map((a) => (
            <option key={a.id} value={a.id}>
              {a.username}
            </option>
          ))}
        </select>
        <label htmlFor="move_to" style={{ margin: 0 }}>
          to
        </label>
        <select id="move_to" name="move_to" defaultValue={plan?.to ?? ""} required>
          <option value="">Choose…</option>
          {annotators
            .filter((a) => a.active)
            .map((a) => (
              <option key={a.id} value={a.id}>
                {a.username}
              </option>
            ))}
        </select>
        <button type="submit" className="secondary">
          Count
        </button>
      </Form>
      {plan ? (
        <Form method="post" className="row" preventScrollReset>
          <Csrf />
          <input type="hidden" name="from" value={plan.from} />
          <input type="hidden" name="to" value={plan.to} />
          <input type="hidden" name="expected" value={plan.move} />
          <p data-testid="bulk-plan" style={{ margin: 0 }}>
            {plan.move} unstarted assignment(s) of {name(plan.from)} move to {name(plan.to)}
            {plan.blocked ? `; ${plan.blocked} stay, as ${name(plan.to)} is already on their case` : ""}.
          </p>
          <button
            type="submit"
            name="intent"
            value="reassign_all"
            disabled={busy || plan.move === 0 || plan.from === plan.to}
          >
            Move {plan.move}
          </button>
        </Form>
      ) : null}
    </div>
  );
}

/** The study's adjudication mode. */
export function AdjudicationModeForm({ mode, busy }: { mode: AdjudicationMode; busy: boolean }) {
  return (
    <>
      <Form method="post" className="row card">
        <Csrf />
        <label htmlFor="mode" style={{ margin: 0 }}>
          Mode
        </label>
        <select id="mode" name="mode" defaultValue={mode}>
          {ADJUDICATION_MODES.map((m) => (
            <option key={m} value={m}>
              {MODE_LABELS[m]}
            </option>
          ))}
        </select>
        <button type="submit" name="intent" value="mode" className="secondary" disabled={busy}>
          Save
        </button>
        <small className="muted">Recorded in the export manifest.</small>
      </Form>
    </>
  );
}

const col = columnHelper<CaseRow>();

/** One window of the study's cases, each linking to its admin page. */
export function CasesTable({ cases }: { cases: ListWindow<CaseRow> }) {
  const columns = useMemo(
    () => [
      col.accessor("position", { id: "position", header: "#" }),
      col.accessor("externalId", {
        id: "externalId",
        header: "Case id",
        cell: (info) => <Link to={`/admin/cases/${info.row.original.id}`}>{info.getValue()}</Link>,
      }),
      col.accessor("numSections", { header: "Sections" }),
      col.accessor("ageGroup", { header: "Age group" }),
      col.accessor("sex", { header: "Sex" }),
      col.accessor((r) => (r.hasReferenceLabels ? "yes" : ""), { id: "reference", header: "Reference labels" }),
      col.accessor("version", { header: "Version" }),
    ],
    [],
  );
  return (
    <WindowTable
      window={cases}
      columns={columns}
      sortable={["position", "externalId"]}
      filterLabel="Case id starts with"
      noun="cases"
      testId="cases"
      rowProps={(r) => ({ "data-case": r.externalId })}
    />
  );
}
