/**
 * The annotator's workspace (docs/safe-psych.md, "Annotation"), as a definition for the one workspace shell
 * (app/work-items/ui/workspace-page.tsx): the note's sections beside the label fields, the case label's check, the
 * keys of the keymap's annotation row, and a training case's reveal.
 */
import { LabelFields, useLabelFieldFocus } from "./label-fields";
import { TrainingReveal } from "./training-reveal";
import { SubmitGraceNotice } from "./submit-grace-notice";
import { SECTION_TITLES, type SectionKind } from "../domain/sections";
import { checkLabelValues } from "~/labels/label-values";
import { AnnotationValuesSchema, type AnnotationValues } from "../domain/annotation-values";
import type { AnnotatorCaseView, SaveResult } from "~/annotation/annotations.server";
import type { GuidelinesView } from "~/guidelines/domain/guidelines";
import { NotesField } from "~/work-items/ui/text-limit";
import { commonViewParts, type WorkspaceDefinition } from "~/work-items/ui/workspace-page";

type View = AnnotatorCaseView & { guidelines: GuidelinesView | null };

const link = (id: string | null) => (id !== null ? `/annotate/${id}` : null);

/** The case label's rules as the server checks them (checkLabelValues), at their fields (the WHO table aside). */
export function annotationErrors(values: AnnotationValues, sectionCount: number): Record<string, string> {
  const check = checkLabelValues(values, sectionCount);
  return check.ok ? {} : check.errors;
}

export const annotationWorkspace: WorkspaceDefinition<View, AnnotationValues, SaveResult> = {
  keymap: "annotation",
  words: {
    list: { to: "/annotate", label: "My cases" },
    form: "Annotation",
    incomplete: "The annotation is incomplete or invalid; see the marked fields.",
    stateTestId: "case-state",
  },
  itemKey: (view) => view.case.id,
  // Entering or leaving the grace period of a pair (undone, or locked when it ends: docs/safe-psych.md, "Second
  // chances") starts the form again from the server's values and version; other submissions keep it, so that the
  // page can move on to the next case.
  resetKey: (view) => (view.undoUntil !== null ? "grace" : ""),
  // data-case-id tells a browser test (or a screen reader) that this case's workspace, not the previous one, is up.
  itemAttribute: "data-case-id",
  title: (view) => (
    <>
      Case {view.case.externalId} <small className="muted">({view.case.studyName})</small>
    </>
  ),
  // Drafts are saved on the server shortly after each change, only while the annotation is a draft.
  ...commonViewParts<View, AnnotationValues>({
    path: "/annotate",
    neighbours: (view) => ({ next: view.nextCaseId, previous: view.previousCaseId }),
    initial: (view) => view.values,
    mode: (view) => (view.state === "locked" ? "readOnly" : view.state === "submitted" ? "revision" : "draft"),
  }),
  // The values' one schema, the route's (app/annotation/domain/annotation-values.ts).
  schema: AnnotationValuesSchema,
  check: (values, view) => annotationErrors(values, view.case.sections.length),
  closed: (view) =>
    view.state !== "locked"
      ? null
      : view.training
        ? "Submitted: compare your label with the reference below."
        : "Both annotations are in: this case is locked.",
  onSubmitted: (view, result, navigate) => {
    // A training case stays on screen after its submission: the reference and its rationale are shown there; so
    // does a submission that completed the pair, with its notice and "Undo submit" (docs/safe-psych.md, "Second
    // chances").
    if (view.training || result.undoUntil !== undefined) navigate(".", { replace: true });
    else navigate(link(view.nextCaseId) ?? "/annotate", { state: { submitted: view.case.externalId } });
  },
  useParts: function useAnnotationParts({ view, draft, formRef }) {
    const { values, update, errors } = draft;
    const locked = view.state === "locked";
    const T = view.case.sections.length;
    const { codeInput, missingRef, sufficiencyRef, focusMissing, searchCode } = useLabelFieldFocus();
    const chosen = values.sufficiency === "sufficient" ? values.earliestSection : null;
    return {
      // Keys of the keymap's annotation row: S / I sufficiency, 1–T earliest section, M missing information.
      onKey: (key) => {
        const current = draft.latest();
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
      search: () => searchCode(draft.latest().sufficiency),
      main: (
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
      ),
      fields: (
        <>
          {view.undoUntil !== null ? <SubmitGraceNotice undoUntil={view.undoUntil} version={view.version} /> : null}
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
          <NotesField
            value={values.notes}
            error={errors.notes}
            onChange={(v) => update({ notes: v })}
            disabled={locked}
          />
        </>
      ),
      afterFooter: view.training?.reveal ? (
        <TrainingReveal reveal={view.training.reveal} next={link(view.nextCaseId) ?? "/annotate"} />
      ) : null,
    };
  },
};
