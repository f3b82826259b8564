import type { ActionFunctionArgs, LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData, useNavigate } from "@remix-run/react";
import { useCallback, useRef, useState } from "react";
import { DraftFooter } from "~/work-items/ui/draft-footer";
import styles from "~/expert-panel/ui/expert-ratings.css?url";
import { useWorkspaceKeys } from "~/work-items/ui/shortcuts";
import { liveWorkState, useDraft } from "~/work-items/ui/use-draft";
import { ShortcutsCard, WorkspaceHeader } from "~/work-items/ui/workspace-header";
import { WORK_STATE_LABELS, type WorkState } from "~/work-items/domain/work-item";
import { useRootData } from "~/root";
import { workspaceAction, workspaceLoader } from "~/work-items/workspace-route.server";
import { getRaterQuestion, OptionRatingSchema, saveOptionRating, type RatingSaveResult } from "~/mentat/ratings.server";
import { LimitedText } from "~/work-items/ui/text-limit";
import { TEXT_LIMITS, overLimitErrors } from "~/work-items/domain/text-limits";
import { GuidelinesPanel } from "~/work-items/ui/guidelines-panel";
import { firstKeyValue, SLIDER_MIDDLE } from "~/mentat/domain/rating-slider";

export const meta: MetaFunction = () => [{ title: "Rate answer options · Concord" }];
// A failed save keeps the workspace (and the draft) on screen: docs/architecture.md, "Saving under load".
export { clientAction, headers, shouldRevalidate } from "~/work-items/ui/save-action";
export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];

// A question that is not this expert's (or no question at all) answers 404: ids reveal nothing.
export const loader = ({ request, params }: LoaderFunctionArgs) =>
  workspaceLoader(request, "rater", params.questionId, {
    find: (db, userId, questionId) => getRaterQuestion(db, { userId, questionId }),
    guidelines: "mentat_rating",
    itemId: (view) => view.question.id,
  });

export const action = ({ request, params }: ActionFunctionArgs) =>
  workspaceAction(request, "rater", params.questionId, {
    schema: OptionRatingSchema,
    maxLength: 50_000,
    report: "message",
    save: (db, { id: questionId, ...input }) => saveOptionRating(db, { ...input, questionId }),
  });

export default function RateQuestion() {
  const view = useLoaderData<typeof loader>();
  return <Workspace key={view.question.id} view={view} />;
}

interface Values {
  scores: (number | null)[];
  comment: string;
}

function Workspace({ view }: { view: ReturnType<typeof useLoaderData<typeof loader>> }) {
  const csrf = useRootData()?.user?.csrf ?? "";
  const navigate = useNavigate();
  const next = view.nextQuestionId !== null ? `/mentat/${view.nextQuestionId}` : "/expert-ratings";
  const [state, setState] = useState<WorkState>(view.state);
  const form = useDraft<Values, RatingSaveResult>({
    initial: { scores: view.scores, comment: view.comment },
    version: view.version,
    updatedAt: view.updatedAt,
    csrf,
    // Changes to submitted ratings are not autosaved: they wait for "Save revision".
    autosave: state !== "submitted",
    check: (v) => ({
      ...Object.fromEntries(v.scores.flatMap((s, i) => (s === null ? [[`score${i}`, "Not rated yet."]] : []))),
      ...overLimitErrors(v, { comment: ["A comment", TEXT_LIMITS.comment] }),
    }),
    incompleteMessage: "Some answers are missing; see the marked fields.",
    onSubmitted: (r) => {
      setState(r.state);
      navigate(next);
    },
  });
  const sliders = useRef<(HTMLInputElement | null)[]>([]);
  const [focused, setFocused] = useState<number | null>(null);
  const setScore = useCallback(
    (i: number, value: number) =>
      form.update({
        scores: form.values.scores.map((s, k) => (k === i ? Math.max(0, Math.min(100, Math.round(value))) : s)),
      }),
    [form],
  );

  // Keyboard (app/work-items/domain/keymap.ts): 1–5 focus an option's slider (then arrows ±1, PageUp/PageDown ±10,
  // Home 0, End 100), C the comment; next, previous, Ctrl+Enter and the rest as in every workspace.
  const previous = view.previousQuestionId !== null ? `/mentat/${view.previousQuestionId}` : null;
  useWorkspaceKeys(
    form.submit,
    (key) => {
      if (/^[1-5]$/.test(key)) sliders.current[Number(key) - 1]?.focus();
      else if (key === "c") document.getElementById("comment")?.focus();
      else return false;
      return true;
    },
    { nav: { next: view.nextQuestionId !== null ? next : null, previous } },
  );

  const rated = form.values.scores.filter((s) => s !== null).length;
  return (
    <section>
      <WorkspaceHeader
        list={{ to: "/expert-ratings", label: "Expert ratings" }}
        title={
          <>
            Question {view.question.externalId}{" "}
            <small className="muted">
              ({view.question.bankName}, {view.question.domain})
            </small>
          </>
        }
        state={{
          value: liveWorkState(state, form),
          label: WORK_STATE_LABELS[liveWorkState(state, form)],
          testId: "item-state",
        }}
        progress={view.progress}
        links={[
          { label: "Previous", to: previous },
          { label: "Next", to: view.nextQuestionId !== null ? next : null },
        ]}
      />
      <GuidelinesPanel guidelines={view.guidelines} />
      <div className="workspace">
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
              const score = form.values.scores[i] ?? null;
              const error = form.errors[`score${i}`];
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
                        if (v === "") form.update({ scores: form.values.scores.map((s, k) => (k === i ? null : s)) });
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
        <aside>
          <div className="card" aria-label="Rating">
            <p>
              <strong data-testid="rated-count">{rated} of 5</strong> options rated
            </p>
            <LimitedText
              id="comment"
              label="Comment (optional)"
              what="A comment"
              value={form.values.comment}
              max={TEXT_LIMITS.comment}
              error={form.errors.comment}
              onChange={(v) => form.update({ comment: v })}
            />
            <DraftFooter draft={form} submitted={state === "submitted"} revisionHint />
          </div>
          <ShortcutsCard workspace="mentat" />
        </aside>
      </div>
    </section>
  );
}
