import type { LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import styles from "~/preparation/ui/preparation.css?url";
import { ListHeader, ProgressCard } from "~/work-items/ui/list-page";
import { nextOpenItem, progressOf, WORK_STATE_LABELS } from "~/work-items/domain/work-item";
import { getDb } from "~/platform/db.server";
import { requireUser } from "~/accounts/guard.server";
import { listCorrectionQueue, listReviewerNotes } from "~/preparation/public.server";

export const meta: MetaFunction = () => [{ title: "Preparation · Concord" }];
export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];

/**
 * The reviewer's list: the notes of the preparation projects that name them (docs/preparation.md, "The review").
 * Membership is part of the query: anyone else sees an empty list (docs/security.md, "Source text").
 */
export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  const db = getDb();
  const rows = listReviewerNotes(db, user.id);
  const next = nextOpenItem(rows, -1);
  const corrections = listCorrectionQueue(db, user.id);
  return {
    rows,
    progress: progressOf(rows),
    next: next ? `/preparation/${next.noteId}` : null,
    corrections: { total: corrections.length, open: progressOf(corrections) },
  };
}

export default function PreparationHome() {
  const { rows, progress, next, corrections } = useLoaderData<typeof loader>();
  return (
    <section>
      <ListHeader
        title="Preparation"
        next={{ to: next, label: "Next", testId: "next-item" }}
        allDone={rows.length ? "Every note is reviewed. Thank you." : null}
      />
      {corrections.total ? (
        <p className="card" data-testid="correction-link">
          <Link to="/preparation/corrections">Corrections</Link>: {corrections.total - corrections.open.done} of{" "}
          {corrections.total} translated notes wait for your correction.
        </p>
      ) : null}
      {rows.length === 0 ? (
        <p className="card">No preparation project names you as a reviewer.</p>
      ) : (
        <>
          <ProgressCard
            done={progress.done}
            total={progress.total}
            breakdown={`${rows.filter((r) => r.excluded).length} excluded`}
          />
          <div className="card table-wrap">
            <table data-testid="prep-notes">
              <thead>
                <tr>
                  <th>Project</th>
                  <th>Note</th>
                  <th>Proposals</th>
                  <th>State</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr key={r.noteId} data-item={r.externalId} data-state={r.state}>
                    <td>{r.projectName}</td>
                    <td>
                      <Link to={`/preparation/${r.noteId}`}>{r.externalId}</Link>
                    </td>
                    <td>{r.proposals}</td>
                    <td>
                      <span className={`badge ${r.state}`}>{WORK_STATE_LABELS[r.state]}</span>
                      {r.excluded ? <span className="badge"> excluded</span> : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
