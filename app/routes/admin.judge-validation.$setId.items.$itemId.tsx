import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { raterAction, type InfoRequest, type PrimaryAnswer } from "~/evaluation/domain/judge";
import { getDb } from "~/platform/db.server";
import { requireById, requireRole } from "~/accounts/guard.server";
import { getItemDetail } from "~/judge-validation/judge-candidates.server";
import { ChangesTable, stringsIn, type ReadableNames } from "~/audit/ui/readable-values";
import { usernamesOf } from "~/accounts/users.server";
import { getJudgeSet } from "~/judge-validation/judge-sets.server";
import { Time } from "~/ui/time";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `${data?.detail.item.annotationId ?? "Response"} · ${data?.set.name ?? ""} · Concord` },
];

/** One sampled response for the admin: its key, every rater's labels, the judges' outputs and the audit trail. */
export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  const set = requireById(params.setId, (id) => getJudgeSet(db, id), "No such validation set.");
  const detail = requireById(params.itemId, (itemId) => getItemDetail(db, { setId: set.id, itemId }));
  // The trail records user ids (a rating's owner, a reassignment): the admin reads usernames.
  const names: ReadableNames = { users: usernamesOf(db, stringsIn(detail.events.map((e) => e.changes))), icd10: {} };
  return { set: { id: set.id, name: set.name }, detail, names };
}

const when = (at: number | null) => (at ? <Time at={at} style="seconds" /> : "");

export default function JudgeItemPage() {
  const { set, detail, names } = useLoaderData<typeof loader>();
  const { item } = detail;
  return (
    <section>
      <p>
        <Link to="/admin/judge-validation">Judge validation</Link> ›{" "}
        <Link to={`/admin/judge-validation/${set.id}`}>{set.name}</Link> ›
      </p>
      <h1>Response {item.annotationId}</h1>
      <div className="grid2">
        <article className="note-section">
          <h3>Model response</h3>
          <p style={{ whiteSpace: "pre-wrap" }}>{item.text || <em className="muted">(empty)</em>}</p>
        </article>
        <dl className="kv card" aria-label="Key">
          <dt>Model</dt>
          <dd>{item.model}</dd>
          <dt>Strategy</dt>
          <dd>{item.strategy}</dd>
          <dt>Run</dt>
          <dd>{item.sourceRun}</dd>
          <dt>Sample / step</dt>
          <dd>
            {item.sampleId} / {item.stepIndex ?? "—"} {item.isLastSection ? "(last section)" : ""}
          </dd>
          <dt>Bucket</dt>
          <dd>{item.bucket}</dd>
          <dt>Derived action</dt>
          <dd>{item.derivedAction}</dd>
        </dl>
      </div>
      <h2>Raters</h2>
      <table>
        <thead>
          <tr>
            <th>Rater</th>
            <th>State</th>
            <th>Primary answer</th>
            <th>Information request</th>
            <th>Action</th>
            <th>ICD codes</th>
            <th>Names</th>
            <th>Notes</th>
            <th>Saved</th>
          </tr>
        </thead>
        <tbody>
          {detail.ratings.map((r) => (
            <tr key={r.id}>
              <td>{r.rater}</td>
              <td>{r.status}</td>
              <td>{r.primaryAnswer ?? "—"}</td>
              <td>{r.infoRequest ?? "—"}</td>
              <td>
                {raterAction(r.primaryAnswer as PrimaryAnswer | null, r.infoRequest as InfoRequest | null) ?? "—"}
              </td>
              <td>{r.icdCodes}</td>
              <td>{r.diagnosisNames}</td>
              <td>{r.notes}</td>
              <td>{when(r.updatedAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {detail.outputs.length ? (
        <>
          <h2>Candidate judges</h2>
          <table>
            <thead>
              <tr>
                <th>Judge</th>
                <th>Primary answer</th>
                <th>Information request</th>
                <th>Action</th>
                <th>Raw output</th>
              </tr>
            </thead>
            <tbody>
              {detail.outputs.map((o) => (
                <tr key={o.judge}>
                  <td>{o.judge}</td>
                  <td>{o.primaryAnswer ?? "—"}</td>
                  <td>{o.infoRequest ?? "—"}</td>
                  <td>{o.action ?? "—"}</td>
                  <td>
                    <pre style={{ margin: 0, whiteSpace: "pre-wrap" }}>{o.raw ?? ""}</pre>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
      <h2>History</h2>
      <table data-testid="history">
        <thead>
          <tr>
            <th>When</th>
            <th>Who</th>
            <th>Rating of</th>
            <th>Action</th>
            <th>Changes (old → new)</th>
          </tr>
        </thead>
        <tbody>
          {detail.events.map((e) => (
            <tr key={e.id}>
              <td>{when(e.at)}</td>
              <td>{e.actor ?? "(system)"}</td>
              <td>{e.rating}</td>
              <td>{e.action}</td>
              <td>
                <ChangesTable changes={e.changes as Record<string, unknown>} names={names} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
