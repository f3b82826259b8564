import type { ActionFunctionArgs, LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import styles from "~/evaluation/ui/model-review.css?url";
import { invariantFound, requireForm, requireRole } from "~/accounts/guard.server";
import { getDb } from "~/platform/db.server";
import { answerDraftPost } from "~/work-items/workspace-route.server";
import { WorkspacePage } from "~/work-items/ui/workspace-page";
import { getReviewerItem, REVIEWER_ROLES, resolveReviewKey, saveModelReview } from "~/evaluation/model-review.server";
import { ModelReviewValuesSchema } from "~/evaluation/domain/model-review";
import { modelReviewWorkspace } from "~/evaluation/ui/model-review-workspace";

export const meta: MetaFunction = () => [{ title: "Review a model step · Concord" }];
// A failed save keeps the workspace (and the draft) on screen: docs/architecture.md, "Saving under load".
export { clientAction, headers, shouldRevalidate } from "~/work-items/ui/save-action";
export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];

/**
 * One model step of the reviewer's queue, by its opaque key: a key that is not theirs, or a number, answers 404
 * (docs/security.md, "Clinician review of model steps"); the view is the server's blinded projection.
 */
export async function loader({ request, params }: LoaderFunctionArgs) {
  const user = await requireRole(request, [...REVIEWER_ROLES]);
  const view = invariantFound(getReviewerItem(getDb(), { userId: user.id, key: params.key }));
  return { ...view, guidelines: null };
}

/** Drafts and submissions through the work-item engine; the ownership is checked again in the save's transaction. */
export async function action({ request, params }: ActionFunctionArgs) {
  const user = await requireRole(request, [...REVIEWER_ROLES]);
  const form = await requireForm(request, user);
  const labelId = invariantFound(resolveReviewKey(getDb(), user.id, params.key));
  return answerDraftPost(form, user, String(labelId), {
    schema: ModelReviewValuesSchema,
    maxLength: 50_000,
    report: "message",
    save: (db, { id, ...input }) => saveModelReview(db, { ...input, labelId: id }),
  });
}

export default function ModelReviewItem() {
  return <WorkspacePage definition={modelReviewWorkspace} view={useLoaderData<typeof loader>()} />;
}
