/**
 * The correction queue's workspace (docs/preparation.md, "Correction"), as a definition for the one workspace shell
 * (app/work-items/ui/workspace-page.tsx): beside each section's English text, the minimised source text that was
 * translated and its back-translation, with the section's scores; above them why the note needs correction (its
 * scores and the test names or scores the back-translation lost). Keys: the keymap's correction row (1–5 go to a
 * section's English text).
 */
import { useRef } from "react";
import type { GuidelinesView } from "~/guidelines/domain/guidelines";
import { LimitedText } from "~/work-items/ui/text-limit";
import { commonViewParts, type WorkspaceDefinition } from "~/work-items/ui/workspace-page";
import type { SaveResult } from "~/work-items/domain/work-item";
import {
  checkCorrection,
  CorrectionValuesSchema,
  MAX_CORRECTED_CHARS,
  type CorrectionValues,
} from "../domain/correction";
import type { CorrectionView } from "../correction.server";

type View = CorrectionView & { guidelines: GuidelinesView | null };

const score = (x: number | null, digits = 1) => (x === null ? "–" : x.toFixed(digits));

export const correctionWorkspace: WorkspaceDefinition<View, CorrectionValues, SaveResult> = {
  keymap: "correction",
  // The values' one schema, the route's (app/preparation/domain/correction.ts).
  schema: CorrectionValuesSchema,
  words: {
    list: { to: "/preparation/corrections", label: "Corrections" },
    form: "Correction",
    incomplete: "The correction is incomplete; see the marked fields.",
    stateTestId: "item-state",
  },
  itemKey: (view) => view.item.key,
  itemAttribute: "data-item-key",
  title: (view) => (
    <>
      Note {view.item.externalId}{" "}
      <small className="muted">
        ({view.item.projectName}, {view.item.sourceLanguage} → en)
      </small>
    </>
  ),
  ...commonViewParts<View, CorrectionValues>({
    path: "/preparation/corrections",
    neighbours: (view) => ({ next: view.nextKey, previous: view.previousKey }),
    initial: (view) => view.values,
    mode: (view) => (view.state === "submitted" ? "revision" : "draft"),
  }),
  check: (values, view) => checkCorrection(values, view.item.sections),
  useParts: function useCorrectionParts({ view, draft }) {
    const { values, update, errors } = draft;
    const fields = useRef<(HTMLTextAreaElement | null)[]>([]);
    const q = view.item.quality;
    return {
      onKey: (key) => {
        const i = Number(key) - 1;
        const el = Number.isInteger(i) && i >= 0 ? fields.current[i] : undefined;
        if (!el) return false;
        el.focus();
        return true;
      },
      notices: (
        <div className="card notice warn" data-testid="correction-reason">
          <strong>Why this note needs correction:</strong> {q.reason || "marked for correction"}.{" "}
          <span className="muted">
            BLEU {score(q.bleu)}, chrF {score(q.chrf)}
            {q.comet !== null ? `, COMET ${score(q.comet, 3)}` : ""}
          </span>
          {q.mismatches.length ? (
            <ul className="correction-mismatches">
              {q.mismatches.map((m, i) => (
                <li key={i}>
                  Section {m.section + 1}: {m.test}
                  {m.score ? ` ${m.score}` : ""} is not in the back-translation
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ),
      main: (
        <article className="card prep-note" aria-label="Source and back-translation" data-testid="correction-source">
          {view.item.sections.map((s) => (
            <section key={s.section} data-section={s.section}>
              <h3>
                {s.section + 1}. {s.title}{" "}
                <small className="muted">
                  BLEU {score(s.bleu)} · chrF {score(s.chrf)}
                  {s.comet !== null ? ` · COMET ${score(s.comet, 3)}` : ""}
                </small>
              </h3>
              <p className="prep-text" lang={view.item.sourceLanguage} data-testid="correction-source-text">
                {s.source}
              </p>
              <p className="prep-text muted correction-back" lang={view.item.sourceLanguage}>
                <span className="correction-label">Back-translation:</span> {s.backTranslation || "(none)"}
              </p>
            </section>
          ))}
        </article>
      ),
      fields: (
        <fieldset>
          <legend>English text</legend>
          {view.item.sections.length === 0 ? <p className="muted">This note has no translation yet.</p> : null}
          {view.item.sections.map((s, i) => (
            <div key={s.section} className="correction-field">
              <LimitedText
                id={`section-${s.section}`}
                label={
                  <>
                    {s.section + 1}. {s.title} <kbd>{i + 1}</kbd>
                  </>
                }
                what="A section's English text"
                value={values.texts[String(s.section)] ?? ""}
                max={MAX_CORRECTED_CHARS}
                error={errors[`section:${s.section}`]}
                inputRef={(el: HTMLTextAreaElement | null) => void (fields.current[i] = el)}
                onChange={(v) => update({ texts: { ...values.texts, [String(s.section)]: v } })}
              />
              {/* On a narrow screen the note is above the form: its source and back-translation under the field too. */}
              <details className="correction-inline">
                <summary>Source and back-translation</summary>
                <p className="prep-text" lang={view.item.sourceLanguage}>
                  {s.source}
                </p>
                <p className="prep-text muted correction-back" lang={view.item.sourceLanguage}>
                  {s.backTranslation || "(none)"}
                </p>
              </details>
            </div>
          ))}
        </fieldset>
      ),
    };
  },
};
