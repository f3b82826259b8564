import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { useLoaderData, useNavigate } from "@remix-run/react";
import { useRef } from "react";
import { DraftFooter } from "~/work-items/ui/draft-footer";
import { LabelFields, useLabelFieldFocus } from "~/annotation/ui/label-fields";
import { useWorkspaceKeys } from "~/work-items/ui/shortcuts";
import { WORK_STATE_LABELS as STATE_LABELS } from "~/work-items/domain/work-item";
import { liveWorkState, useDraft } from "~/work-items/ui/use-draft";
import { ShortcutsCard, WorkspaceHeader } from "~/work-items/ui/workspace-header";
import { checkCaseLabel } from "~/gold/domain/gold";
import { SECTION_TITLES, type SectionKind } from "~/annotation/domain/sections";
import { getDb } from "~/platform/db.server";
import { invariantFound, requireForm, requireRole } from "~/accounts/guard.server";
import { useRootData } from "~/root";
import { answerDraftPost } from "~/work-items/workspace-route.server";
import {
  AnnotationValuesSchema,
  getAnnotatorItem,
  resolveAnnotatorItem,
  saveDraft,
  saveQualityAnnotation,
  submitAnnotation,
  undoSubmission,
  type AnnotationValues,
  type SaveResult,
} from "~/annotation/annotations.server";
import { LimitedText } from "~/work-items/ui/text-limit";
import { TEXT_LIMITS, overLimitErrors } from "~/work-items/domain/text-limits";
import { guidelinesView } from "~/guidelines/guidelines.server";
import { GuidelinesPanel } from "~/work-items/ui/guidelines-panel";
import { TrainingReveal } from "~/annotation/ui/training-reveal";
import { SubmitGraceNotice } from "~/annotation/ui/submit-grace-notice";
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
    guidelines: guidelinesView(getDb(), { scope: "safe_psych", scopeId: found.studyId }),
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

const ANNOTATION_LIMITS = {
  notes: ["Notes", TEXT_LIMITS.notes],
  missingOther: ["Other missing information", TEXT_LIMITS.missingOther],
} as const;

export default function AnnotateCase() {
  const view = useLoaderData<typeof loader>();
  // One component instance per case: form state starts from the server's values, never from the previous case.
  // A new state from the server (submitted, undone, locked) starts the form again from the server's values.
  return <Workspace key={`${view.case.id}:${view.state}`} view={view} />;
}

function Workspace({ view }: { view: ReturnType<typeof useLoaderData<typeof loader>> }) {
  const csrf = useRootData()?.user?.csrf ?? "";
  const navigate = useNavigate();
  const T = view.case.sections.length;
  const locked = view.state === "locked";
  const submitted = view.state === "submitted";
  const draft = useDraft<AnnotationValues, SaveResult>({
    initial: view.values,
    version: view.version,
    updatedAt: view.updatedAt,
    csrf,
    // Drafts: saved on the server shortly after each change (docs/safe-psych.md, "Annotation"), only while the annotation is a draft.
    autosave: !locked && !submitted,
    readOnly: locked,
    // The same rules as the server (core/gold checkCaseLabel), so mistakes show at once; the server checks again.
    check: (values) => {
      const check = checkCaseLabel(
        {
          sufficiency: values.sufficiency || undefined,
          icd10: values.icd10,
          earliestSection: values.earliestSection ?? undefined,
          missingInfo: values.missingInfo,
          missingInfoOther: values.missingOther,
        },
        { sectionCount: T },
      );
      const e: Record<string, string> = {};
      if (!check.ok)
        for (const [k, v] of Object.entries(check.errors))
          e[k === "missingInfoOther" ? "missingOther" : k] = v!.charAt(0).toUpperCase() + v!.slice(1) + ".";
      return { ...e, ...overLimitErrors(values, ANNOTATION_LIMITS) };
    },
    incompleteMessage: "The annotation is incomplete or invalid; see the marked fields.",
    onSubmitted: (result) => {
      // A training case stays on screen after its submission: the reference and its rationale are shown there; so
      // does a submission that completed the pair, with its notice and "Undo submit" (docs/safe-psych.md, "Second
      // chances").
      if (view.training || result.undoUntil !== undefined) {
        navigate(".", { replace: true });
        return;
      }
      const target = view.nextCaseId !== null ? `/annotate/${view.nextCaseId}` : "/annotate";
      navigate(target, { state: { submitted: view.case.externalId } });
    },
  });
  const { values, update, errors } = draft;
  const formRef = useRef<HTMLDivElement>(null);
  const { codeInput, missingRef, sufficiencyRef, focusMissing, searchCode } = useLabelFieldFocus();

  // Keyboard (app/work-items/domain/keymap.ts): S / I sufficiency, 1–T earliest section, / code search, M missing
  // information; next, previous, Ctrl+Enter and the rest as in every workspace.
  const next = view.nextCaseId !== null ? `/annotate/${view.nextCaseId}` : null;
  const previous = view.previousCaseId !== null ? `/annotate/${view.previousCaseId}` : null;
  useWorkspaceKeys(
    draft.submit,
    (key) => {
      const current = draft.valuesRef.current;
      if (key === "s") update({ sufficiency: "sufficient" });
      else if (key === "i") update({ sufficiency: "insufficient" });
      else if (/^[1-5]$/.test(key) && Number(key) <= T && current.sufficiency === "sufficient")
        update({ earliestSection: Number(key) });
      else if (key === "m") {
        // The missing-information list exists only for an insufficient note.
        if (current.sufficiency !== "insufficient") update({ sufficiency: "insufficient" });
        focusMissing();
      } else return false;
      return true;
    },
    {
      nav: {
        next,
        previous,
        search: () => searchCode(draft.valuesRef.current.sufficiency),
      },
    },
  );

  const chosen = values.sufficiency === "sufficient" ? values.earliestSection : null;
  return (
    // data-case-id tells a browser test (or a screen reader) that this case's workspace, not the previous one, is up.
    <section data-case-id={view.case.id}>
      <WorkspaceHeader
        list={{ to: "/annotate", label: "My cases" }}
        title={
          <>
            Case {view.case.externalId} <small className="muted">({view.case.studyName})</small>
          </>
        }
        state={{
          value: liveWorkState(view.state, draft),
          label: STATE_LABELS[liveWorkState(view.state, draft)],
          testId: "case-state",
        }}
        progress={view.progress}
        links={[
          { label: "Previous", to: previous },
          { label: "Next", to: next },
        ]}
      />
      <GuidelinesPanel guidelines={view.guidelines} />
      <div className="workspace">
        <div aria-label="Clinical note">
          {view.case.sections.map((s) => (
            <article
              key={s.order}
              className={`note-section${chosen === s.order ? " chosen" : ""}${
                chosen !== null && s.order > chosen ? " after" : ""
              }`}
              data-section={s.order}
            >
              <h3>
                <span className="num">{s.order}</span> {SECTION_TITLES[s.kind as SectionKind] ?? s.kind}
                {values.sufficiency === "sufficient" && !locked ? (
                  <button
                    type="button"
                    className="link"
                    style={{ marginLeft: "0.75rem", fontSize: "0.85rem" }}
                    onClick={() => update({ earliestSection: s.order })}
                  >
                    {chosen === s.order ? "earliest sufficient section" : "sufficient from here"}
                  </button>
                ) : null}
              </h3>
              <p>{s.content}</p>
            </article>
          ))}
        </div>
        <aside>
          {view.undoUntil !== null ? <SubmitGraceNotice undoUntil={view.undoUntil} version={view.version} /> : null}
          <div className="card" ref={formRef} tabIndex={-1} aria-label="Annotation">
            <LabelFields
              values={values}
              update={update}
              sections={view.case.sections}
              errors={errors}
              disabled={locked}
              codeInput={codeInput}
              missingRef={missingRef}
              sufficiencyRef={sufficiencyRef}
              onCodeDone={() => formRef.current?.focus()}
              shortcuts
            />
            <LimitedText
              id="notes"
              label="Notes (optional)"
              what="Notes"
              value={values.notes}
              max={TEXT_LIMITS.notes}
              error={errors.notes}
              onChange={(v) => update({ notes: v })}
              disabled={locked}
            />
            <DraftFooter
              draft={draft}
              submitted={submitted}
              closed={
                view.training
                  ? locked
                    ? "Submitted: compare your label with the reference below."
                    : null
                  : locked
                    ? "Both annotations are in: this case is locked."
                    : null
              }
            />
            {view.training?.reveal ? <TrainingReveal reveal={view.training.reveal} next={next ?? "/annotate"} /> : null}
          </div>
          <ShortcutsCard workspace="annotation" />
        </aside>
      </div>
    </section>
  );
}
