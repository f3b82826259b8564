import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { requireRole } from "~/accounts/guard.server";
import { getDb } from "~/platform/db.server";
import { ListHeader, ProgressCard } from "~/work-items/ui/list-page";
import { nextOpenItem, progressOf, WORK_STATE_LABELS } from "~/work-items/domain/work-item";
import { listReviewerItems, REVIEWER_ROLES } from "~/evaluation/model-review.server";

export const meta: MetaFunction = () => [{ title: "Model steps · Concord" }];

/**
 * The reviewer's queue of model steps (docs/evaluation.md, "Clinician review of model steps"): their own items by
 * opaque key and number, in their own shuffled order; nothing about the model, the evaluation or the review.
 */
export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireRole(request, [...REVIEWER_ROLES]);
  const rows = listReviewerItems(getDb(), user.id);
  const next = nextOpenItem(rows, -1);
  return { rows, progress: progressOf(rows), next: next ? `/model-review/${next.key}` : null };
}

export default function ModelReviewHome() {
  const { rows, progress, next } = useLoaderData<typeof loader>();
  return (
    <section>
      <ListHeader
        title="Model steps to review"
        next={{ to: next, label: "Next", testId: "next-item" }}
        allDone={rows.length ? "Every step is reviewed. Thank you." : null}
      />
      {rows.length === 0 ? (
        <p className="card">No model steps are waiting for your review.</p>
      ) : (
        <>
          <ProgressCard
            done={progress.done}
            total={progress.total}
            breakdown={`${rows.filter((r) => r.state === "draft").length} drafts`}
          />
          <div className="card table-scroll">
            <table data-testid="model-steps">
              <thead>
                <tr>
                  <th>Step</th>
                  <th>State</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr key={r.key} data-state={r.state}>
                    <td>
                      <Link to={`/model-review/${r.key}`}>Model step {r.number}</Link>
                    </td>
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
