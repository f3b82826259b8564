/**
 * The expert's MentalBench case-review workspace (docs/case-review.md), as a definition for the one workspace shell
 * (app/work-items/ui/workspace-page.tsx): a generated case scored on three dimensions, or a seed accepted or rejected
 * with a reason; the comment; the keymap's case-review row.
 */
import { useCallback, useRef, useState } from "react";
import type { RaterItemView, ReviewSaveResult, ReviewValues } from "../case-review.server";
import {
  REVIEW_DIMENSION_LABELS,
  REVIEW_DIMENSIONS,
  REVIEW_SCALE,
  type ReviewDimension,
} from "~/expert-panel/domain/expert-scales";
import type { GuidelinesView } from "~/guidelines/domain/guidelines";
import { TEXT_LIMITS } from "~/work-items/domain/text-limits";
import { LimitedText } from "~/work-items/ui/text-limit";
import { commonViewParts, type WorkspaceDefinition } from "~/work-items/ui/workspace-page";
import { ReviewValuesSchema } from "../domain/review-values";

type View = RaterItemView & { guidelines: GuidelinesView | null };

const SCALE_HINTS: Record<ReviewDimension, [string, string]> = {
  naturalness: ["reads as machine-made", "reads as a real clinician or patient wrote it"],
  validity: ["does not support the diagnosis", "fully consistent with the diagnostic criteria"],
  realism: ["not a plausible patient", "a patient one meets in practice"],
};

export const reviewWorkspace: WorkspaceDefinition<View, ReviewValues, ReviewSaveResult> = {
  keymap: "case-review",
  words: {
    list: { to: "/expert-ratings", label: "Expert ratings" },
    form: "Review",
    incomplete: "Some answers are missing; see the marked fields.",
    stateTestId: "item-state",
  },
  itemKey: (view) => view.item.id,
  title: (view) => (
    <>
      {view.item.kind === "seed" ? "Seed" : "Case"} {view.item.externalId}{" "}
      <small className="muted">
        ({view.item.setName}
        {view.item.caseType ? `, type ${view.item.caseType}` : ""})
      </small>
    </>
  ),
  // Changes to a submitted review are not autosaved: they wait for "Save revision".
  ...commonViewParts<View, ReviewValues>({
    path: "/case-review",
    neighbours: (view) => ({ next: view.nextItemId, previous: view.previousItemId }),
    initial: (view) => view.values,
    mode: (view) => (view.state === "submitted" ? "revision" : "draft"),
  }),
  // The values' one schema, the route's (app/case-review/domain/review-values.ts).
  schema: ReviewValuesSchema,
  check: (v, view) => {
    const e: Record<string, string> = {};
    if (view.item.kind === "seed") {
      if (!v.decision) e.decision = "Accept or reject the seed.";
      if (v.decision === "reject" && !v.reason.trim()) e.reason = "Say why the seed is rejected.";
    } else for (const d of REVIEW_DIMENSIONS) if (v[d] === null) e[d] = "Choose a score from 1 to 5.";
    return e;
  },
  useParts: function useReviewParts({ view, draft }) {
    const { values, update, errors } = draft;
    const isSeed = view.item.kind === "seed";
    // The dimension digits 1–5 apply to: the one last focused or chosen, else the first without a score.
    const [active, setActive] = useState<ReviewDimension>(
      REVIEW_DIMENSIONS.find((d) => view.values[d] === null) ?? "naturalness",
    );
    const focusReason = useRef(false);
    const attachReason = useCallback((el: HTMLTextAreaElement | null) => {
      if (el && focusReason.current) {
        focusReason.current = false;
        el.focus();
      }
    }, []);
    return {
      // Keys of the keymap's case-review row: A / R a seed's decision, 1–5 scores, C the comment.
      onKey: (key) => {
        if (!isSeed && /^[1-5]$/.test(key)) {
          update({ [active]: Number(key) } as Partial<ReviewValues>);
          const after = REVIEW_DIMENSIONS[REVIEW_DIMENSIONS.indexOf(active) + 1];
          if (after) setActive(after);
        } else if (isSeed && key === "a") update({ decision: "accept" });
        else if (isSeed && key === "r") {
          // Focus the reason: now if it is shown, else in the commit that renders it (its ref callback), so that the
          // letters typed next go into it and never act as shortcuts.
          const reason = document.getElementById("reason");
          if (reason) reason.focus();
          else focusReason.current = true;
          update({ decision: "reject" });
        } else if (key === "c") document.getElementById("comment")?.focus();
        else return false;
        return true;
      },
      omitKeys: isSeed ? ["1–5"] : ["A / R"],
      main: (
        <article className="card" aria-label="Case">
          <p className="case-text" data-testid="case-text">
            {view.item.text}
          </p>
        </article>
      ),
      fields: (
        <>
          {isSeed ? (
            <>
              <fieldset aria-invalid={errors.decision ? true : undefined}>
                <legend>Is this seed case valid?</legend>
                <div className="scale-group" role="radiogroup">
                  {(["accept", "reject"] as const).map((d) => (
                    <label key={d} className={values.decision === d ? "chosen" : ""}>
                      <input
                        type="radio"
                        name="decision"
                        value={d}
                        checked={values.decision === d}
                        onChange={() => update({ decision: d })}
                      />
                      {d === "accept" ? "Accept" : "Reject"} <kbd>{d === "accept" ? "A" : "R"}</kbd>
                    </label>
                  ))}
                </div>
                {errors.decision ? <p className="field-error">{errors.decision}</p> : null}
              </fieldset>
              {values.decision === "reject" ? (
                <LimitedText
                  id="reason"
                  label="Reason for rejecting (required)"
                  what="A reason"
                  value={values.reason}
                  max={TEXT_LIMITS.comment}
                  error={errors.reason}
                  onChange={(v) => update({ reason: v })}
                  inputRef={attachReason}
                />
              ) : null}
            </>
          ) : (
            REVIEW_DIMENSIONS.map((d) => (
              <fieldset
                key={d}
                className={active === d ? "active" : ""}
                onFocus={() => setActive(d)}
                data-dimension={d}
              >
                <legend>{REVIEW_DIMENSION_LABELS[d]}</legend>
                {d === "validity" && view.item.targetDiagnosis ? (
                  // Shown only with the question that needs it (docs/decisions/0009-target-diagnosis-for-validity.md).
                  <p className="criterion" data-testid="target-diagnosis">
                    <strong>Target diagnosis:</strong> {view.item.targetDiagnosis}
                  </p>
                ) : null}
                <div className="scale-group" role="radiogroup" aria-label={REVIEW_DIMENSION_LABELS[d]}>
                  {REVIEW_SCALE.map((v) => (
                    <label key={v} className={values[d] === v ? "chosen" : ""}>
                      <input
                        type="radio"
                        name={d}
                        value={v}
                        checked={values[d] === v}
                        onChange={() => {
                          update({ [d]: v } as Partial<ReviewValues>);
                          setActive(d);
                        }}
                      />
                      {v}
                    </label>
                  ))}
                </div>
                <small className="muted">
                  1 = {SCALE_HINTS[d][0]}; 5 = {SCALE_HINTS[d][1]}
                </small>
                {errors[d] ? <p className="field-error">{errors[d]}</p> : null}
              </fieldset>
            ))
          )}
          <LimitedText
            id="comment"
            label="Comment (optional)"
            what="A comment"
            value={values.comment}
            max={TEXT_LIMITS.comment}
            error={errors.comment}
            onChange={(v) => update({ comment: v })}
          />
        </>
      ),
    };
  },
};
