import type { LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import styles from "~/preparation/ui/preparation.css?url";
import { ListHeader, ProgressCard } from "~/work-items/ui/list-page";
import { nextOpenItem, progressOf, WORK_STATE_LABELS } from "~/work-items/domain/work-item";
import { getDb } from "~/platform/db.server";
import { requireUser } from "~/accounts/guard.server";
import { listCorrectionQueue } from "~/preparation/public.server";

export const meta: MetaFunction = () => [{ title: "Corrections · Concord" }];
export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];

/**
 * The correction queue (docs/preparation.md, "Correction"): the notes of the reviewer's projects whose translation
 * needs correction, by their opaque keys. Membership is part of the query: anyone else sees an empty list.
 */
export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  const rows = listCorrectionQueue(getDb(), user.id);
  const next = nextOpenItem(rows, -1);
  return { rows, progress: progressOf(rows), next: next ? `/preparation/corrections/${next.key}` : null };
}

export default function CorrectionQueue() {
  const { rows, progress, next } = useLoaderData<typeof loader>();
  return (
    <section>
      <p>
        <Link to="/preparation">← Minimisation review</Link>
      </p>
      <ListHeader
        title="Corrections"
        next={{ to: next, label: "Next", testId: "next-item" }}
        allDone={rows.length ? "Every note of the queue is corrected. Thank you." : null}
      />
      {rows.length === 0 ? (
        <p className="card">No note of your projects needs correction.</p>
      ) : (
        <>
          <ProgressCard
            done={progress.done}
            total={progress.total}
            breakdown={`${rows.filter((r) => r.state === "draft").length} drafts`}
          />
          <div className="card table-wrap">
            <table data-testid="correction-queue">
              <thead>
                <tr>
                  <th>Project</th>
                  <th>Note</th>
                  <th>Why</th>
                  <th>State</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr key={r.key} data-item={r.externalId} data-state={r.state}>
                    <td>{r.projectName}</td>
                    <td>
                      <Link to={`/preparation/corrections/${r.key}`}>{r.externalId}</Link>
                    </td>
                    <td>{r.reason}</td>
                    <td>
                      <span className={`badge ${r.state}`}>{WORK_STATE_LABELS[r.state]}</span>
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
