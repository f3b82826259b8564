import type { ActionFunctionArgs, LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data } from "@remix-run/node";
import { Link, useLoaderData, useNavigate } from "@remix-run/react";
import { useEffect, useState } from "react";
import { z } from "zod";
import { isTyping, saveStateText, useExpertSave } from "~/components/expert-autosave";
import styles from "~/components/expert-ratings.css?url";
import {
  EXPERT_STATE_LABELS,
  REVIEW_DIMENSION_LABELS,
  REVIEW_DIMENSIONS,
  REVIEW_SCALE,
  type ReviewDimension,
} from "~/core/expert-scales";
import { getDb } from "~/lib/db.server";
import { invariantFound, requireForm, requireRole } from "~/lib/guard.server";
import { useRootData } from "~/root";
import {
  getRaterItem,
  ReviewValuesSchema,
  saveReview,
  type ReviewSaveResult,
  type ReviewValues,
} from "~/services/case-review.server";

export const meta: MetaFunction = () => [{ title: "Review a case · Concord" }];
export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];

const IdSchema = z.coerce.number().int().positive();

export async function loader({ request, params }: LoaderFunctionArgs) {
  const user = await requireRole(request, "rater");
  const id = IdSchema.safeParse(params.itemId);
  return invariantFound(id.success ? getRaterItem(getDb(), { userId: user.id, itemId: id.data }) : null);
}

const PostSchema = z.object({
  intent: z.enum(["draft", "submit"]),
  version: z.coerce.number().int().min(0),
  values: z.string().max(50_000),
});

export async function action({ request, params }: ActionFunctionArgs) {
  const user = await requireRole(request, "rater");
  const form = await requireForm(request, user);
  const id = IdSchema.safeParse(params.itemId);
  const post = PostSchema.safeParse(Object.fromEntries(form));
  const malformed = () =>
    data<ReviewSaveResult>({ ok: false, status: 422, message: "The form was malformed. Reload the page." }, 422);
  if (!id.success || !post.success) return malformed();
  let raw: unknown;
  try {
    raw = JSON.parse(post.data.values);
  } catch {
    return malformed();
  }
  const values = ReviewValuesSchema.safeParse(raw);
  if (!values.success)
    return data<ReviewSaveResult>({ ok: false, status: 422, message: values.error.issues[0]!.message }, 422);
  const result = saveReview(getDb(), {
    userId: user.id,
    itemId: id.data,
    values: values.data,
    version: post.data.version,
    intent: post.data.intent,
  });
  return data<ReviewSaveResult>(result, result.ok ? 200 : result.status);
}

export default function ReviewItem() {
  const view = useLoaderData<typeof loader>();
  return <Workspace key={view.item.id} view={view} />;
}

const SCALE_HINTS: Record<ReviewDimension, [string, string]> = {
  naturalness: ["reads as machine-made", "reads as a real clinician or patient wrote it"],
  validity: ["does not support the diagnosis", "fully consistent with the diagnostic criteria"],
  realism: ["not a plausible patient", "a patient one meets in practice"],
};

function Workspace({ view }: { view: ReturnType<typeof useLoaderData<typeof loader>> }) {
  const csrf = useRootData()?.user?.csrf ?? "";
  const navigate = useNavigate();
  const isSeed = view.item.kind === "seed";
  const next = view.nextItemId !== null ? `/ratings/cases/${view.nextItemId}` : "/ratings";
  const form = useExpertSave<ReviewValues>({
    initial: view.values,
    version: view.version,
    updatedAt: view.updatedAt,
    state: view.state,
    csrf,
    check: (v) => {
      const e: Record<string, string> = {};
      if (isSeed) {
        if (!v.decision) e.decision = "Accept or reject the seed.";
        if (v.decision === "reject" && !v.reason.trim()) e.reason = "Say why the seed is rejected.";
      } else for (const d of REVIEW_DIMENSIONS) if (v[d] === null) e[d] = "Choose a score from 1 to 5.";
      return e;
    },
    onSubmitted: () => navigate(next),
  });
  // The dimension digits 1–5 apply to: the one last focused or chosen, else the first without a score.
  const [active, setActive] = useState<ReviewDimension>(
    REVIEW_DIMENSIONS.find((d) => view.values[d] === null) ?? "naturalness",
  );

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        form.submit();
        return;
      }
      if (isTyping(e.target) || e.altKey || e.ctrlKey || e.metaKey) return;
      const key = e.key.toLowerCase();
      if (!isSeed && /^[1-5]$/.test(key)) {
        form.update({ [active]: Number(key) } as Partial<ReviewValues>);
        const after = REVIEW_DIMENSIONS[REVIEW_DIMENSIONS.indexOf(active) + 1];
        if (after) setActive(after);
      } else if (isSeed && key === "a") form.update({ decision: "accept" });
      else if (isSeed && key === "r") {
        form.update({ decision: "reject" });
        setTimeout(() => document.getElementById("reason")?.focus(), 0);
      } else if (key === "c") document.getElementById("comment")?.focus();
      else if (key === "n" && view.nextItemId !== null) navigate(next);
      else return;
      e.preventDefault();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [form, active, isSeed, navigate, next, view.nextItemId]);

  return (
    <section>
      <div className="row">
        <Link to="/ratings">Expert ratings</Link>
        <span className="muted">›</span>
        <h1 style={{ margin: 0 }}>
          {isSeed ? "Seed" : "Case"} {view.item.externalId}{" "}
          <small className="muted">
            ({view.item.setName}
            {view.item.caseType ? `, type ${view.item.caseType}` : ""})
          </small>
        </h1>
        <span className={`badge ${form.state}`} data-testid="item-state">
          {EXPERT_STATE_LABELS[form.state]}
        </span>
        <span className="spacer" />
        <span className="muted" data-testid="progress">
          {view.progress.done} of {view.progress.total} submitted
        </span>
        {view.nextItemId !== null ? (
          <Link to={next} className="button secondary">
            Next <kbd>N</kbd>
          </Link>
        ) : null}
      </div>
      <div className="workspace">
        <article className="card" aria-label="Case">
          <p className="case-text" data-testid="case-text">
            {view.item.text}
          </p>
        </article>
        <aside>
          <div className="card" aria-label="Review">
            {isSeed ? (
              <>
                <fieldset aria-invalid={form.errors.decision ? true : undefined}>
                  <legend>Is this seed case valid?</legend>
                  <div className="scale-group" role="radiogroup">
                    {(["accept", "reject"] as const).map((d) => (
                      <label key={d} className={form.values.decision === d ? "chosen" : ""}>
                        <input
                          type="radio"
                          name="decision"
                          value={d}
                          checked={form.values.decision === d}
                          onChange={() => form.update({ decision: d })}
                        />
                        {d === "accept" ? "Accept" : "Reject"} <kbd>{d === "accept" ? "A" : "R"}</kbd>
                      </label>
                    ))}
                  </div>
                  {form.errors.decision ? <p className="field-error">{form.errors.decision}</p> : null}
                </fieldset>
                {form.values.decision === "reject" ? (
                  <>
                    <label htmlFor="reason">Reason for rejecting (required)</label>
                    <textarea
                      id="reason"
                      value={form.values.reason}
                      maxLength={5000}
                      onChange={(e) => form.update({ reason: e.target.value })}
                    />
                    {form.errors.reason ? <p className="field-error">{form.errors.reason}</p> : null}
                  </>
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
                  <div className="scale-group" role="radiogroup" aria-label={REVIEW_DIMENSION_LABELS[d]}>
                    {REVIEW_SCALE.map((v) => (
                      <label key={v} className={form.values[d] === v ? "chosen" : ""}>
                        <input
                          type="radio"
                          name={d}
                          value={v}
                          checked={form.values[d] === v}
                          onChange={() => {
                            form.update({ [d]: v } as Partial<ReviewValues>);
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
                  {form.errors[d] ? <p className="field-error">{form.errors[d]}</p> : null}
                </fieldset>
              ))
            )}
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
              {isSeed ? (
                <>
                  <dt>
                    <kbd>A</kbd> / <kbd>R</kbd>
                  </dt>
                  <dd>accept / reject (then type the reason)</dd>
                </>
              ) : (
                <>
                  <dt>
                    <kbd>1</kbd>–<kbd>5</kbd>
                  </dt>
                  <dd>score the highlighted dimension, then move to the next</dd>
                </>
              )}
              <dt>
                <kbd>C</kbd>
              </dt>
              <dd>comment</dd>
              <dt>
                <kbd>Ctrl</kbd>+<kbd>Enter</kbd>
              </dt>
              <dd>submit and go to the next item</dd>
              <dt>
                <kbd>N</kbd>
              </dt>
              <dd>next item</dd>
            </dl>
          </details>
        </aside>
      </div>
    </section>
  );
}
