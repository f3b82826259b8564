import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { z } from "zod";
import { SECTION_TITLES, type SectionKind } from "~/core/sections";
import { getDb } from "~/lib/db.server";
import { invariantFound, requireRole } from "~/lib/guard.server";
import { listCaseEvents } from "~/services/audit.server";
import { getAdminCase } from "~/services/cases.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `Case ${data?.case.externalId ?? ""} · Concord` }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const id = z.coerce.number().int().positive().safeParse(params.caseId);
  const db = getDb();
  const c = invariantFound(id.success ? getAdminCase(db, id.data) : null, "No such case.");
  return { case: c, events: listCaseEvents(db, c.id) };
}

export default function AdminCase() {
  const { case: c, events } = useLoaderData<typeof loader>();
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
