import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, useLoaderData } from "@remix-run/react";
import { invariantFound, requireById, requireRole } from "~/accounts/guard.server";
import { caseView } from "~/evaluation/evaluation-pages.server";
import { FAILURE_LABELS, MAX_SIDE_BY_SIDE } from "~/evaluation/domain/failures";
import { getEvaluation } from "~/evaluation/evaluations.server";
import { getDb } from "~/platform/db.server";
import { maxOf } from "~/stats/extremes";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `${data?.view.sampleId ?? "Case"} · ${data?.evaluation.name ?? ""} · Concord` },
];

export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  const evaluation = requireById(params.evaluationId, (id) => getEvaluation(db, id), "No such evaluation.");
  const url = new URL(request.url);
  const trajectories = url.searchParams
    .getAll("t")
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0)
    .slice(0, MAX_SIDE_BY_SIDE);
  const view = invariantFound(
    caseView(db, evaluation.id, params.sampleId ?? "", {
      strategy: url.searchParams.get("strategy") ?? undefined,
      trajectories,
    }),
    "No such case in this evaluation.",
  );
  return { evaluation, view, labels: FAILURE_LABELS, max: MAX_SIDE_BY_SIDE };
}

export default function EvaluationCase() {
  const { evaluation, view, labels, max } = useLoaderData<typeof loader>();
  const base = `/admin/evaluations/${evaluation.id}`;
  const shownIds = new Set(view.shown.map((t) => t.id));
  const steps = maxOf([view.gold.sections, ...view.shown.map((t) => maxOf([0, ...t.steps.map((s) => s.stepIndex)]))]);
  return (
    <section className="eval-case">
      <p>
        <Link to="/admin/evaluations">Evaluations</Link> › <Link to={base}>{evaluation.name}</Link> ›{" "}
        <Link to={`${base}/cases`}>Cases</Link> ›
      </p>
      <h1>Case {view.sampleId}</h1>
      <p data-testid="gold">
        Gold: <strong>{view.gold.sufficient ? "sufficient" : "insufficient"}</strong>
        {view.gold.sufficient && (
          <>
            {" "}
            from section <strong>{view.gold.tau ?? "—"}</strong>, diagnosis{" "}
            <strong>{view.gold.diagnosis ?? "—"}</strong>
          </>
        )}
        ; {view.gold.sections} sections.
      </p>
      <Form method="get" className="row card" data-testid="case-runs">
        <label>
          Strategy{" "}
          <select name="strategy" defaultValue={view.strategy}>
            {view.strategies.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <fieldset className="row">
          <legend>Runs side by side (at most {max})</legend>
          {view.available.map((a) => (
            <label key={a.id}>
              <input type="checkbox" name="t" value={a.id} defaultChecked={shownIds.has(a.id)} /> {a.model} · seed{" "}
              {a.seed ?? "—"} <small className="muted">({a.outcome})</small>
            </label>
          ))}
        </fieldset>
        <button type="submit" className="secondary">
          Show
        </button>
      </Form>
      <div className="table-scroll">
        <table className="case-steps" data-testid="case-steps">
          <thead>
            <tr>
              <th>Step</th>
              <th>Section revealed</th>
              <th>Expert action</th>
              {view.shown.map((t) => (
                <th key={t.id} data-trajectory={t.id}>
                  {t.model} · seed {t.seed ?? "—"}
                  <br />
                  <small>
                    {t.outcome}
                    {t.flags.length > 0 && ` — ${t.flags.map((f) => labels[f]).join(", ")}`}
                    {t.excluded && ` — left out of the metrics (${t.excluded.replace("_", " ")})`}
                  </small>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {Array.from({ length: steps }, (_, i) => i + 1).map((n) => {
              const section = view.sections?.[n - 1];
              return (
                <tr key={n} data-step={n}>
                  <th scope="row">{n}</th>
                  <td className="note-section">
                    {section ? (
                      <>
                        <strong>{section.title}</strong>
                        <div className="pre">{section.content}</div>
                      </>
                    ) : (
                      <span className="muted">
                        {view.sections === null ? "(the note is in the model's prompt)" : "—"}
                      </span>
                    )}
                  </td>
                  <td data-testid="expert-action">{view.expertActions[n - 1] ?? "—"}</td>
                  {view.shown.map((t) => {
                    const s = t.steps.find((x) => x.stepIndex === n);
                    if (!s)
                      return (
                        <td key={t.id} className="muted">
                          —
                        </td>
                      );
                    const disagrees =
                      s.action !== "" && view.expertActions[n - 1] && s.action !== view.expertActions[n - 1];
                    return (
                      <td key={t.id} data-action={s.action}>
                        <p>
                          <strong className={disagrees ? "bad" : undefined}>{s.action || "(no action)"}</strong>
                          {s.icdCodes.length > 0 && <> · {s.icdCodes.join(", ")}</>}
                        </p>
                        <div className="pre">{s.answer || <em>(empty answer)</em>}</div>
                        <dl className="judge">
                          <dt>Primary answer</dt>
                          <dd>{s.primaryAnswer ?? "—"}</dd>
                          <dt>Info request</dt>
                          <dd>{s.infoRequest ?? "—"}</dd>
                          <dt>Diagnosis names</dt>
                          <dd>{s.diagnosisNames.join(", ") || "—"}</dd>
                        </dl>
                        <details>
                          <summary>Prompt and judge output</summary>
                          <div className="pre">{s.prompt}</div>
                          <div className="pre">{s.judgeOutput}</div>
                        </details>
                      </td>
                    );
                  })}
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}
