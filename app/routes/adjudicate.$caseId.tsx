import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { getDb } from "~/platform/db.server";
import { parseDraftPost } from "~/platform/forms";
import { requireById, requireForm, requireRole } from "~/accounts/guard.server";
import { icd10Index } from "~/icd10/icd10.server";
import { answerDraftPost } from "~/work-items/workspace-route.server";
import { saveResponse, unlessOutOfSpace } from "~/platform/storage-errors.server";
import {
  AdjudicationDraftSchema,
  decide,
  getAdjudicationCase,
  nextAfterDecision,
  recordIndependent,
  saveAdjudicationDraft,
} from "~/adjudication/adjudication.server";
import { AdjudicationStepSchema } from "~/adjudication/domain/adjudication-values";
import { adjudicationWorkspace, type AdjudicationStepResult } from "~/adjudication/ui/adjudication-workspace";
import { guidelinesForItem } from "~/guidelines/guidelines.server";
import { WorkspacePage } from "~/work-items/ui/workspace-page";

export const meta: MetaFunction = () => [{ title: "Adjudicate · Concord" }];
// A refusal (409: decided by someone else) stays on this page with the user's input, instead of a reload that would
// answer 404 for a case that has left the queue (docs/architecture.md, "Saving under load").
export { clientAction, headers, shouldRevalidate } from "~/work-items/ui/save-action";

export async function loader({ request, params }: LoaderFunctionArgs) {
  const user = await requireRole(request, "adjudicator");
  // The same answer for every id that is not in the queue (nothing revealed), but one that says the likely reason.
  const view = requireById(
    params.caseId,
    (caseId) => getAdjudicationCase(getDb(), { userId: user.id, caseId }),
    "This case is not in your adjudication queue: another adjudicator may have decided it, or it is not yours to adjudicate.",
  );
  const titles: Record<string, string> = {};
  const codes = [view.independent, view.final?.label, view.annotations?.A.label, view.annotations?.B.label];
  for (const l of codes)
    if (l?.sufficiency === "sufficient") titles[l.icd10] = icd10Index().lookup(l.icd10)?.title ?? "";
  return { view, titles, guidelines: guidelinesForItem(getDb(), "adjudication", view.case.id, user.id) };
}

const MAX_VALUES = 40_000;

/**
 * Drafts, and the two steps (docs/safe-psych.md, "Disagreement and adjudication"): the post names the step and the
 * case outcome's version the page read; the values are read with the one schema the page checks them with.
 */
export async function action({ request, params }: ActionFunctionArgs) {
  const user = await requireRole(request, "adjudicator");
  const form = await requireForm(request, user);
  if (form.get("intent") === "draft")
    return answerDraftPost(form, user, params.caseId, {
      schema: AdjudicationDraftSchema,
      maxLength: MAX_VALUES,
      save: (db, { id: caseId, ...input }) => saveAdjudicationDraft(db, { ...input, caseId }),
    });
  const post = parseDraftPost(form, AdjudicationDraftSchema, { id: params.caseId, maxLength: MAX_VALUES });
  if (!post.ok) return saveResponse(post.failure);
  const step = AdjudicationStepSchema.safeParse(form.get("step"));
  const outcomeVersion = Number(form.get("outcomeVersion"));
  if (!step.success || !Number.isInteger(outcomeVersion) || outcomeVersion < 0)
    return saveResponse({ ok: false, status: 422, message: "The form was malformed. Reload the page.", errors: {} });
  const db = getDb();
  const { rationale, ...label } = post.values;
  const caseId = post.id;
  const input = { userId: user.id, caseId, label, outcomeVersion, activeMs: post.activeMs };
  const result = unlessOutOfSpace(() =>
    step.data === "independent" ? recordIndependent(db, input) : decide(db, { ...input, rationale }),
  );
  if (!result.ok) return saveResponse(result);
  const externalId = getAdjudicationCase(db, { userId: user.id, caseId })?.case.externalId ?? "";
  const answer: AdjudicationStepResult = {
    ok: true,
    version: post.version,
    savedAt: Date.now(),
    state: "submitted",
    step: result.status,
    next: result.status === "decided" ? nextAfterDecision(db, user.id, caseId) : null,
    externalId,
  };
  return saveResponse(answer);
}

export default function AdjudicateCase() {
  return <WorkspacePage definition={adjudicationWorkspace} view={useLoaderData<typeof loader>()} />;
}
