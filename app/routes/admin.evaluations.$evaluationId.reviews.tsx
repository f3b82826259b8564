import type { ActionFunctionArgs, LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { z } from "zod";
import { requireById, requireForm, requireRole } from "~/accounts/guard.server";
import { runChoices } from "~/evaluation/evaluation-pages.server";
import { getEvaluation } from "~/evaluation/evaluations.server";
import { FAILURE_FILTERS, FAILURE_LABELS } from "~/evaluation/domain/failures";
import { MAX_REVIEW_ITEMS } from "~/evaluation/domain/model-review";
import {
  changeReviewers,
  countPicked,
  listReviews,
  reviewerChoices,
  sendReview,
} from "~/evaluation/model-review.server";
import { AgreementLine, DefensibleTable } from "~/evaluation/ui/review-figures";
import { getDb } from "~/platform/db.server";
import { ServiceError } from "~/platform/service-error";
import { Csrf } from "~/ui/root-data";
import { Time } from "~/ui/time";
import styles from "~/evaluation/ui/model-review.css?url";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `Clinician review · ${data?.evaluation.name ?? ""} · Evaluations · Concord` },
];
export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];

/** The filter as the case list names it in its address (`c_failure`, …), or as the form posts it. */
function filterOf(get: (name: string) => string | null) {
  const pick = (n: string) => (get(`c_${n}`) ?? "").slice(0, 200);
  return { failure: pick("failure"), model: pick("model"), strategy: pick("strategy"), q: pick("q") };
}

export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  const evaluation = requireById(params.evaluationId, (id) => getEvaluation(db, id), "No such evaluation.");
  const url = new URL(request.url);
  const filter = filterOf((n) => url.searchParams.get(n));
  return {
    evaluation,
    filter,
    matched: countPicked(db, evaluation.id, filter),
    choices: runChoices(db, evaluation.id),
    reviewers: reviewerChoices(db),
    reviews: listReviews(db, evaluation.id),
    labels: FAILURE_LABELS,
    max: MAX_REVIEW_ITEMS,
  };
}

const SendSchema = z.object({
  name: z.string().max(200),
  perItem: z.enum(["1", "2"]),
  limit: z
    .string()
    .regex(/^\d{0,6}$/, "The number of steps to send is a whole number.")
    .transform((s) => (s === "" ? null : Number(s))),
});

export async function action({ request, params }: ActionFunctionArgs) {
  const user = await requireRole(request, "admin");
  const db = getDb();
  const evaluation = requireById(params.evaluationId, (id) => getEvaluation(db, id), "No such evaluation.");
  const form = await requireForm(request, user);
  const names = (field: string) => form.getAll(field).filter((v): v is string => typeof v === "string");
  if (form.get("intent") === "reviewers") {
    // Changing a sent review's reviewers (docs/evaluation.md, "Changing the reviewers").
    const review = String(form.get("review") ?? "");
    try {
      const changed = changeReviewers(db, {
        evaluationId: evaluation.id,
        name: review,
        add: names("add"),
        remove: names("remove"),
        actorId: user.id,
      });
      return { changed: { ...changed, review } };
    } catch (e) {
      if (e instanceof ServiceError) return { error: e.message, field: e.field ?? null, review };
      throw e;
    }
  }
  const parsed = SendSchema.safeParse({
    name: form.get("name") ?? "",
    perItem: form.get("perItem") ?? "1",
    limit: form.get("limit") ?? "",
  });
  if (!parsed.success) return { error: parsed.error.issues[0]!.message, field: "limit" };
  try {
    const sent = sendReview(db, {
      evaluationId: evaluation.id,
      name: parsed.data.name,
      filter: filterOf((n) => {
        const v = form.get(n);
        return typeof v === "string" ? v : null;
      }),
      reviewers: form.getAll("reviewers").filter((v): v is string => typeof v === "string"),
      perItem: parsed.data.perItem === "2" ? 2 : 1,
      limit: parsed.data.limit,
      actorId: user.id,
    });
    return { sent: { ...sent, name: parsed.data.name.trim() } };
  } catch (e) {
    if (e instanceof ServiceError) return { error: e.message, field: e.field ?? null };
    throw e;
  }
}

export default function EvaluationReviews() {
  const { evaluation, filter, matched, choices, reviewers, reviews, labels, max } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const busy = useNavigation().state === "submitting";
  const base = `/admin/evaluations/${evaluation.id}`;
  const error = result && "error" in result && !("review" in result) ? result : null;
  const changeError = result && "error" in result && "review" in result ? result : null;
  const changed = result && "changed" in result ? result.changed : undefined;
  return (
    <section>
      <p>
        <Link to="/admin/evaluations">Evaluations</Link> › <Link to={base}>{evaluation.name}</Link> ›
      </p>
      <h1>Clinician review of model steps</h1>
      <p className="muted">
        Psychiatrists judge whether a model&apos;s step was clinically defensible, blinded to the model, its strategy
        and seed, and to each other. Each trajectory the filter picks is one step: its first diagnosis, else its last
        step. <Link to={`${base}/files/reviews.csv`}>reviews.csv</Link>
      </p>
      <h2>Send model steps to review</h2>
      <Form method="get" className="row card" data-testid="review-filter">
        <select name="c_failure" aria-label="Failure" defaultValue={filter.failure}>
          <option value="">Every trajectory</option>
          {FAILURE_FILTERS.map((x) => (
            <option key={x} value={x}>
              {labels[x]}
            </option>
          ))}
        </select>
        <select name="c_model" aria-label="Model" defaultValue={filter.model}>
          <option value="">Every model</option>
          {choices.models.map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </select>
        <select name="c_strategy" aria-label="Strategy" defaultValue={filter.strategy}>
          <option value="">Every strategy</option>
          {choices.strategies.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
        <input
          type="search"
          name="c_q"
          aria-label="Case id starts with"
          placeholder="Case id starts with"
          defaultValue={filter.q}
        />
        <button type="submit" className="secondary">
          Count
        </button>
      </Form>
      <Form method="post" className="card" data-testid="send-review">
        <Csrf />
        <p data-testid="review-matched">
          This filter picks <strong>{matched}</strong> model step{matched === 1 ? "" : "s"}
          {matched > max ? ` — more than ${max}: give a number to send a random sample` : ""}.
        </p>
        {(["failure", "model", "strategy", "q"] as const).map((k) => (
          <input key={k} type="hidden" name={`c_${k}`} value={filter[k]} />
        ))}
        <label htmlFor="review-name">Name of the review</label>
        <input
          id="review-name"
          size={40}
          type="text"
          name="name"
          required
          maxLength={80}
          aria-invalid={error?.field === "name" || undefined}
        />
        <fieldset>
          <legend>Reviewers (annotators and adjudicators)</legend>
          {reviewers.length === 0 ? (
            <p className="muted">No active user has the annotator or adjudicator role.</p>
          ) : (
            <div className="scale-group">
              {reviewers.map((u) => (
                <label key={u}>
                  <input type="checkbox" name="reviewers" value={u} /> {u}
                </label>
              ))}
            </div>
          )}
        </fieldset>
        <fieldset>
          <legend>Reviewers per step</legend>
          <div className="scale-group">
            <label>
              <input type="radio" name="perItem" value="1" defaultChecked /> One
            </label>
            <label>
              <input type="radio" name="perItem" value="2" /> Two (agreement)
            </label>
          </div>
        </fieldset>
        <label htmlFor="review-limit">Send at most (optional: a random sample)</label>
        <input id="review-limit" type="text" name="limit" inputMode="numeric" pattern="[0-9]*" />
        {error ? (
          <p className="field-error" role="alert" data-testid="send-error">
            {error.error}
          </p>
        ) : null}
        {result && "sent" in result && result.sent ? (
          <p className="notice ok" data-testid="sent">
            Sent {result.sent.items} model step{result.sent.items === 1 ? "" : "s"} to the review “{result.sent.name}”.
          </p>
        ) : null}
        <button type="submit" disabled={busy || matched === 0}>
          Send to review
        </button>
      </Form>
      <h2>Reviews</h2>
      {reviews.length === 0 ? <p className="muted">No review of this evaluation yet.</p> : null}
      {reviews.map((r) => (
        <article key={r.id} className="card" data-testid="review" data-review={r.name}>
          <h3>{r.name}</h3>
          <p className="muted">
            Sent <Time at={r.createdAt} />: {r.items} step{r.items === 1 ? "" : "s"},{" "}
            {r.perItem === 2 ? "two reviewers" : "one reviewer"} each; filter{" "}
            {[
              r.filter.failure
                ? (labels[r.filter.failure as keyof typeof labels] ?? r.filter.failure)
                : "every trajectory",
              r.filter.model,
              r.filter.strategy,
              r.filter.q ? `cases ${r.filter.q}…` : "",
            ]
              .filter(Boolean)
              .join(", ")}
            .
          </p>
          <p data-testid="review-progress">
            {r.reviewers
              .map((p) => `${p.username}${p.active ? "" : " (removed)"}: ${p.submitted} of ${p.total} submitted`)
              .join(" · ")}
          </p>
          <DefensibleTable name={r.name} rows={r.defensible} />
          <AgreementLine agreement={r.agreement} />
          <Form method="post" className="row" data-testid="change-reviewers">
            <Csrf />
            <input type="hidden" name="intent" value="reviewers" />
            <input type="hidden" name="review" value={r.name} />
            <fieldset>
              <legend>Change the reviewers (only steps nobody has started move)</legend>
              {reviewers
                .filter((u) => !r.reviewers.some((p) => p.username === u && p.active))
                .map((u) => (
                  <label key={`add:${u}`}>
                    <input type="checkbox" name="add" value={u} /> Add {u}
                  </label>
                ))}
              {r.reviewers
                .filter((p) => p.active)
                .map((p) => (
                  <label key={`remove:${p.username}`}>
                    <input type="checkbox" name="remove" value={p.username} /> Remove {p.username}
                  </label>
                ))}
            </fieldset>
            <button type="submit" className="secondary" disabled={busy}>
              Change reviewers
            </button>
            {changeError?.review === r.name ? (
              <p className="field-error" role="alert" data-testid="change-error">
                {changeError.error}
              </p>
            ) : null}
            {changed?.review === r.name ? (
              <p className="notice ok" data-testid="changed">
                {changed.moved} step{changed.moved === 1 ? "" : "s"} not yet started shared again; reviewers now{" "}
                {changed.reviewers.join(", ")}.
              </p>
            ) : null}
          </Form>
        </article>
      ))}
    </section>
  );
}
