import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useNavigation, useSearchParams } from "@remix-run/react";
import { useMemo } from "react";
import { z } from "zod";
import { ActionResult, ImportedNotice } from "~/ui/admin-notices";
import { columnHelper, DataTable } from "~/ui/data-table";
import { Csrf } from "~/root";
import { getDb } from "~/platform/db.server";
import { parseIntent } from "~/platform/intent";
import { requireById, requireForm, requireRole } from "~/accounts/guard.server";
import { autoAssign, listReassignable, listStudyAnnotators, reassign } from "~/annotation/assignments.server";
import { getStudy, listStudyCases, setAdjudicationMode, type CaseRow } from "~/annotation/studies.server";
import { ADJUDICATION_MODES } from "~/accounts/roles";
import { ServiceError } from "~/accounts/users.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.study.name ?? "Study"} · Concord` }];

function studyOr404(param: string | undefined) {
  return requireById(param, (id) => getStudy(getDb(), id), "No such study.");
}

export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const study = studyOr404(params.studyId);
  const db = getDb();
  return {
    study,
    cases: listStudyCases(db, study.id),
    annotators: listStudyAnnotators(db, study.id),
    reassignable: listReassignable(db, study.id),
  };
}

const ActionSchema = z.discriminatedUnion("intent", [
  z.object({
    intent: z.literal("assign"),
    annotators: z
      .array(z.string().min(1))
      .min(2, "Choose at least two annotators: each case goes to two different people."),
    seed: z.coerce
      .number({ message: "The seed must be a whole number." })
      .int("The seed must be a whole number.")
      .min(0)
      .max(2 ** 31),
  }),
  z.object({ intent: z.literal("mode"), mode: z.enum(ADJUDICATION_MODES) }),
  z.object({
    intent: z.literal("reassign"),
    assignmentId: z.coerce.number().int().positive(),
    to: z.string().min(1, "Choose an annotator."),
  }),
]);

export async function action({ request, params }: ActionFunctionArgs) {
  const me = await requireRole(request, "admin");
  const form = await requireForm(request, me);
  const study = studyOr404(params.studyId);
  const parsed = parseIntent(form, ActionSchema, { arrays: ["annotators"] });
  if (!parsed.ok) return { ok: false as const, message: parsed.message };
  try {
    if (parsed.data.intent === "assign") {
      const r = autoAssign(getDb(), {
        studyId: study.id,
        annotatorIds: parsed.data.annotators,
        seed: parsed.data.seed,
        actorId: me.id,
      });
      return {
        ok: true as const,
        message: r.created
          ? `Assigned ${r.cases} cases (${r.created} assignments, seed ${parsed.data.seed}).`
          : "Every case already has two annotators.",
      };
    }
    if (parsed.data.intent === "mode") {
      setAdjudicationMode(getDb(), { studyId: study.id, mode: parsed.data.mode, actorId: me.id });
      return { ok: true as const, message: `Adjudication mode: ${MODE_LABELS[parsed.data.mode]}.` };
    }
    reassign(getDb(), {
      assignmentId: parsed.data.assignmentId,
      toAnnotatorId: parsed.data.to,
      actorId: me.id,
      studyId: study.id,
    });
    return { ok: true as const, message: "Reassigned." };
  } catch (e) {
    if (e instanceof ServiceError) return { ok: false as const, message: e.message };
    throw e;
  }
}

const MODE_LABELS: Record<(typeof ADJUDICATION_MODES)[number], string> = {
  two_phase: "two-phase (independent judgement first, then Annotator A/B revealed)",
  reveal_only: "reveal-only (Annotator A/B shown from the start)",
  independent_only: "independent-only (annotations never shown)",
};

const col = columnHelper<CaseRow>();

export default function StudyPage() {
  const { study, cases, annotators, reassignable } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const busy = useNavigation().state !== "idle";
  const [params] = useSearchParams();
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
  const imported = params.get("created");
  const active = annotators.filter((a) => a.active);
  return (
    <section>
      <p>
        <Link to="/admin">Studies</Link> ›
      </p>
      <div className="row">
        <h1>{study.name}</h1>
        <span className="spacer" />
        <Link to={`/admin/studies/${study.id}/progress`} className="button secondary">
          Progress and export
        </Link>
        <Link to={`/admin/studies/${study.id}/stats`} className="button secondary">
          Agreement statistics
        </Link>
        <Link to={`/admin/import?study=${encodeURIComponent(study.name)}`} className="button secondary">
          Import more notes
        </Link>
      </div>
      <ImportedNotice counts={imported !== null ? [imported, params.get("updated"), params.get("unchanged")] : null} />
      <ActionResult result={result} testId="assign-result" />

      <h2>Annotators</h2>
      <div className="grid2">
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
        <Form method="post" className="card">
          <Csrf />
          <h3 style={{ marginTop: 0 }}>Assign cases automatically</h3>
          <p className="muted">
            Every case without two annotators gets them, from the people chosen here: balanced load, never the same
            person twice, reproducible with the seed.
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
      </div>

      {reassignable.length ? (
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
      ) : null}

      <h2>Adjudication</h2>
      <Form method="post" className="row card">
        <Csrf />
        <label htmlFor="mode" style={{ margin: 0 }}>
          Mode
        </label>
        <select id="mode" name="mode" defaultValue={study.adjudicationMode}>
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

      <h2>Cases ({cases.length})</h2>
      <DataTable
        data={cases}
        columns={columns}
        filterLabel="Filter cases"
        rowProps={(r) => ({ "data-case": r.externalId })}
      />
    </section>
  );
}
