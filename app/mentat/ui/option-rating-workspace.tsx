/**
 * The expert's MENTAT workspace (docs/mentat.md, "Option ratings"), as a definition for the one workspace shell
 * (app/work-items/ui/workspace-page.tsx): the question and its five options with a slider each, the comment, and the
 * keymap's MENTAT row.
 */
import { useCallback, useRef, useState } from "react";
import type { RaterQuestionView, RatingSaveResult } from "../ratings.server";
import type { GuidelinesView } from "~/guidelines/domain/guidelines";
import { TEXT_LIMITS } from "~/work-items/domain/text-limits";
import { LimitedText } from "~/work-items/ui/text-limit";
import { commonViewParts, type WorkspaceDefinition } from "~/work-items/ui/workspace-page";
import { OptionRatingSchema } from "../domain/option-rating-values";
import { firstKeyValue, SLIDER_MIDDLE } from "../domain/rating-slider";

type View = RaterQuestionView & { guidelines: GuidelinesView | null };

interface Values {
  scores: (number | null)[];
  comment: string;
}

export const optionRatingWorkspace: WorkspaceDefinition<View, Values, RatingSaveResult> = {
  keymap: "mentat",
  words: {
    list: { to: "/expert-ratings", label: "Expert ratings" },
    form: "Rating",
    incomplete: "Some answers are missing; see the marked fields.",
    stateTestId: "item-state",
  },
  itemKey: (view) => view.question.id,
  title: (view) => (
    <>
      Question {view.question.externalId}{" "}
      <small className="muted">
        ({view.question.bankName}, {view.question.domain})
      </small>
    </>
  ),
  // Changes to submitted ratings are not autosaved: they wait for "Save revision".
  ...commonViewParts<View, Values>({
    path: "/mentat",
    neighbours: (view) => ({ next: view.nextQuestionId, previous: view.previousQuestionId }),
    initial: (view) => ({ scores: view.scores, comment: view.comment }),
    mode: (view) => (view.state === "submitted" ? "revision" : "draft"),
  }),
  // The values' one schema, the route's (app/mentat/domain/option-rating-values.ts).
  schema: OptionRatingSchema,
  check: (v) => Object.fromEntries(v.scores.flatMap((s, i) => (s === null ? [[`score${i}`, "Not rated yet."]] : []))),
  useParts: function useOptionRatingParts({ view, draft }) {
    const { values, errors } = draft;
    const sliders = useRef<(HTMLInputElement | null)[]>([]);
    const [focused, setFocused] = useState<number | null>(null);
    const { update, latest } = draft;
    const setScore = useCallback(
      (i: number, value: number) =>
        update({
          scores: latest().scores.map((s, k) => (k === i ? Math.max(0, Math.min(100, Math.round(value))) : s)),
        }),
      [update, latest],
    );
    const rated = values.scores.filter((s) => s !== null).length;
    return {
      // Keys of the keymap's MENTAT row: 1–5 focus an option's slider (then arrows ±1, PageUp/PageDown ±10, Home 0,
      // End 100), C the comment.
      onKey: (key) => {
        if (/^[1-5]$/.test(key)) sliders.current[Number(key) - 1]?.focus();
        else if (key === "c") document.getElementById("comment")?.focus();
        else return false;
        return true;
      },
      main: (
        <div>
          <article className="card" aria-label="Question">
            <p className="case-text" data-testid="question-text">
              {view.question.text}
            </p>
          </article>
          <p className="muted">
            Rate how good each answer is, from 0 (would never choose it) to 100 (the best possible answer). Several
            answers may deserve high ratings. Your ratings are not shown to other experts.
          </p>
          <ol className="options-list" aria-label="Answer options">
            {view.question.options.map((text, i) => {
              const score = values.scores[i] ?? null;
              const error = errors[`score${i}`];
              return (
                <li key={i} className={`option-rating${focused === i ? " focused" : ""}`} data-option={i + 1}>
                  <p id={`option-${i}`}>
                    <span className="num">{i + 1}</span> {text}
                  </p>
                  <div className={`slider-row${score === null ? " unrated" : ""}`}>
                    <input
                      type="range"
                      min={0}
                      max={100}
                      step={1}
                      ref={(el) => (sliders.current[i] = el)}
                      // Unrated: the input needs some value, but the page draws neither thumb nor filled track
                      // (expert-ratings.css, .unrated), so nothing anchors the rating at the middle.
                      value={score ?? SLIDER_MIDDLE}
                      aria-labelledby={`option-${i}`}
                      aria-valuetext={score === null ? "not rated" : `${score} of 100`}
                      aria-invalid={error ? true : undefined}
                      data-testid={`slider-${i + 1}`}
                      onFocus={() => setFocused(i)}
                      onBlur={() => setFocused(null)}
                      onChange={(e) => setScore(i, e.currentTarget.valueAsNumber)}
                      // A click on an unrated slider's thumb changes nothing: take the value it shows.
                      onClick={(e) => score === null && setScore(i, e.currentTarget.valueAsNumber)}
                      // The first key on an unrated slider gives its first value (the middle, or an end for
                      // Home/End); later keys move it natively (app/mentat/domain/rating-slider.ts).
                      onKeyDown={(e) => {
                        const first = score === null && !e.ctrlKey && !e.metaKey ? firstKeyValue(e.key) : null;
                        if (first !== null) {
                          e.preventDefault();
                          setScore(i, first);
                        }
                      }}
                    />
                    <input
                      type="number"
                      min={0}
                      max={100}
                      step={1}
                      aria-label={`Rating of option ${i + 1}`}
                      value={score ?? ""}
                      placeholder="–"
                      data-testid={`score-${i + 1}`}
                      onChange={(e) => {
                        const v = e.currentTarget.value;
                        if (v === "") update({ scores: latest().scores.map((s, k) => (k === i ? null : s)) });
                        else if (Number.isFinite(Number(v))) setScore(i, Number(v));
                      }}
                    />
                    <span className="value muted">{score === null ? "not rated" : `${score} / 100`}</span>
                  </div>
                  {error ? <p className="field-error">{error}</p> : null}
                </li>
              );
            })}
          </ol>
        </div>
      ),
      fields: (
        <>
          <p>
            <strong data-testid="rated-count">{rated} of 5</strong> options rated
          </p>
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
