/**
 * The psychiatrist's review of one model step (docs/evaluation.md, "Clinician review of model steps"), as a definition
 * for the one workspace shell (app/work-items/ui/workspace-page.tsx): the note's sections the model had seen, its
 * answer and action at that step, the gold label and the experts' action beside it; the judgement (clinically
 * defensible, yes or no) and the reason why; the keymap's model-review row. The view is the server's blinded
 * projection (app/evaluation/model-review.server.ts:getReviewerItem): nothing here names a model.
 */
import { useCallback, useRef } from "react";
import type { GuidelinesView } from "~/guidelines/domain/guidelines";
import { TEXT_LIMITS } from "~/work-items/domain/text-limits";
import { LimitedText } from "~/work-items/ui/text-limit";
import { commonViewParts, type WorkspaceDefinition } from "~/work-items/ui/workspace-page";
import type { SaveResult } from "~/work-items/domain/work-item";
import { checkModelReview, ModelReviewValuesSchema, type ModelReviewValues } from "../domain/model-review";
import type { ReviewerItemView } from "../model-review.server";

type View = ReviewerItemView & { guidelines: GuidelinesView | null };

const ACTION_WORDS: Record<string, string> = {
  DIAGNOSE: "Diagnose",
  CLARIFY: "Clarify",
  ABSTAIN: "Abstain",
};

export const modelReviewWorkspace: WorkspaceDefinition<View, ModelReviewValues, SaveResult> = {
  keymap: "model-review",
  words: {
    list: { to: "/model-review", label: "Model steps" },
    form: "Review",
    incomplete: "Say whether the step is defensible, and why.",
    stateTestId: "item-state",
  },
  itemKey: (view) => view.item.key,
  title: (view) => (
    <>
      Model step {view.item.number}{" "}
      <small className="muted">
        (after section {view.item.sections.length} of {view.item.sectionsTotal})
      </small>
    </>
  ),
  ...commonViewParts<View, ModelReviewValues>({
    path: "/model-review",
    neighbours: (view) => ({ next: view.nextKey, previous: view.previousKey }),
    initial: (view) => view.values,
    mode: (view) => (view.state === "submitted" ? "revision" : "draft"),
  }),
  schema: ModelReviewValuesSchema,
  check: (v) => checkModelReview(v),
  useParts: function useModelReviewParts({ view, draft }) {
    const { values, update, errors } = draft;
    const focusReason = useRef(false);
    const attachReason = useCallback((el: HTMLTextAreaElement | null) => {
      if (el && focusReason.current) {
        focusReason.current = false;
        el.focus();
      }
    }, []);
    const goToReason = () => {
      const reason = document.getElementById("reason");
      if (reason) reason.focus();
      else focusReason.current = true;
    };
    const { item } = view;
    return {
      // Keys of the keymap's model-review row: Y / N the judgement (then the reason), E the reason.
      onKey: (key) => {
        if (key === "y" || key === "n") {
          update({ defensible: key === "y" ? "yes" : "no" });
          goToReason();
        } else if (key === "e") goToReason();
        else return false;
        return true;
      },
      main: (
        <div className="model-step">
          <section aria-label="Clinical note" data-testid="revealed-sections">
            {item.sections.map((s, i) => (
              <article key={i} className="note-section" data-section={i + 1}>
                <h3>
                  <span className="num">{i + 1}</span> {s.title}
                </h3>
                <p>{s.content}</p>
              </article>
            ))}
            {item.sections.length < item.sectionsTotal ? (
              <p className="muted">
                {item.sectionsTotal - item.sections.length} more section
                {item.sectionsTotal - item.sections.length === 1 ? "" : "s"} not yet shown to the model.
              </p>
            ) : null}
          </section>
          <article className="card" aria-label="The model's answer" data-testid="model-answer">
            <h3>The model&apos;s answer at this point</h3>
            <p className="answer-text">{item.answer || <span className="muted">(empty)</span>}</p>
            <p data-testid="model-action">
              Action: <strong>{ACTION_WORDS[item.action] ?? (item.action || "none")}</strong>
              {item.codes.length ? (
                <>
                  {" "}
                  · code <strong>{item.codes.join(", ")}</strong>
                </>
              ) : null}
            </p>
          </article>
          <article className="card" aria-label="Reference" data-testid="reference">
            <h3>The reference</h3>
            <p>
              Gold label:{" "}
              <strong>
                {item.gold.sufficient
                  ? `sufficient from section ${item.gold.tau ?? "—"}, ${item.gold.diagnosis ?? "no code"}`
                  : "insufficient (the experts would not diagnose from this note)"}
              </strong>
            </p>
            <p data-testid="expert-action">
              The experts at this point: <strong>{item.expertAction ?? "—"}</strong>
            </p>
          </article>
        </div>
      ),
      fields: (
        <>
          <fieldset aria-invalid={errors.defensible ? true : undefined}>
            <legend>Is the model&apos;s action at this point clinically defensible?</legend>
            <div className="scale-group" role="radiogroup" aria-label="Clinically defensible">
              {(["yes", "no"] as const).map((d) => (
                <label key={d} className={values.defensible === d ? "chosen" : ""}>
                  <input
                    type="radio"
                    name="defensible"
                    value={d}
                    checked={values.defensible === d}
                    onChange={() => update({ defensible: d })}
                  />
                  {d === "yes" ? "Yes" : "No"} <kbd>{d === "yes" ? "Y" : "N"}</kbd>
                </label>
              ))}
            </div>
            {errors.defensible ? <p className="field-error">{errors.defensible}</p> : null}
          </fieldset>
          <LimitedText
            id="reason"
            label="Why (required)"
            what="A reason"
            value={values.reason}
            max={TEXT_LIMITS.comment}
            error={errors.reason}
            onChange={(v) => update({ reason: v })}
            inputRef={attachReason}
          />
        </>
      ),
    };
  },
};
