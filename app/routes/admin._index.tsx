import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { getDb } from "~/platform/db.server";
import { requireRole } from "~/accounts/guard.server";
import { studiesWindow, type StudySummary } from "~/annotation/studies.server";
import { columnHelper } from "~/ui/data-table";
import { WindowTable } from "~/ui/window-table";
import { Time } from "~/ui/time";

export const meta: MetaFunction = () => [{ title: "Studies · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  // One window of the studies, as the URL asks (docs/architecture.md, "Pages are windows").
  return { studies: studiesWindow(getDb(), new URL(request.url).searchParams) };
}

const col = columnHelper<StudySummary>();
const columns = [
  col.accessor("name", {
    id: "name",
    header: "Study",
    cell: (info) => <Link to={`/admin/studies/${info.row.original.id}`}>{info.getValue()}</Link>,
  }),
  col.accessor("numCases", { header: "Cases" }),
  col.accessor((s) => s.adjudicationMode.replace("_", " "), { id: "adjudication", header: "Adjudication" }),
  col.accessor("createdAt", {
    id: "created",
    header: "Created",
    cell: ({ getValue }) => <Time at={getValue()} style="date" />,
  }),
];

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
      {studies.total === 0 && studies.query.filters.q === "" ? (
        <p className="card">No studies yet. Import a CSV or JSONL file of notes to create one.</p>
      ) : (
        <WindowTable
          window={studies}
          columns={columns}
          sortable={["name"]}
          noun="studies"
          testId="studies"
          filterLabel="Study name starts with"
          rowProps={(s) => ({ "data-study": s.name })}
        />
      )}
    </section>
  );
}
