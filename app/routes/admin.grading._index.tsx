import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { getDb } from "~/platform/db.server";
import { requireRole } from "~/accounts/guard.server";
import { gradingSetsWindow, type GradingSetRow } from "~/rubric-grading/sets.server";
import { columnHelper } from "~/ui/data-table";
import { WindowTable } from "~/ui/window-table";

export const meta: MetaFunction = () => [{ title: "Rubric grading · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  // One window of the sets, as the URL asks (docs/architecture.md, "Pages are windows").
  return { sets: gradingSetsWindow(getDb(), new URL(request.url).searchParams) };
}

const col = columnHelper<GradingSetRow>();
const columns = [
  col.accessor("name", {
    id: "name",
    header: "Set",
    cell: (info) => <Link to={`/admin/grading/${info.row.original.id}`}>{info.getValue()}</Link>,
  }),
  col.accessor("conversations", { header: "Conversations" }),
  col.accessor((s) => s.subsets.join(", ") || "—", { id: "subsets", header: "Subsets" }),
];

export default function GradingSets() {
  const { sets } = useLoaderData<typeof loader>();
  return (
    <section>
      <h1>Rubric grading</h1>
      <p className="muted">
        Candidate models answer each conversation of an evaluation set; a panel of judges grades every rubric criterion
        with HealthBench's grader. Sets, responses and verdicts come from the grade-* commands (docs/rubric-grading.md).
      </p>
      {sets.total === 0 && sets.query.filters.q === "" ? (
        <p className="card">
          No evaluation sets yet. Import one with `npm run concord -- grade-import --set NAME FILE`.
        </p>
      ) : (
        <WindowTable
          window={sets}
          columns={columns}
          sortable={["name"]}
          noun="sets"
          testId="grading-sets"
          filterLabel="Set name starts with"
          rowProps={(s) => ({ "data-set": s.name })}
        />
      )}
    </section>
  );
}
