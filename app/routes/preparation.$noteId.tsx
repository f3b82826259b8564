import type { ActionFunctionArgs, LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import styles from "~/preparation/ui/preparation.css?url";
import { requireById, requireForm, requireUser } from "~/accounts/guard.server";
import { getDb } from "~/platform/db.server";
import { answerDraftPost } from "~/work-items/workspace-route.server";
import { getReviewNote, MinimisationValuesSchema, saveMinimisationReview } from "~/preparation/public.server";
import { WorkspacePage } from "~/work-items/ui/workspace-page";
import { minimisationWorkspace } from "~/preparation/public";

export const meta: MetaFunction = () => [{ title: "Minimisation review · Concord" }];
// A failed save keeps the workspace (and the draft) on screen: docs/architecture.md, "Saving under load".
export { clientAction, headers, shouldRevalidate } from "~/work-items/ui/save-action";
export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];

/**
 * A note of a preparation project that names the user as a reviewer; any other note answers 404, whatever the
 * user's roles (docs/security.md, "Source text"): the membership is in the query.
 */
export async function loader({ request, params }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  const db = getDb();
  const view = requireById(params.noteId, (noteId) => getReviewNote(db, { userId: user.id, noteId }));
  return { ...view, guidelines: null };
}

/** Drafts and submissions through the work-item engine; the membership is checked again in the save's transaction. */
export async function action({ request, params }: ActionFunctionArgs) {
  const user = await requireUser(request);
  const form = await requireForm(request, user);
  return answerDraftPost(form, user, params.noteId, {
    schema: MinimisationValuesSchema,
    maxLength: 200_000,
    save: (db, { id: noteId, ...input }) => saveMinimisationReview(db, { ...input, noteId }),
  });
}

export default function MinimisationReview() {
  return <WorkspacePage definition={minimisationWorkspace} view={useLoaderData<typeof loader>()} />;
}
