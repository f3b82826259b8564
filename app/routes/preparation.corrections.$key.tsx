import type { ActionFunctionArgs, LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import styles from "~/preparation/ui/preparation.css?url";
import { invariantFound, requireForm, requireUser } from "~/accounts/guard.server";
import { getDb } from "~/platform/db.server";
import { answerDraftPost } from "~/work-items/workspace-route.server";
import {
  CorrectionValuesSchema,
  getCorrection,
  resolveCorrectionKey,
  saveCorrection,
} from "~/preparation/public.server";
import { WorkspacePage } from "~/work-items/ui/workspace-page";
import { correctionWorkspace } from "~/preparation/public";

export const meta: MetaFunction = () => [{ title: "Translation correction · Concord" }];
// A failed save keeps the workspace (and the draft) on screen: docs/architecture.md, "Saving under load".
export { clientAction, headers, shouldRevalidate } from "~/work-items/ui/save-action";
export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];

/**
 * A note of the correction queue by its opaque key, for a reviewer its project names; any other key, or anyone
 * else, answers 404 whatever their roles (docs/security.md, "Source text"): the membership is in the query.
 */
export async function loader({ request, params }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  const db = getDb();
  const id = invariantFound(resolveCorrectionKey(db, user.id, params.key));
  const view = invariantFound(getCorrection(db, { userId: user.id, id }));
  return { ...view, guidelines: null };
}

/** Drafts and submissions through the work-item engine; the membership is checked again in the save's transaction. */
export async function action({ request, params }: ActionFunctionArgs) {
  const user = await requireUser(request);
  const form = await requireForm(request, user);
  const id = invariantFound(resolveCorrectionKey(getDb(), user.id, params.key));
  return answerDraftPost(form, user, String(id), {
    schema: CorrectionValuesSchema,
    maxLength: 600_000,
    save: (db, input) => saveCorrection(db, input),
  });
}

export default function TranslationCorrection() {
  return <WorkspacePage definition={correctionWorkspace} view={useLoaderData<typeof loader>()} />;
}
