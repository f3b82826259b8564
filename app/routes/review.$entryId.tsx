import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data } from "@remix-run/node";
import { Link, useFetcher, useLoaderData, useNavigate } from "@remix-run/react";
import { useCallback, useEffect, useRef, useState } from "react";
import { z } from "zod";
import { checkVote, REVIEW_CONFIDENCES, type VoteValues } from "~/core/screening";
import { getDb } from "~/lib/db.server";
import { invariantFound, requireForm, requireRole } from "~/lib/guard.server";
import { useRootData } from "~/root";
import {
  getReviewEntry,
  saveVoteDraft,
  submitVote,
  VoteValuesSchema,
  type VoteResult,
  type VoteState,
} from "~/services/screening-review.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `Item ${data?.entry.position ?? ""} · Screening review · Concord` },
];

const EntryIdSchema = z.coerce.number().int().positive();

/**
 * The reviewer's item. The service's projection is the blinding: it returns the item's messages and the reviewer's
 * own vote, never control status, screen labels, rubrics or other reviewers' votes. Not theirs → 404.
 */
export async function loader({ request, params }: LoaderFunctionArgs) {
  const user = await requireRole(request, "rater");
  const id = EntryIdSchema.safeParse(params.entryId);
  return invariantFound(id.success ? getReviewEntry(getDb(), { userId: user.id, entryId: id.data }) : null);
}

const PostSchema = z.object({
  intent: z.enum(["draft", "submit"]),
  version: z.coerce.number().int().min(0),
  values: z.string().max(100_000),
});

const MALFORMED: VoteResult = {
  ok: false,
  status: 422,
  message: "The form was malformed. Reload the page.",
  errors: {},
};

export async function action({ request, params }: ActionFunctionArgs) {
  const user = await requireRole(request, "rater");
  const form = await requireForm(request, user);
  const entryId = EntryIdSchema.safeParse(params.entryId);
  const post = PostSchema.safeParse(Object.fromEntries(form));
  if (!entryId.success || !post.success) return data<VoteResult>(MALFORMED, 422);
  let raw: unknown;
  try {
    raw = JSON.parse(post.data.values);
  } catch {
    return data<VoteResult>(MALFORMED, 422);
  }
  const values = VoteValuesSchema.safeParse(raw);
  if (!values.success) {
    const errors: Record<string, string> = {};
    for (const issue of values.error.issues) errors[String(issue.path[0] ?? "_form")] ??= issue.message;
    return data<VoteResult>(
      { ok: false, status: 422, message: "Some values are not valid; see the marked fields.", errors },
      422,
    );
  }
  const input = { userId: user.id, entryId: entryId.data, values: values.data, version: post.data.version };
  const result = post.data.intent === "draft" ? saveVoteDraft(getDb(), input) : submitVote(getDb(), input);
  return data<VoteResult>(result, result.ok ? 200 : result.status);
}

type SaveState =
  | { kind: "idle" }
  | { kind: "saving" }
  | { kind: "saved"; at: number }
  | { kind: "error"; message: string };

const STATE_NAMES: Record<VoteState, string> = { not_started: "not started", draft: "draft", submitted: "submitted" };
const ROLE_NAMES: Record<string, string> = {
  user: "User",
  assistant: "Assistant",
  system: "System",
  developer: "Developer",
  text: "Text",
};

function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return Boolean(el?.closest("input[type=text], input[type=search], textarea, select, [contenteditable]"));
}

export default function ReviewItem() {
  const view = useLoaderData<typeof loader>();
  // One component per item: the form starts from the server's values, never from the previous item's.
  return <Workspace key={view.entry.id} view={view} />;
}

function Workspace({ view }: { view: ReturnType<typeof useLoaderData<typeof loader>> }) {
  const csrf = useRootData()?.user?.csrf ?? "";
  const navigate = useNavigate();
  const closed = !view.entry.roundOpen;
  const submitted = view.state === "submitted";
  const [values, setValues] = useState<VoteValues>(view.values);
  const [version, setVersion] = useState(view.version);
  const [saveState, setSaveState] = useState<SaveState>(
    view.updatedAt ? { kind: "saved", at: view.updatedAt } : { kind: "idle" },
  );
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [message, setMessage] = useState<string | null>(null);
  const draftFetcher = useFetcher<VoteResult>();
  const submitFetcher = useFetcher<VoteResult>();
  const dirty = useRef(false);
  const categoryRef = useRef<HTMLSelectElement>(null);
  const formRef = useRef<HTMLDivElement>(null);

  const update = useCallback(
    (patch: Partial<VoteValues>) => {
      if (closed) return;
      setValues((v) => ({ ...v, ...patch, ...(patch.relevant === "no" ? { category: "" } : {}) }));
      dirty.current = true;
      setErrors((e) => {
        const next = { ...e };
        for (const k of Object.keys(patch)) delete next[k];
        return next;
      });
    },
    [closed],
  );

  // Drafts are saved shortly after each change while the vote is a draft.
  const autosave = !closed && !submitted;
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
      navigate(view.nextEntryId !== null && !r.roundClosed ? `/review/${view.nextEntryId}` : "/review");
    } else {
      setMessage(r.message);
      if ("errors" in r) setErrors(r.errors);
    }
  }, [submitFetcher.data, submitFetcher.state]); // eslint-disable-line react-hooks/exhaustive-deps

  const submit = useCallback(() => {
    if (closed || submitFetcher.state !== "idle") return;
    // The server's rule (core checkVote), so mistakes show at once; the server checks again.
    const problems = checkVote(values, view.categories);
    if (Object.keys(problems).length) {
      setErrors(problems as Record<string, string>);
      setMessage("The vote is incomplete; see the marked fields.");
      return;
    }
    dirty.current = false;
    submitFetcher.submit(
      { intent: "submit", version: String(version), values: JSON.stringify(values), csrf },
      { method: "post" },
    );
  }, [closed, submitFetcher, values, version, csrf, view.categories]);

  // Keyboard: Y / N relevance, C category, 1–3 confidence, Ctrl+Enter submit, J next, K previous.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        submit();
        return;
      }
      if (isTyping(e.target) || e.altKey || e.ctrlKey || e.metaKey) return;
      const key = e.key.toLowerCase();
      if (key === "y") {
        update({ relevant: "yes" });
        // The category select appears for a relevant item; focus it once rendered.
        setTimeout(() => categoryRef.current?.focus(), 0);
      } else if (key === "n") update({ relevant: "no" });
      else if (key === "c" && values.relevant === "yes") categoryRef.current?.focus();
      else if (/^[1-3]$/.test(key)) update({ confidence: REVIEW_CONFIDENCES[Number(key) - 1]! });
      else if (key === "j" && view.nextEntryId !== null) navigate(`/review/${view.nextEntryId}`);
      else if (key === "k" && view.previousEntryId !== null) navigate(`/review/${view.previousEntryId}`);
      else return;
      e.preventDefault();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [submit, update, values.relevant, view.nextEntryId, view.previousEntryId, navigate]);

  const fieldError = (name: string) =>
    errors[name] ? (
      <p className="field-error" role="alert">
        {errors[name]}
      </p>
    ) : null;

  return (
    <section>
      <div className="row">
        <Link to="/review">My items</Link>
        <span className="muted">›</span>
        <h1 style={{ margin: 0 }}>
          Item {view.entry.position} of {view.entry.total}{" "}
          <small className="muted">
            ({view.entry.studyName}, round {view.entry.round})
          </small>
        </h1>
        <span className={`badge ${view.state}`} data-testid="vote-state">
          {STATE_NAMES[view.state]}
        </span>
        <span className="spacer" />
        <span className="muted" data-testid="progress">
          {view.progress.done} of {view.progress.total} submitted
        </span>
        {view.previousEntryId !== null ? (
          <Link to={`/review/${view.previousEntryId}`} className="button secondary">
            Previous <kbd>K</kbd>
          </Link>
        ) : null}
        {view.nextEntryId !== null ? (
          <Link to={`/review/${view.nextEntryId}`} className="button secondary">
            Next <kbd>J</kbd>
          </Link>
        ) : null}
      </div>
      <div className="workspace">
        <div aria-label="Item" data-testid="item-text">
          {view.entry.messages.map((m, i) => (
            <article key={i} className="note-section" data-role={m.role}>
              {view.entry.kind === "conversation" ? (
                <h3>
                  <span className="num">{i + 1}</span> {ROLE_NAMES[m.role] ?? m.role}
                </h3>
              ) : null}
              <p>{m.content}</p>
            </article>
          ))}
        </div>
        <aside>
          <div className="card" ref={formRef} tabIndex={-1} aria-label="Vote">
            <fieldset disabled={closed}>
              <legend>
                Relevant to the subset? <kbd>Y</kbd>/<kbd>N</kbd>
              </legend>
              <label className="inline">
                <input
                  type="radio"
                  name="relevant"
                  value="yes"
                  checked={values.relevant === "yes"}
                  onChange={() => update({ relevant: "yes" })}
                />
                Yes
              </label>
              <label className="inline">
                <input
                  type="radio"
                  name="relevant"
                  value="no"
                  checked={values.relevant === "no"}
                  onChange={() => update({ relevant: "no" })}
                />
                No
              </label>
              {fieldError("relevant")}
            </fieldset>
            {values.relevant === "yes" ? (
              <>
                <label htmlFor="category">
                  Category <kbd>C</kbd>
                </label>
                <select
                  id="category"
                  ref={categoryRef}
                  value={values.category}
                  disabled={closed}
                  onChange={(e) => update({ category: e.target.value })}
                  onKeyDown={(e) => {
                    // Enter or Esc leaves the list, so that the single-key shortcuts work again.
                    if (e.key === "Enter" || e.key === "Escape") {
                      e.preventDefault();
                      formRef.current?.focus();
                    }
                  }}
                >
                  <option value="">Choose…</option>
                  {view.categories.map((c) => (
                    <option key={c} value={c}>
                      {c}
                    </option>
                  ))}
                </select>
                {fieldError("category")}
              </>
            ) : null}
            <fieldset disabled={closed}>
              <legend>
                Confidence <kbd>1</kbd>–<kbd>3</kbd>
              </legend>
              {REVIEW_CONFIDENCES.map((c, i) => (
                <label key={c} className="inline">
                  <input
                    type="radio"
                    name="confidence"
                    value={c}
                    checked={values.confidence === c}
                    onChange={() => update({ confidence: c })}
                  />
                  {c} <small className="muted">({i + 1})</small>
                </label>
              ))}
              {fieldError("confidence")}
            </fieldset>
            <label htmlFor="notes">Notes (optional)</label>
            <textarea
              id="notes"
              value={values.notes}
              disabled={closed}
              onChange={(e) => update({ notes: e.target.value })}
            />
            {message ? (
              <p className="notice bad" role="alert" data-testid="form-message">
                {message}
              </p>
            ) : null}
            <div className="row" style={{ marginTop: "0.75rem" }}>
              {closed ? (
                <span className="notice ok">This round has closed: every vote is in.</span>
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
                <kbd>Y</kbd> / <kbd>N</kbd>
              </dt>
              <dd>relevant: yes / no</dd>
              <dt>
                <kbd>C</kbd>
              </dt>
              <dd>category (arrows or type, Enter)</dd>
              <dt>
                <kbd>1</kbd>–<kbd>3</kbd>
              </dt>
              <dd>confidence: low, medium, high</dd>
              <dt>
                <kbd>Ctrl</kbd>+<kbd>Enter</kbd>
              </dt>
              <dd>submit and go to the next item</dd>
              <dt>
                <kbd>J</kbd> / <kbd>K</kbd>
              </dt>
              <dd>next / previous item</dd>
            </dl>
          </details>
        </aside>
      </div>
    </section>
  );
}
