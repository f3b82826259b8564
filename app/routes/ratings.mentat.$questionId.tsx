import type { ActionFunctionArgs, LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data } from "@remix-run/node";
import { Link, useLoaderData, useNavigate } from "@remix-run/react";
import { useCallback, useEffect, useRef, useState } from "react";
import { z } from "zod";
import { isTyping, saveStateText, useExpertSave } from "~/components/expert-autosave";
import styles from "~/components/expert-ratings.css?url";
import { EXPERT_STATE_LABELS } from "~/core/expert-scales";
import { getDb } from "~/lib/db.server";
import { invariantFound, requireForm, requireRole } from "~/lib/guard.server";
import { useRootData } from "~/root";
import {
  getRaterQuestion,
  OptionRatingSchema,
  saveOptionRating,
  type RatingSaveResult,
} from "~/services/mentat.server";

export const meta: MetaFunction = () => [{ title: "Rate answer options · Concord" }];
export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];

const IdSchema = z.coerce.number().int().positive();

export async function loader({ request, params }: LoaderFunctionArgs) {
  const user = await requireRole(request, "rater");
  const id = IdSchema.safeParse(params.questionId);
  // A question that is not this expert's (or no question at all) answers 404: ids reveal nothing.
  return invariantFound(id.success ? getRaterQuestion(getDb(), { userId: user.id, questionId: id.data }) : null);
}

const PostSchema = z.object({
  intent: z.enum(["draft", "submit"]),
  version: z.coerce.number().int().min(0),
  values: z.string().max(50_000),
});

export async function action({ request, params }: ActionFunctionArgs) {
  const user = await requireRole(request, "rater");
  const form = await requireForm(request, user);
  const id = IdSchema.safeParse(params.questionId);
  const post = PostSchema.safeParse(Object.fromEntries(form));
  const malformed = () =>
    data<RatingSaveResult>({ ok: false, status: 422, message: "The form was malformed. Reload the page." }, 422);
  if (!id.success || !post.success) return malformed();
  let raw: unknown;
  try {
    raw = JSON.parse(post.data.values);
  } catch {
    return malformed();
  }
  const values = OptionRatingSchema.safeParse(raw);
  if (!values.success)
    return data<RatingSaveResult>({ ok: false, status: 422, message: values.error.issues[0]!.message }, 422);
  const result = saveOptionRating(getDb(), {
    userId: user.id,
    questionId: id.data,
    values: values.data,
    version: post.data.version,
    intent: post.data.intent,
  });
  return data<RatingSaveResult>(result, result.ok ? 200 : result.status);
}

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
  const next = view.nextQuestionId !== null ? `/ratings/mentat/${view.nextQuestionId}` : "/ratings";
  const form = useExpertSave<Values>({
    initial: { scores: view.scores, comment: view.comment },
    version: view.version,
    updatedAt: view.updatedAt,
    state: view.state,
    csrf,
    check: (v) => Object.fromEntries(v.scores.flatMap((s, i) => (s === null ? [[`score${i}`, "Not rated yet."]] : []))),
    onSubmitted: () => navigate(next),
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

  // Keyboard: 1–5 focus an option's slider (then arrows ±1, PageUp/PageDown ±10, Home 0, End 100), C the comment,
  // Ctrl+Enter submit, N next question.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        form.submit();
        return;
      }
      if (isTyping(e.target) || e.altKey || e.ctrlKey || e.metaKey) return;
      const key = e.key.toLowerCase();
      if (/^[1-5]$/.test(key)) sliders.current[Number(key) - 1]?.focus();
      else if (key === "c") document.getElementById("comment")?.focus();
      else if (key === "n" && view.nextQuestionId !== null) navigate(next);
      else return;
      e.preventDefault();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [form, navigate, next, view.nextQuestionId]);

  const rated = form.values.scores.filter((s) => s !== null).length;
  return (
    <section>
      <div className="row">
        <Link to="/ratings">Expert ratings</Link>
        <span className="muted">›</span>
        <h1 style={{ margin: 0 }}>
          Question {view.question.externalId}{" "}
          <small className="muted">
            ({view.question.bankName}, {view.question.domain})
          </small>
        </h1>
        <span className={`badge ${form.state}`} data-testid="item-state">
          {EXPERT_STATE_LABELS[form.state]}
        </span>
        <span className="spacer" />
        <span className="muted" data-testid="progress">
          {view.progress.done} of {view.progress.total} submitted
        </span>
        {view.nextQuestionId !== null ? (
          <Link to={next} className="button secondary">
            Next <kbd>N</kbd>
          </Link>
        ) : null}
      </div>
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
                      value={score ?? 50}
                      aria-labelledby={`option-${i}`}
                      aria-valuetext={score === null ? "not rated" : `${score} of 100`}
                      aria-invalid={error ? true : undefined}
                      data-testid={`slider-${i + 1}`}
                      onFocus={() => setFocused(i)}
                      onBlur={() => setFocused(null)}
                      onChange={(e) => setScore(i, e.currentTarget.valueAsNumber)}
                      // A click on an unrated slider's thumb changes nothing: take the value it shows.
                      onClick={(e) => score === null && setScore(i, e.currentTarget.valueAsNumber)}
                      onKeyDown={(e) => {
                        if (score === null && (e.key === "Enter" || e.key === " ")) {
                          e.preventDefault();
                          setScore(i, 50);
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
            <label htmlFor="comment">Comment (optional)</label>
            <textarea
              id="comment"
              value={form.values.comment}
              maxLength={5000}
              onChange={(e) => form.update({ comment: e.target.value })}
            />
            {form.message ? (
              <p className="notice bad" role="alert" data-testid="form-message">
                {form.message}
              </p>
            ) : null}
            <div className="row" style={{ marginTop: "0.75rem" }}>
              <button type="button" onClick={form.submit} disabled={form.submitting} data-testid="submit">
                {form.state === "submitted" ? "Save revision" : "Submit"} <kbd>Ctrl</kbd>+<kbd>Enter</kbd>
              </button>
              <span className="spacer" />
              <small className="muted" data-testid="save-state" aria-live="polite">
                {saveStateText(form.saveState, form.autosave, form.unsavedRevision)}
              </small>
            </div>
            {form.saveState.kind === "error" ? (
              <p className="field-error" role="alert">
                Not saved: {form.saveState.message}
              </p>
            ) : null}
          </div>
          <details className="card" open>
            <summary>Keyboard shortcuts</summary>
            <dl className="kv">
              <dt>
                <kbd>1</kbd>–<kbd>5</kbd>
              </dt>
              <dd>go to an option's slider</dd>
              <dt>
                <kbd>←</kbd> <kbd>→</kbd> / <kbd>PgUp</kbd> <kbd>PgDn</kbd>
              </dt>
              <dd>change the rating by 1 / by 10</dd>
              <dt>
                <kbd>Home</kbd> / <kbd>End</kbd>
              </dt>
              <dd>0 / 100</dd>
              <dt>
                <kbd>C</kbd>
              </dt>
              <dd>comment</dd>
              <dt>
                <kbd>Ctrl</kbd>+<kbd>Enter</kbd>
              </dt>
              <dd>submit and go to the next question</dd>
              <dt>
                <kbd>N</kbd>
              </dt>
              <dd>next question</dd>
            </dl>
          </details>
        </aside>
      </div>
    </section>
  );
}
