import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { getDb } from "~/platform/db.server";
import { invariantFound, requireForm, requireRole } from "~/accounts/guard.server";
import { answerDraftPost } from "~/work-items/workspace-route.server";
import {
  AnnotationValuesSchema,
  getAnnotatorItem,
  resolveAnnotatorItem,
  saveDraft,
  saveQualityAnnotation,
  submitAnnotation,
  undoSubmission,
} from "~/annotation/annotations.server";
import { guidelinesView } from "~/guidelines/guidelines.server";
import { WorkspacePage } from "~/work-items/ui/workspace-page";
import { annotationWorkspace } from "~/annotation/ui/annotation-workspace";
import { saveResponse, unlessOutOfSpace } from "~/platform/storage-errors.server";

export const meta: MetaFunction = () => [{ title: "Annotate · Concord" }];
// A failed save keeps the workspace (and the draft) on screen: docs/architecture.md, "Saving under load".
export { clientAction, headers, shouldRevalidate } from "~/work-items/ui/save-action";

export async function loader({ request, params }: LoaderFunctionArgs) {
  const user = await requireRole(request, "annotator");
  // Not assigned (or not a case at all) answers 404, never 403: ids reveal nothing. The key is a case id, or the
  // opaque key of any item in a study with rater quality (docs/rater-quality.md, "Blinding"), so this loader finds
  // the item itself rather than through workspaceLoader's numeric id.
  const found = invariantFound(getAnnotatorItem(getDb(), { userId: user.id, key: params.caseId }));
  // Real work opens when the training round is done.
  if ("gated" in found) throw redirect("/annotate");
  return {
    ...found.view,
    guidelines: guidelinesView(getDb(), { scope: "safe_psych", scopeId: found.studyId }, user.id),
  };
}

export async function action({ request, params }: ActionFunctionArgs) {
  const user = await requireRole(request, "annotator");
  const form = await requireForm(request, user);
  const item = invariantFound(resolveAnnotatorItem(getDb(), user.id, params.caseId));
  // "Undo submit" in the grace period (docs/safe-psych.md, "Second chances"): back to a draft, the page reloaded.
  if (form.get("intent") === "undo") {
    const version = Number(form.get("version"));
    if (!Number.isInteger(version) || version < 0)
      return saveResponse({ ok: false, status: 422, message: "The form was malformed. Reload the page.", errors: {} });
    const undone = unlessOutOfSpace(() =>
      undoSubmission(getDb(), { userId: user.id, key: params.caseId ?? "", version }),
    );
    return undone.ok ? redirect(`/annotate/${params.caseId}`) : saveResponse(undone);
  }
  const id = String(item.kind === "assignment" ? item.caseId : item.id);
  return answerDraftPost(form, user, id, {
    schema: AnnotationValuesSchema,
    maxLength: 100_000,
    save: (db, { id, intent, ...input }) =>
      item.kind === "quality"
        ? saveQualityAnnotation(db, { ...input, id, intent })
        : (intent === "draft" ? saveDraft : submitAnnotation)(db, { ...input, caseId: id }),
  });
}

export default function AnnotateCase() {
  return <WorkspacePage definition={annotationWorkspace} view={useLoaderData<typeof loader>()} />;
}
