import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { unlessOutOfSpace } from "~/platform/storage-errors.server";
import { BUSY_REQUEST_MESSAGE } from "~/platform/busy-answer.server";
import { z } from "zod";
import { SECTION_TITLES, type SectionKind } from "~/annotation/domain/sections";
import { getDb } from "~/platform/db.server";
import { parseId } from "~/platform/forms";
import { requireById, requireForm, requireRole } from "~/accounts/guard.server";
import { Csrf } from "~/ui/root-data";
import { reopenDecision } from "~/adjudication/adjudication.server";
import { caseEventsWindow, type EventView } from "~/audit/audit.server";
import { columnHelper } from "~/ui/data-table";
import { WindowTable } from "~/ui/window-table";
import { useMemo } from "react";
import type { ListWindow } from "~/platform/list-window";
import { getAdminCase } from "~/annotation/cases.server";
import { usernamesOf } from "~/accounts/users.server";
import { icd10Index } from "~/icd10/icd10.server";
import { ChangesTable, codeWithTitle, labelText, stringsIn, type ReadableNames } from "~/audit/ui/readable-values";
import { Time } from "~/ui/time";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `Case ${data?.case.externalId ?? ""} · Concord` },
];

// A refused reopen keeps its message on this page: the loader is not re-run after a 4xx/5xx answer.
export { shouldRevalidate } from "~/work-items/ui/save-action";

export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  const c = requireById(params.caseId, (id) => getAdminCase(db, id), "No such case.");
  // One window of the history (prefix h_), as the URL asks (docs/architecture.md, "Pages are windows").
  const events = caseEventsWindow(db, c.id, new URL(request.url).searchParams);
  const adjudications = c.adjudications.map((a) => ({
    ...a,
    independentLabel: (a.independentLabel ?? null) as Record<string, unknown> | null,
    finalLabel: (a.finalLabel ?? null) as Record<string, unknown> | null,
  }));
  // Every string on the page is a candidate user id or ICD-10 code; only those that name one are resolved.
  const strings = stringsIn([
    events.rows.map((e) => e.changes),
    adjudications,
    c.annotations,
    c.outcome,
    c.referenceLabels,
  ]);
  const index = icd10Index();
  const icd10: Record<string, string> = {};
  for (const s of new Set(strings)) {
    const entry = /^[Ff]\d/.test(s) ? index.lookup(s) : null;
    if (entry) icd10[s] = entry.title;
  }
  const names: ReadableNames = { users: usernamesOf(db, strings), icd10 };
  return { case: { ...c, adjudications }, events, names };
}

const ReopenSchema = z.object({
  reason: z.string().trim().min(1, "Say why the decision is reopened.").max(2000),
  outcomeVersion: z.coerce.number().int().min(0),
});

export async function action({ request, params }: ActionFunctionArgs) {
  const me = await requireRole(request, "admin");
  const form = await requireForm(request, me);
  const caseId = parseId(params.caseId);
  const parsed = ReopenSchema.safeParse({
    reason: form.get("reason") ?? "",
    outcomeVersion: form.get("outcomeVersion"),
  });
  if (caseId === null) return data({ ok: false, message: "No such case." }, 404);
  if (!parsed.success) return data({ ok: false, message: parsed.error.issues[0]!.message }, 422);
  const r = unlessOutOfSpace(() =>
    reopenDecision(getDb(), {
      adminId: me.id,
      caseId,
      reason: parsed.data.reason,
      outcomeVersion: parsed.data.outcomeVersion,
    }),
  );
  // A refusal (409: the outcome changed since this page was read; 503: the write lock is held elsewhere) answers with
  // its status and is shown in place, the reason typed kept in its field.
  if (r.ok) return data({ ok: true, message: "Reopened: the case is back in the adjudication queue." }, 200);
  return data({ ok: false, message: r.status === 503 ? BUSY_REQUEST_MESSAGE : r.message }, r.status);
}

export default function AdminCase() {
  const { case: c, events, names } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  return (
    <section>
      <p>
        <Link to="/admin">Studies</Link> › <Link to={`/admin/studies/${c.studyId}`}>{c.studyName}</Link> ›
      </p>
      <h1>Case {c.externalId}</h1>
      <p>
        <a href={`/admin/cases/${c.id}/export`} download={`case-${c.externalId}.json`}>
          Download as JSON
        </a>{" "}
        <span className="muted">(the case's labels, annotations and history as stored)</span>
      </p>
      <dl className="kv card">
        <dt>Sections</dt>
        <dd>{c.sections.length}</dd>
        <dt>Age group</dt>
        <dd>{c.ageGroup || "—"}</dd>
        <dt>Sex</dt>
        <dd>{c.sex || "—"}</dd>
        <dt>Text version</dt>
        <dd>{c.version}</dd>
      </dl>
      {c.referenceLabels ? <ReferenceLabels labels={c.referenceLabels} names={names} /> : null}
      {c.outcome ? (
        <div className="card" data-testid="outcome">
          <h2 style={{ marginTop: 0 }}>Outcome: {c.outcome.status}</h2>
          {c.outcome.disputeReason ? <p>Disagreement on {c.outcome.disputeReason}.</p> : <p>The annotators agreed.</p>}
          {c.outcome.gold ? (
            <p data-testid="gold-label">Gold label: {labelText(c.outcome.gold as Record<string, unknown>, names)}</p>
          ) : null}
          {c.adjudications.length ? (
            <table data-testid="adjudications">
              <caption>Adjudications</caption>
              <thead>
                <tr>
                  <th>Adjudicator</th>
                  <th>Status</th>
                  <th>Independent judgement</th>
                  <th>Final label</th>
                  <th>Rationale</th>
                </tr>
              </thead>
              <tbody>
                {c.adjudications.map((a) => (
                  <tr key={a.id}>
                    <td>{a.adjudicator}</td>
                    <td>{a.status}</td>
                    <td>{a.independentLabel ? labelText(a.independentLabel, names) : "—"}</td>
                    <td>{a.finalLabel ? labelText(a.finalLabel, names) : "—"}</td>
                    <td className="prose-cell">{a.rationale || "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
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
      {c.annotations.length ? (
        <>
          <h2>Annotations</h2>
          <table data-testid="annotations">
            <thead>
              <tr>
                <th>Annotator</th>
                <th>Status</th>
                <th>Sufficiency</th>
                <th>ICD-10</th>
                <th>Earliest section</th>
                <th>Missing information</th>
                <th>Notes</th>
              </tr>
            </thead>
            <tbody>
              {c.annotations.map((a) => (
                <tr key={a.id}>
                  <td>{a.annotator}</td>
                  <td>{a.status}</td>
                  <td>{a.sufficiency ?? "—"}</td>
                  <td>{codeWithTitle(a.icd10, names)}</td>
                  <td>{a.earliestSection ?? "—"}</td>
                  <td>
                    {a.sufficiency === "insufficient"
                      ? labelText(
                          { sufficiency: "insufficient", missingInfo: a.missingInfo, missingOther: a.missingOther },
                          names,
                        ).replace(/^insufficient · missing: /, "")
                      : "—"}
                  </td>
                  <td className="prose-cell">{a.notes || "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
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
      <HistoryTable events={events} names={names} />
    </section>
  );
}

/** The case's entities whose changes the history records (the filter's choices). */
const HISTORY_ENTITIES = [
  "case",
  "assignment",
  "annotation",
  "case_outcome",
  "adjudication",
  "adjudication_draft",
  "reference_labels",
  "quality_item",
  "calibration_case",
] as const;

const eventCol = columnHelper<EventView>();

/** The case's history, a window of it, oldest first unless sorted otherwise. */
function HistoryTable({ events, names }: { events: ListWindow<EventView>; names: ReadableNames }) {
  const columns = useMemo(
    () => [
      eventCol.accessor((e) => e.at, {
        id: "id",
        header: "When",
        cell: ({ getValue }) => <Time at={getValue()} style="seconds" />,
      }),
      eventCol.accessor((e) => e.actor ?? "system", { id: "actor", header: "Who" }),
      eventCol.accessor((e) => `${e.entity} ${e.action}`, { id: "what", header: "What" }),
      eventCol.display({
        id: "changes",
        header: "Changes",
        cell: (info) => <ChangesTable changes={info.row.original.changes} names={names} />,
      }),
    ],
    [names],
  );
  return (
    <WindowTable
      window={events}
      columns={columns}
      sortable={["id"]}
      noun="events"
      testId="history"
      filters={
        <select
          name="h_entity"
          aria-label="What changed"
          defaultValue={(events.query.filters as Record<string, string>).entity}
        >
          <option value="">Every change</option>
          {HISTORY_ENTITIES.map((e) => (
            <option key={e} value={e}>
              {e.replace(/_/g, " ")}
            </option>
          ))}
        </select>
      }
    />
  );
}

const REFERENCE_FIELDS = [
  ["diagnosisSufficiency", "Diagnosis sufficiency"],
  ["diagnosisSufficiencyAgreement", "Sufficiency agreement"],
  ["diagnosis", "Diagnosis"],
  ["diagnosisAgreement", "Diagnosis agreement"],
  ["earliestSufficientSection", "Earliest sufficient section"],
  ["sourceDiagnosis", "Source diagnosis"],
] as const;

/** The imported reference labels, one row per field, codes with their titles. */
function ReferenceLabels({ labels, names }: { labels: Record<string, unknown>; names: ReadableNames }) {
  return (
    <table data-testid="reference-labels">
      <caption>Reference labels</caption>
      <tbody>
        {REFERENCE_FIELDS.map(([key, title]) => {
          const v = labels[key];
          const text = typeof v === "string" && v ? (names.icd10[v] ? codeWithTitle(v, names) : v) : "—";
          return (
            <tr key={key}>
              <th scope="row">{title}</th>
              <td>{text}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
