import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, useLoaderData } from "@remix-run/react";
import { getDb } from "~/platform/db.server";
import { requireById, requireRole } from "~/accounts/guard.server";
import { getGradingSet, getSetResults, ResultsQuerySchema } from "~/rubric-grading/results.server";
import { JudgeAgreement, PairedComparisons, TableOne } from "~/rubric-grading/ui/table-one";

export const meta: MetaFunction = () => [{ title: "Rubric grading results · Concord" }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  const set = requireById(params.setId, (id) => getGradingSet(db, id), "No such evaluation set.");
  const url = new URL(request.url);
  const query = ResultsQuerySchema.parse({
    policy: url.searchParams.get("policy") ?? undefined,
    subset: url.searchParams.get("subset") ?? undefined,
  });
  return getSetResults(db, set, query);
}

const DOWNLOADS = [
  "table1.csv",
  "table1-refusals-excluded.csv",
  "tags.csv",
  "themes.csv",
  "judge-agreement.csv",
  "paired.csv",
  "ranking.svg",
  "ranking.png",
  "report.json",
  "manifest.json",
];

export default function GradingResults() {
  const r = useLoaderData<typeof loader>();
  const q = r.subset ? `?subset=${encodeURIComponent(r.subset)}` : "";
  return (
    <section>
      <p>
        <Link to="/admin/grading">Rubric grading</Link> / {r.set.name}
      </p>
      <h1>{r.set.name}</h1>
      <p className="muted">Content sha256 {r.set.contentSha256}</p>
      <Form method="get" className="card">
        <label htmlFor="subset">Conversations</label>
        <select id="subset" name="subset" defaultValue={r.subset ?? ""}>
          <option value="">the whole set</option>
          {r.subsets.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
        <label htmlFor="policy">Refusals</label>
        <select id="policy" name="policy" defaultValue={r.policy}>
          <option value="as_returned">graded as returned</option>
          <option value="exclude_refusals">excluded</option>
        </select>
        <button type="submit">Show</button>
      </Form>
      <h2>Judges</h2>
      <table>
        <thead>
          <tr>
            <th>Judge</th>
            <th>Model</th>
            <th className="num">Temperature</th>
            <th className="num">Verdicts</th>
          </tr>
        </thead>
        <tbody>
          {r.judges.map((j) => (
            <tr key={j.name}>
              <td>{j.name}</td>
              <td>{j.model}</td>
              <td className="num">{j.temperature ?? "default"}</td>
              <td className="num">
                {j.total - j.pending} / {j.total}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Table 1</h2>
      <TableOne evaluation={r.evaluation} judges={r.judgeNames} />
      <img src={`/admin/grading/${r.set.id}/files/ranking.svg${q}`} alt="Panel ranking with 95% confidence intervals" />
      <h2>Paired comparisons</h2>
      <PairedComparisons evaluation={r.evaluation} />
      <JudgeAgreement evaluation={r.evaluation} />
      <h2>Downloads</h2>
      <ul>
        {DOWNLOADS.map((f) => (
          <li key={f}>
            <a href={`/admin/grading/${r.set.id}/files/${f}${q}`}>{f}</a>
          </li>
        ))}
      </ul>
    </section>
  );
}
