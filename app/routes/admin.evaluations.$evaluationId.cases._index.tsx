import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { useMemo } from "react";
import { requireById, requireRole } from "~/accounts/guard.server";
import { casesWindow, runChoices, type TrajectoryRow } from "~/evaluation/evaluation-pages.server";
import { FAILURE_FILTERS, FAILURE_LABELS } from "~/evaluation/domain/failures";
import { getEvaluation } from "~/evaluation/evaluations.server";
import { getDb } from "~/platform/db.server";
import { columnHelper } from "~/ui/data-table";
import { WindowTable } from "~/ui/window-table";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `Cases · ${data?.evaluation.name ?? ""} · Evaluations · Concord` },
];

export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  const evaluation = requireById(params.evaluationId, (id) => getEvaluation(db, id), "No such evaluation.");
  const url = new URL(request.url);
  return {
    evaluation,
    choices: runChoices(db, evaluation.id),
    cases: casesWindow(db, evaluation.id, url.searchParams),
    labels: FAILURE_LABELS,
  };
}

const col = columnHelper<TrajectoryRow>();

export default function EvaluationCases() {
  const { evaluation, choices, cases, labels } = useLoaderData<typeof loader>();
  const base = `/admin/evaluations/${evaluation.id}`;
  const columns = useMemo(
    () => [
      col.accessor("sampleId", {
        id: "case",
        header: "Case",
        cell: (i) => (
          <Link to={`${base}/cases/${encodeURIComponent(i.getValue())}?t=${i.row.original.id}`}>{i.getValue()}</Link>
        ),
      }),
      col.accessor("model", { header: "Model" }),
      col.accessor("strategy", { header: "Strategy" }),
      col.accessor("seed", { header: "Seed", cell: (i) => i.getValue() ?? "—" }),
      col.accessor("outcome", { header: "Outcome" }),
      col.accessor("firstDiagnosis", { header: "First diagnosis at", cell: (i) => i.getValue() ?? "—" }),
      col.display({
        id: "failures",
        header: "Failures",
        cell: (i) => {
          const r = i.row.original;
          const f = [
            r.prematureDiagnosis ? labels.premature_diagnosis : null,
            r.prematureAbstention ? labels.premature_abstention : null,
            r.overAbstention ? labels.over_abstention : null,
            r.wrongCode ? labels.wrong_code : null,
            r.seedDisagreement ? labels.seed_disagreement : null,
            r.excluded ? `left out (${r.excluded.replace("_", " ")})` : null,
          ].filter(Boolean);
          return f.join(", ") || "—";
        },
      }),
    ],
    [base, labels],
  );
  const f = cases.query.filters;
  return (
    <section>
      <p>
        <Link to="/admin/evaluations">Evaluations</Link> › <Link to={base}>{evaluation.name}</Link> ›
      </p>
      <h1>Cases and failures</h1>
      <p className="muted">
        Every trajectory of the evaluation by case. Premature diagnosis: a diagnosis at a section where the experts
        would still clarify; premature abstention: abstaining before the last section; over-abstention: no diagnosis of
        a sufficient case; wrong code: the first diagnosis does not match the gold code at diagnosis level; disagreement
        between seeds: another seed of the same model and strategy ended the case differently.
      </p>
      <p>
        <Link
          to={`${base}/reviews?${new URLSearchParams(
            Object.entries({ c_failure: f.failure, c_model: f.model, c_strategy: f.strategy, c_q: f.q }).filter(
              ([, v]) => v,
            ),
          ).toString()}`}
          data-testid="send-to-review"
        >
          Send the steps of this filter to clinician review ›
        </Link>
      </p>
      <WindowTable
        window={cases}
        columns={columns}
        sortable={["case"]}
        filterLabel="Case id starts with"
        noun="trajectories"
        testId="cases"
        rowProps={(r) => ({ "data-case": r.sampleId, "data-model": r.model })}
        filters={
          <>
            <select name="c_failure" aria-label="Failure" defaultValue={f.failure}>
              <option value="">Every trajectory</option>
              {FAILURE_FILTERS.map((x) => (
                <option key={x} value={x}>
                  {labels[x]}
                </option>
              ))}
            </select>
            <select name="c_model" aria-label="Model" defaultValue={f.model}>
              <option value="">Every model</option>
              {choices.models.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
            <select name="c_strategy" aria-label="Strategy" defaultValue={f.strategy}>
              <option value="">Every strategy</option>
              {choices.strategies.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </>
        }
      />
    </section>
  );
}
