import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { getDb } from "~/platform/db.server";
import { requireRole } from "~/accounts/guard.server";
import { listStudies } from "~/annotation/studies.server";
import { Time } from "~/ui/time";

export const meta: MetaFunction = () => [{ title: "Studies · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  return { studies: listStudies(getDb()) };
}

export default function AdminIndex() {
  const { studies } = useLoaderData<typeof loader>();
  return (
    <section>
      <div className="row">
        <h1>Studies</h1>
        <span className="spacer" />
        <Link to="/admin/import" className="button">
          Import notes
        </Link>
      </div>
      {studies.length === 0 ? (
        <p className="card">No studies yet. Import a CSV or JSONL file of notes to create one.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Study</th>
              <th className="num">Cases</th>
              <th>Adjudication</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            {studies.map((s) => (
              <tr key={s.id}>
                <td>
                  <Link to={`/admin/studies/${s.id}`}>{s.name}</Link>
                </td>
                <td className="num">{s.numCases}</td>
                <td>{s.adjudicationMode.replace("_", " ")}</td>
                <td>
                  <Time at={s.createdAt} style="date" />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
