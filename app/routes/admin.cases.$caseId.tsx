import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { unlessOutOfSpace } from "~/platform/storage-errors.server";
import { z } from "zod";
import { SECTION_TITLES, type SectionKind } from "~/annotation/domain/sections";
import { getDb } from "~/platform/db.server";
import { parseId } from "~/platform/forms";
import { requireById, requireForm, requireRole } from "~/accounts/guard.server";
import { Csrf } from "~/root";
import { reopenDecision } from "~/adjudication/adjudication.server";
import { listCaseEvents } from "~/audit/audit.server";
import { getAdminCase } from "~/annotation/cases.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `Case ${data?.case.externalId ?? ""} · Concord` },
];

// A refused reopen keeps its message on this page: the loader is not re-run after a 4xx/5xx answer.
export { shouldRevalidate } from "~/work-items/ui/save-action";

export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  const c = requireById(params.caseId, (id) => getAdminCase(db, id), "No such case.");
  return { case: c, events: listCaseEvents(db, c.id) };
}

const ReopenSchema = z.object({
  reason: z.string().trim().min(1, "Say why the decision is reopened.").max(2000),
  outcomeVersion: z.coerce.number().int().min(0),
});

export async function action({ request, params }: ActionFunctionArgs) {
  const me = await requireRole(request, "admin");
  const form = await requireForm(request, me);
  const caseId = parseId(params.caseId);
  const parsed = ReopenSchema.safeParse({ reason: form.get("reason") ?? "", outcomeVersion: form.get("outcomeVersion") });
  if (caseId === null) return data({ ok: false, message: "No such case." }, 404);
  if (!parsed.success) return data({ ok: false, message: parsed.error.issues[0]!.message }, 422);
  const r = unlessOutOfSpace(() =>
    reopenDecision(getDb(), { adminId: me.id, caseId, reason: parsed.data.reason, outcomeVersion: parsed.data.outcomeVersion }),
  );
  // A refusal (409: the outcome changed since this page was read) answers with its status and is shown in place.
  return r.ok
    ? data({ ok: true, message: "Reopened: the case is back in the adjudication queue." }, 200)
    : data({ ok: false, message: r.message }, r.status);
}

export default function AdminCase() {
  const { case: c, events } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  return (
    <section>
      <p>
        <Link to="/admin">Studies</Link> › <Link to={`/admin/studies/${c.studyId}`}>{c.studyName}</Link> ›
      </p>
      <h1>Case {c.externalId}</h1>
      <dl className="kv card">
        <dt>Sections</dt>
        <dd>{c.sections.length}</dd>
        <dt>Age group</dt>
        <dd>{c.ageGroup || "—"}</dd>
        <dt>Sex</dt>
        <dd>{c.sex || "—"}</dd>
        <dt>Text version</dt>
        <dd>{c.version}</dd>
        {c.referenceLabels ? (
          <>
            <dt>Reference labels</dt>
            <dd>
              <code>{JSON.stringify(c.referenceLabels)}</code>
            </dd>
          </>
        ) : null}
      </dl>
      {c.outcome ? (
        <div className="card" data-testid="outcome">
          <h2 style={{ marginTop: 0 }}>Outcome: {c.outcome.status}</h2>
          {c.outcome.disputeReason ? <p>Disagreement on {c.outcome.disputeReason}.</p> : <p>The annotators agreed.</p>}
          {c.outcome.gold ? (
            <p>
              Gold label: <code>{JSON.stringify(c.outcome.gold)}</code>
            </p>
          ) : null}
          {c.adjudications.map((a) => (
            <p key={a.id} className="muted">
              Adjudication by {a.adjudicator} ({a.status}): independent <code>{a.independentLabel ? JSON.stringify(a.independentLabel) : "—"}</code>, final{" "}
              <code>{a.finalLabel ? JSON.stringify(a.finalLabel) : "—"}</code>
              {a.rationale ? `, rationale: ${a.rationale}` : ""}
            </p>
          ))}
          {c.outcome.status === "adjudicated" ? (
            <Form method="post" className="row">
              <Csrf />
              <input type="hidden" name="outcomeVersion" value={c.outcome.version} />
              <input
                type="text"
                name="reason"
                placeholder="Why reopen this decision?"
                aria-label="Reason for reopening"
                style={{ flex: 1 }}
              />
              <button type="submit" className="secondary">
                Reopen decision
              </button>
            </Form>
          ) : null}
          {result ? <p className={`notice ${result.ok ? "ok" : "bad"}`}>{result.message}</p> : null}
        </div>
      ) : null}
      {c.sections.map((s) => (
        <article key={s.order} className="note-section">
          <h3>
            <span className="num">{s.order}</span> {SECTION_TITLES[s.kind as SectionKind] ?? s.kind}
          </h3>
          <p>{s.content}</p>
        </article>
      ))}
      <h2>History</h2>
      <table>
        <thead>
          <tr>
            <th>When (UTC)</th>
            <th>Who</th>
            <th>What</th>
            <th>Changes</th>
          </tr>
        </thead>
        <tbody>
          {events.map((e) => (
            <tr key={e.id}>
              <td>{new Date(e.at).toISOString().replace("T", " ").slice(0, 19)}</td>
              <td>{e.actor ?? "system"}</td>
              <td>
                {e.entity} {e.action}
              </td>
              <td>
                <code style={{ whiteSpace: "pre-wrap" }}>{JSON.stringify(e.changes)}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
