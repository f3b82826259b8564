import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data } from "@remix-run/node";
import { saveResponse, unlessOutOfSpace, type StorageRefusal } from "~/platform/storage-errors.server";
import { useLoaderData, useNavigate } from "@remix-run/react";
import { useEffect, useRef, useState } from "react";
import { DraftFooter } from "~/work-items/ui/draft-footer";
import { LabelFields } from "~/annotation/ui/label-fields";
import { useWorkspaceKeys } from "~/work-items/ui/shortcuts";
import { WORK_STATE_LABELS as STATE_LABELS } from "~/work-items/domain/work-item";
import { liveWorkState, useDraft } from "~/work-items/ui/use-draft";
import { ShortcutsCard, WorkspaceHeader } from "~/work-items/ui/workspace-header";
import { checkCaseLabel } from "~/gold/domain/gold";
import { SECTION_TITLES, type SectionKind } from "~/annotation/domain/sections";
import { getDb } from "~/platform/db.server";
import { parseDraftPost } from "~/platform/forms";
import { requireById, requireForm, requireRole } from "~/accounts/guard.server";
import { useRootData } from "~/root";
import {
  AnnotationValuesSchema,
  getAnnotatorCase,
  saveDraft,
  submitAnnotation,
  type AnnotationValues,
  type SaveResult,
} from "~/annotation/annotations.server";
import { TextLimit, limitProps } from "~/work-items/ui/text-limit";
import { TEXT_LIMITS, overLimitErrors } from "~/work-items/domain/text-limits";
import { guidelinesForItem } from "~/guidelines/guidelines.server";
import { GuidelinesPanel } from "~/work-items/ui/guidelines-panel";

export const meta: MetaFunction = () => [{ title: "Annotate · Concord" }];
// A failed save keeps the workspace (and the draft) on screen: docs/architecture.md, "Saving under load".
export { clientAction, headers, shouldRevalidate } from "~/work-items/ui/save-action";

export async function loader({ request, params }: LoaderFunctionArgs) {
  const user = await requireRole(request, "annotator");
  // Not assigned (or not a case at all) answers 404, never 403: ids reveal nothing.
  const view = requireById(params.caseId, (caseId) => getAnnotatorCase(getDb(), { userId: user.id, caseId }));
  return { ...view, guidelines: guidelinesForItem(getDb(), "annotation", view.case.id) };
}

export async function action({ request, params }: ActionFunctionArgs) {
  const user = await requireRole(request, "annotator");
  const form = await requireForm(request, user);
  const post = parseDraftPost(form, AnnotationValuesSchema, { id: params.caseId, maxLength: 100_000 });
  if (!post.ok) return data<SaveResult>(post.failure, 422);
  const input = {
    userId: user.id,
    caseId: post.id,
    values: post.values,
    version: post.version,
    activeMs: post.activeMs,
  };
  const result = unlessOutOfSpace(() =>
    post.intent === "draft" ? saveDraft(getDb(), input) : submitAnnotation(getDb(), input),
  );
  return saveResponse<SaveResult | StorageRefusal>(result);
}

const ANNOTATION_LIMITS = {
  notes: ["Notes", TEXT_LIMITS.notes],
  missingOther: ["Other missing information", TEXT_LIMITS.missingOther],
} as const;

export default function AnnotateCase() {
  const view = useLoaderData<typeof loader>();
  // One component instance per case: form state starts from the server's values, never from the previous case.
  return <Workspace key={view.case.id} view={view} />;
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
    onSubmitted: () => {
      const target = view.nextCaseId !== null ? `/annotate/${view.nextCaseId}` : "/annotate";
      navigate(target, { state: { submitted: view.case.externalId } });
    },
  });
  const { values, update, errors } = draft;
  const codeInput = useRef<HTMLInputElement>(null);
  const formRef = useRef<HTMLDivElement>(null);
  const missingRef = useRef<HTMLFieldSetElement>(null);
  const [focusCode, setFocusCode] = useState(0);
  useEffect(() => {
    if (focusCode) codeInput.current?.focus();
  }, [focusCode]);
  const [focusMissing, setFocusMissing] = useState(0);
  useEffect(() => {
    if (focusMissing) missingRef.current?.querySelector("input")?.focus();
  }, [focusMissing]);

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
        setFocusMissing((n) => n + 1);
      } else return false;
      return true;
    },
    {
      nav: {
        next,
        previous,
        search: () => {
          // The picker exists only for a sufficient note: "/" chooses sufficient first, then focuses it once rendered.
          if (draft.valuesRef.current.sufficiency !== "sufficient") update({ sufficiency: "sufficient" });
          setFocusCode((n) => n + 1);
        },
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
          <div className="card" ref={formRef} tabIndex={-1} aria-label="Annotation">
            <LabelFields
              values={values}
              update={update}
              sections={view.case.sections}
              errors={errors}
              disabled={locked}
              codeInput={codeInput}
              missingRef={missingRef}
              onCodeDone={() => formRef.current?.focus()}
              shortcuts
            />
            <label htmlFor="notes">Notes (optional)</label>
            <textarea
              id="notes"
              value={values.notes}
              disabled={locked}
              onChange={(e) => update({ notes: e.target.value })}
              {...limitProps("notes", values.notes, TEXT_LIMITS.notes)}
            />
            <TextLimit id="notes" value={values.notes} max={TEXT_LIMITS.notes} what="Notes" error={errors.notes} />
            <DraftFooter
              draft={draft}
              submitted={submitted}
              closed={locked ? "Both annotations are in: this case is locked." : null}
            />
          </div>
          <ShortcutsCard workspace="annotation" />
        </aside>
      </div>
    </section>
  );
}
