/** The parts of a study's admin page: annotators and assignment, reassignment, adjudication mode, cases. */
import { Form, Link } from "@remix-run/react";
import { useMemo } from "react";
import { columnHelper, DataTable } from "~/ui/data-table";
import { Csrf } from "~/root";
import type { listReassignable, listStudyAnnotators } from "~/annotation/assignments.server";
import type { CaseRow } from "~/annotation/studies.server";
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
    <>
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
    </>
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

/** Moving unstarted cases to another active annotator. */
export function ReassignSection({
  reassignable,
  annotators,
  busy,
}: {
  reassignable: ReturnType<typeof listReassignable>;
  annotators: Annotators;
  busy: boolean;
}) {
  const active = annotators.filter((a) => a.active);
  return (
    <>
      <details>
        <summary>
          <h2 style={{ display: "inline" }}>Reassign unstarted cases ({reassignable.length})</h2>
        </summary>
        <table>
          <thead>
            <tr>
              <th>Case</th>
              <th>Annotator</th>
              <th>Move to</th>
            </tr>
          </thead>
          <tbody>
            {reassignable.map((r) => (
              <tr key={r.assignmentId}>
                <td>{r.externalId}</td>
                <td>
                  {r.annotator} {r.annotatorActive ? null : <span className="badge">deactivated</span>}
                </td>
                <td>
                  <Form method="post" className="row">
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
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </>
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

/** The study's cases, each linking to its admin page. */
export function CasesTable({ cases }: { cases: CaseRow[] }) {
  const columns = useMemo(
    () => [
      col.accessor("position", { header: "#" }),
      col.accessor("externalId", {
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
    <>
      <DataTable
        data={cases}
        columns={columns}
        filterLabel="Filter cases"
        rowProps={(r) => ({ "data-case": r.externalId })}
      />
    </>
  );
}
