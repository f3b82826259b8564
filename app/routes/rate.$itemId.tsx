import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data } from "@remix-run/node";
import { Link, useFetcher, useLoaderData, useNavigate } from "@remix-run/react";
import { useCallback, useEffect, useRef, useState } from "react";
import { z } from "zod";
import { INFO_REQUEST_KEYS, PRIMARY_ANSWER_KEYS, RATING_STATE_LABELS } from "~/components/judge-labels";
import { raterAction } from "~/core/judge";
import { getDb } from "~/lib/db.server";
import { invariantFound, requireForm, requireRole } from "~/lib/guard.server";
import { useRootData } from "~/root";
import {
  getRaterItem,
  raterGuide,
  RatingValuesSchema,
  saveRatingDraft,
  submitRating,
  type RatingSaveResult,
  type RatingValues,
} from "~/services/judge-ratings.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `${data?.item.annotationId ?? "Response"} · Rate · Concord` },
];

const ItemIdSchema = z.coerce.number().int().positive();

/**
 * Blinding (SPEC §1): the loader returns the response text, the rater's own labels and the judge prompt's guide —
 * nothing else. getRaterItem selects exactly those columns; an item not assigned to this rater answers 404.
 */
export async function loader({ request, params }: LoaderFunctionArgs) {
  const user = await requireRole(request, "rater");
  const id = ItemIdSchema.safeParse(params.itemId);
  const view = invariantFound(id.success ? getRaterItem(getDb(), { raterId: user.id, itemId: id.data }) : null);
  return { ...view, guide: raterGuide() };
}

const PostSchema = z.object({
  intent: z.enum(["draft", "submit"]),
  version: z.coerce.number().int().min(0),
  values: z.string().max(50_000),
});

const MALFORMED = {
  ok: false as const,
  status: 422 as const,
  message: "The form was malformed. Reload the page.",
  errors: {},
};

export async function action({ request, params }: ActionFunctionArgs) {
  const user = await requireRole(request, "rater");
  const form = await requireForm(request, user);
  const itemId = ItemIdSchema.safeParse(params.itemId);
  const post = PostSchema.safeParse(Object.fromEntries(form));
  if (!itemId.success || !post.success) return data<RatingSaveResult>(MALFORMED, 422);
  let raw: unknown;
  try {
    raw = JSON.parse(post.data.values);
  } catch {
    return data<RatingSaveResult>(MALFORMED, 422);
  }
  const values = RatingValuesSchema.safeParse(raw);
  if (!values.success) {
    const errors: Record<string, string> = {};
    for (const issue of values.error.issues) errors[String(issue.path[0] ?? "_form")] ??= issue.message;
    return data<RatingSaveResult>(
      { ok: false, status: 422, message: "Some values are not valid; see the marked fields.", errors },
      422,
    );
  }
  const input = { raterId: user.id, itemId: itemId.data, values: values.data, version: post.data.version };
  const result = post.data.intent === "draft" ? saveRatingDraft(getDb(), input) : submitRating(getDb(), input);
  return data<RatingSaveResult>(result, result.ok ? 200 : result.status);
}

type SaveState =
  | { kind: "idle" }
  | { kind: "saving" }
  | { kind: "saved"; at: number }
  | { kind: "error"; message: string };

function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return Boolean(el?.closest("input[type=text], input[type=search], textarea, select, [contenteditable]"));
}

export default function RateItem() {
  const view = useLoaderData<typeof loader>();
  // One component per response: the form starts from the server's values, never from the previous response.
  return <Workspace key={view.item.id} view={view} />;
}

function Workspace({ view }: { view: ReturnType<typeof useLoaderData<typeof loader>> }) {
  const csrf = useRootData()?.user?.csrf ?? "";
  const navigate = useNavigate();
  const readOnly = !view.open;
  const submitted = view.state === "submitted";
  const [values, setValues] = useState<RatingValues>(view.values);
  const [version, setVersion] = useState(view.version);
  const [saveState, setSaveState] = useState<SaveState>(
    view.updatedAt ? { kind: "saved", at: view.updatedAt } : { kind: "idle" },
  );
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [message, setMessage] = useState<string | null>(null);
  const draftFetcher = useFetcher<RatingSaveResult>();
  const submitFetcher = useFetcher<RatingSaveResult>();
  const dirty = useRef(false);
  const codesRef = useRef<HTMLInputElement>(null);
  const formRef = useRef<HTMLDivElement>(null);

  const update = useCallback(
    (patch: Partial<RatingValues>) => {
      if (readOnly) return;
      setValues((v) => ({ ...v, ...patch }));
      dirty.current = true;
      setErrors((e) => {
        const next = { ...e };
        for (const k of Object.keys(patch)) delete next[k];
        return next;
      });
    },
    [readOnly],
  );

  // Drafts are saved on the server shortly after each change, while the rating is not yet submitted.
  const autosave = !readOnly && !submitted;
  useEffect(() => {
    if (!autosave || !dirty.current || draftFetcher.state !== "idle") return;
    const timer = setTimeout(() => {
      dirty.current = false;
      setSaveState({ kind: "saving" });
      draftFetcher.submit(
        { intent: "draft", version: String(version), values: JSON.stringify(values), csrf },
        { method: "post" },
      );
    }, 700);
    return () => clearTimeout(timer);
  }, [values, version, autosave, draftFetcher.state]); // eslint-disable-line react-hooks/exhaustive-deps

  useEffect(() => {
    const r = draftFetcher.data;
    if (!r || draftFetcher.state !== "idle") return;
    if (r.ok) {
      setVersion(r.version);
      setSaveState({ kind: "saved", at: r.savedAt });
    } else {
      dirty.current = false;
      setSaveState({ kind: "error", message: r.message });
    }
  }, [draftFetcher.data, draftFetcher.state]);

  useEffect(() => {
    const r = submitFetcher.data;
    if (!r || submitFetcher.state !== "idle") return;
    if (r.ok) {
      setVersion(r.version);
      navigate(view.nextItemId !== null ? `/rate/${view.nextItemId}` : "/rate");
    } else {
      setMessage(r.message);
      if ("errors" in r) setErrors(r.errors);
    }
  }, [submitFetcher.data, submitFetcher.state]); // eslint-disable-line react-hooks/exhaustive-deps

  const submit = useCallback(() => {
    if (readOnly || submitFetcher.state !== "idle") return;
    const missing: Record<string, string> = {};
    if (!values.primaryAnswer) missing.primaryAnswer = "Choose the primary answer (C, D or N).";
    if (!values.infoRequest) missing.infoRequest = "Choose the information request (S, G or X).";
    if (Object.keys(missing).length) {
      setErrors(missing);
      setMessage("Both features are needed to submit; see the marked fields.");
      return;
    }
    dirty.current = false;
    submitFetcher.submit(
      { intent: "submit", version: String(version), values: JSON.stringify(values), csrf },
      { method: "post" },
    );
  }, [readOnly, submitFetcher, values, version, csrf]);

  // Keyboard: C / D / N primary answer, S / G / X information request, / ICD codes, Ctrl+Enter submit, → next.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        submit();
        return;
      }
      if (e.key === "Escape" && isTyping(e.target)) {
        formRef.current?.focus();
        return;
      }
      if (isTyping(e.target) || e.altKey || e.ctrlKey || e.metaKey) return;
      const key = e.key.toLowerCase();
      const primary = PRIMARY_ANSWER_KEYS.find((p) => p.key === key);
      const info = INFO_REQUEST_KEYS.find((i) => i.key === key);
      if (primary) update({ primaryAnswer: primary.value });
      else if (info) update({ infoRequest: info.value });
      else if (key === "/") codesRef.current?.focus();
      // Arrows on a focused radio button move within its group, as browsers do; elsewhere → is "next".
      else if (
        e.key === "ArrowRight" &&
        view.nextItemId !== null &&
        !(e.target as HTMLElement).matches?.("input[type=radio]")
      )
        navigate(`/rate/${view.nextItemId}`);
      else return;
      e.preventDefault();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [submit, update, view.nextItemId, navigate]);

  const action = raterAction(values.primaryAnswer || null, values.infoRequest || null);
  return (
    <section>
      <div className="row">
        <Link to="/rate">My responses</Link>
        <span className="muted">›</span>
        <h1 style={{ margin: 0 }}>Response {view.item.annotationId}</h1>
        <span className={`badge ${view.state}`} data-testid="rating-state">
          {RATING_STATE_LABELS[view.state]}
        </span>
        <span className="spacer" />
        <span className="muted" data-testid="progress">
          {view.progress.done} of {view.progress.total} submitted
        </span>
        {view.nextItemId !== null ? (
          <Link to={`/rate/${view.nextItemId}`} className="button secondary">
            Next <kbd>→</kbd>
          </Link>
        ) : null}
      </div>
      <div className="workspace">
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
        <aside>
          <div className="card" ref={formRef} tabIndex={-1} aria-label="Rating">
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
            <label htmlFor="icdCodes">ICD codes named in the response (optional, comma-separated)</label>
            <input
              id="icdCodes"
              type="text"
              ref={codesRef}
              value={values.icdCodes}
              disabled={readOnly}
              onChange={(e) => update({ icdCodes: e.target.value })}
            />
            {errors.icdCodes ? <p className="field-error">{errors.icdCodes}</p> : null}
            <label htmlFor="diagnosisNames">Diagnosis names (optional, comma-separated)</label>
            <input
              id="diagnosisNames"
              type="text"
              value={values.diagnosisNames}
              disabled={readOnly}
              onChange={(e) => update({ diagnosisNames: e.target.value })}
            />
            <label htmlFor="notes">Notes (optional)</label>
            <textarea
              id="notes"
              value={values.notes}
              disabled={readOnly}
              onChange={(e) => update({ notes: e.target.value })}
            />
            {message ? (
              <p className="notice bad" role="alert" data-testid="form-message">
                {message}
              </p>
            ) : null}
            <div className="row" style={{ marginTop: "0.75rem" }}>
              {readOnly ? (
                <span className="notice ok">Rating of this set is closed: the labels are final.</span>
              ) : (
                <button type="button" onClick={submit} disabled={submitFetcher.state !== "idle"} data-testid="submit">
                  {submitted ? "Save revision" : "Submit"} <kbd>Ctrl</kbd>+<kbd>Enter</kbd>
                </button>
              )}
              <span className="spacer" />
              <small className="muted" data-testid="save-state" aria-live="polite">
                {saveState.kind === "saving"
                  ? "Saving…"
                  : saveState.kind === "saved"
                  ? `Saved ${new Date(saveState.at).toLocaleTimeString()}`
                  : saveState.kind === "idle" && autosave
                  ? "Drafts save automatically"
                  : ""}
              </small>
            </div>
            {saveState.kind === "error" ? (
              <p className="field-error" role="alert">
                Not saved: {saveState.message}
              </p>
            ) : null}
          </div>
          <details className="card" open>
            <summary>Keyboard shortcuts</summary>
            <dl className="kv">
              <dt>
                <kbd>C</kbd> / <kbd>D</kbd> / <kbd>N</kbd>
              </dt>
              <dd>primary answer: committed / differential / none</dd>
              <dt>
                <kbd>S</kbd> / <kbd>G</kbd> / <kbd>X</kbd>
              </dt>
              <dd>information request: specific / generic only / none</dd>
              <dt>
                <kbd>/</kbd>
              </dt>
              <dd>type ICD codes (Tab to names and notes, Esc to leave)</dd>
              <dt>
                <kbd>Ctrl</kbd>+<kbd>Enter</kbd>
              </dt>
              <dd>submit and go to the next response</dd>
              <dt>
                <kbd>→</kbd>
              </dt>
              <dd>next response without submitting</dd>
            </dl>
          </details>
        </aside>
      </div>
    </section>
  );
}
