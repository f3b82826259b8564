/**
 * The rater's judge-validation workspace (docs/judge-validation.md), as a definition for the one workspace shell
 * (app/work-items/ui/workspace-page.tsx): the model's response with the judge prompt's feature definitions and worked
 * examples, the two features and their derived action, the codes, names and notes; the keymap's judge-validation row.
 */
import { INFO_REQUEST_KEYS, PRIMARY_ANSWER_KEYS } from "./judge-labels";
import type { JudgeGuide } from "../domain/judge-guide";
import type { RaterItemView, RatingSaveResult } from "../judge-ratings.server";
import { RATING_INCOMPLETE, RatingValuesSchema, ratingIncomplete, type RatingValues } from "../domain/rating-values";
import { raterAction } from "~/evaluation/public";
import type { GuidelinesView } from "~/guidelines/domain/guidelines";
import { TEXT_LIMITS } from "~/work-items/domain/text-limits";
import { LimitedText, NotesField } from "~/work-items/ui/text-limit";
import { commonViewParts, type WorkspaceDefinition } from "~/work-items/ui/workspace-page";
import { useRef } from "react";

type View = RaterItemView & { guidelines: GuidelinesView | null; guide: JudgeGuide };

export const ratingWorkspace: WorkspaceDefinition<View, RatingValues, RatingSaveResult> = {
  keymap: "judge-validation",
  words: {
    list: { to: "/judge-validation", label: "My responses" },
    form: "Rating",
    incomplete: RATING_INCOMPLETE,
    stateTestId: "rating-state",
  },
  itemKey: (view) => view.item.id,
  title: (view) => <>Response {view.item.annotationId}</>,
  // Drafts are saved on the server shortly after each change, while the rating is not yet submitted.
  ...commonViewParts<View, RatingValues>({
    path: "/judge-validation",
    neighbours: (view) => ({ next: view.nextItemId, previous: view.previousItemId }),
    initial: (view) => view.values,
    mode: (view) => (!view.open ? "readOnly" : view.state === "submitted" ? "revision" : "draft"),
  }),
  // The same schema and rule as the server's (app/judge-validation/domain/rating-values.ts), at the same fields.
  schema: RatingValuesSchema,
  check: ratingIncomplete,
  closed: (view) => (view.open ? null : "Rating of this set is closed: the labels are final."),
  useParts: function useRatingParts({ view, draft }) {
    const { values, update, errors } = draft;
    const readOnly = !view.open;
    const codesRef = useRef<HTMLInputElement>(null);
    const action = raterAction(values.primaryAnswer || null, values.infoRequest || null);
    return {
      // Keys of the keymap's judge-validation row: O / D / N primary answer, P / G / X information request.
      onKey: (key) => {
        const primary = PRIMARY_ANSWER_KEYS.find((p) => p.key === key);
        const info = INFO_REQUEST_KEYS.find((i) => i.key === key);
        if (primary) update({ primaryAnswer: primary.value });
        else if (info) update({ infoRequest: info.value });
        else return false;
        return true;
      },
      search: () => codesRef.current?.focus(),
      main: (
        <div>
          <article className="note-section" aria-label="Model response">
            <h3>Model response</h3>
            <p data-testid="response-text" style={{ whiteSpace: "pre-wrap" }}>
              {view.item.text || <em className="muted">(empty response)</em>}
            </p>
          </article>
          <details className="card" open>
            <summary>
              <strong>Feature definitions</strong> (from the judge prompt)
            </summary>
            {view.guide.features.map((f) => (
              <div key={f.title}>
                <h3>{f.title}</h3>
                <pre style={{ whiteSpace: "pre-wrap", font: "inherit" }}>{f.body}</pre>
              </div>
            ))}
          </details>
          <details className="card">
            <summary>
              <strong>Worked examples</strong> ({view.guide.examples.length})
            </summary>
            <ol>
              {view.guide.examples.map((ex, i) => (
                <li key={i} style={{ marginBottom: "0.75rem" }}>
                  <p>“{ex.response}”</p>
                  <dl className="kv">
                    {ex.output.map((o) => (
                      <div key={o.key} style={{ display: "contents" }}>
                        <dt>{o.key}</dt>
                        <dd>{o.value || <span className="muted">empty</span>}</dd>
                      </div>
                    ))}
                  </dl>
                </li>
              ))}
            </ol>
          </details>
        </div>
      ),
      fields: (
        <>
          <fieldset disabled={readOnly}>
            <legend>Primary answer</legend>
            {PRIMARY_ANSWER_KEYS.map((p) => (
              <label key={p.value} className="inline">
                <input
                  type="radio"
                  name="primaryAnswer"
                  value={p.value}
                  checked={values.primaryAnswer === p.value}
                  onChange={() => update({ primaryAnswer: p.value })}
                />{" "}
                {p.label} <kbd>{p.key.toUpperCase()}</kbd>
              </label>
            ))}
            {errors.primaryAnswer ? <p className="field-error">{errors.primaryAnswer}</p> : null}
          </fieldset>
          <fieldset disabled={readOnly}>
            <legend>Information request</legend>
            {INFO_REQUEST_KEYS.map((i) => (
              <label key={i.value} className="inline">
                <input
                  type="radio"
                  name="infoRequest"
                  value={i.value}
                  checked={values.infoRequest === i.value}
                  onChange={() => update({ infoRequest: i.value })}
                />{" "}
                {i.label} <kbd>{i.key.toUpperCase()}</kbd>
              </label>
            ))}
            {errors.infoRequest ? <p className="field-error">{errors.infoRequest}</p> : null}
          </fieldset>
          <p>
            Action by the rule: <strong data-testid="derived-action">{action ?? "— (choose both features)"}</strong>
          </p>
          <LimitedText
            id="icdCodes"
            label="ICD codes named in the response (optional, comma-separated)"
            what="The codes"
            value={values.icdCodes}
            max={TEXT_LIMITS.icdCodes}
            error={errors.icdCodes}
            onChange={(v) => update({ icdCodes: v })}
            disabled={readOnly}
            oneLine
            inputRef={codesRef}
          />
          <LimitedText
            id="diagnosisNames"
            label="Diagnosis names (optional, comma-separated)"
            what="The diagnosis names"
            value={values.diagnosisNames}
            max={TEXT_LIMITS.diagnosisNames}
            error={errors.diagnosisNames}
            onChange={(v) => update({ diagnosisNames: v })}
            disabled={readOnly}
            oneLine
          />
          <NotesField
            value={values.notes}
            error={errors.notes}
            onChange={(v) => update({ notes: v })}
            disabled={readOnly}
          />
        </>
      ),
    };
  },
};
