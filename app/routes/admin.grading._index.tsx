import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { getDb } from "~/platform/db.server";
import { requireRole } from "~/accounts/guard.server";
import { listGradingSets } from "~/rubric-grading/results.server";

export const meta: MetaFunction = () => [{ title: "Rubric grading · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  return {
    sets: listGradingSets(getDb()).map((s) => ({
      id: s.id,
      name: s.name,
      conversations: s.conversations,
      subsets: s.subsets.map((x) => x.name),
    })),
  };
}

export default function GradingSets() {
  const { sets } = useLoaderData<typeof loader>();
  return (
    <section>
      <h1>Rubric grading</h1>
      <p className="muted">
        Candidate models answer each conversation of an evaluation set; a panel of judges grades every rubric criterion
        with HealthBench's grader. Sets come from the grade-import command; responses and verdicts from the grade-*
        commands or a grading run started on <Link to="/admin/eval-jobs">Evaluation jobs</Link>
        (docs/rubric-grading.md).
      </p>
      {sets.length === 0 ? (
        <p className="card">
          No evaluation sets yet. Import one with `npm run concord -- grade-import --set NAME FILE`.
        </p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Set</th>
              <th className="num">Conversations</th>
              <th>Subsets</th>
            </tr>
          </thead>
          <tbody>
            {sets.map((s) => (
              <tr key={s.id} data-set={s.name}>
                <td>
                  <Link to={`/admin/grading/${s.id}`}>{s.name}</Link>
                </td>
                <td className="num">{s.conversations}</td>
                <td>{s.subsets.join(", ") || "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
