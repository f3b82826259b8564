import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData, useSearchParams } from "@remix-run/react";
import { useMemo } from "react";
import { z } from "zod";
import { columnHelper, DataTable } from "~/components/data-table";
import { getDb } from "~/lib/db.server";
import { invariantFound, requireRole } from "~/lib/guard.server";
import { getStudy, listStudyCases, type CaseRow } from "~/services/studies.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.study.name ?? "Study"} · Concord` }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const id = z.coerce.number().int().positive().safeParse(params.studyId);
  const db = getDb();
  const study = invariantFound(id.success ? getStudy(db, id.data) : null, "No such study.");
  return { study, cases: listStudyCases(db, study.id) };
}

const col = columnHelper<CaseRow>();

export default function StudyPage() {
  const { study, cases } = useLoaderData<typeof loader>();
  const [params] = useSearchParams();
  const columns = useMemo(
    () => [
      col.accessor("position", { header: "#" }),
      col.accessor("externalId", {
        header: "Case id",
        cell: (info) => <Link to={`/admin/cases/${info.row.original.id}`}>{info.getValue()}</Link>,
      }),
      col.accessor("numSections", { header: "Sections" }),
      col.accessor("ageGroup", { header: "Age group" }),
      col.accessor("sex", { header: "Sex" }),
      col.accessor((r) => (r.hasReferenceLabels ? "yes" : ""), { id: "reference", header: "Reference labels" }),
      col.accessor("version", { header: "Version" }),
    ],
    [],
  );
  const imported = params.get("created");
  return (
    <section>
      <p>
        <Link to="/admin">Studies</Link> ›
      </p>
      <div className="row">
        <h1>{study.name}</h1>
        <span className="spacer" />
        <Link to={`/admin/import?study=${encodeURIComponent(study.name)}`} className="button secondary">
          Import more notes
        </Link>
      </div>
      {imported !== null ? (
        <p className="notice ok" role="status">
          Imported: {imported} new, {params.get("updated")} changed, {params.get("unchanged")} unchanged.
        </p>
      ) : null}
      <h2>Cases ({cases.length})</h2>
      <DataTable data={cases} columns={columns} filterLabel="Filter cases" rowProps={(r) => ({ "data-case": r.externalId })} />
    </section>
  );
}
