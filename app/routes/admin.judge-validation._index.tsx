import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { JudgeImportIssues, ResponsesUploadFields } from "~/judge-validation/ui/judge-admin";
import { getDb } from "~/platform/db.server";
import { requireForm, requireRole } from "~/accounts/guard.server";
import { Csrf } from "~/ui/root-data";
import { importResponsesFromForm } from "~/judge-validation/judge-forms.server";
import { judgeSetsWindow, type JudgeSetSummary } from "~/judge-validation/judge-sets.server";
import { columnHelper } from "~/ui/data-table";
import { WindowTable } from "~/ui/window-table";

export const meta: MetaFunction = () => [{ title: "Judge validation · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  // One window of the sets, as the URL asks (docs/architecture.md, "Pages are windows").
  return { sets: judgeSetsWindow(getDb(), new URL(request.url).searchParams) };
}

export async function action({ request }: ActionFunctionArgs) {
  const me = await requireRole(request, "admin");
  const form = await requireForm(request, me);
  return importResponsesFromForm(getDb(), form, { actorId: me.id });
}

const col = columnHelper<JudgeSetSummary>();
const columns = [
  col.accessor("name", {
    id: "name",
    header: "Set",
    cell: (info) => <Link to={`/admin/judge-validation/${info.row.original.id}`}>{info.getValue()}</Link>,
  }),
  col.accessor("status", {
    header: "Status",
    cell: ({ getValue }) => <span className={`badge ${getValue()}`}>{getValue()}</span>,
  }),
  col.accessor("responses", { header: "Responses" }),
  col.accessor("items", { header: "Sampled" }),
  col.accessor((s) => `${s.ratingsSubmitted} / ${s.ratingsAssigned}`, { id: "ratings", header: "Ratings submitted" }),
  col.accessor("judges", { header: "Judges" }),
];

export default function JudgeSets() {
  const { sets } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const busy = useNavigation().state !== "idle";
  return (
    <section>
      <h1>Judge validation</h1>
      <p className="muted">
        Validate the judge that turns a model's free-text answer into an action (docs/judge-validation.md): import model
        responses, draw the reference's bucket sample, have three raters label each sampled response blinded, import
        candidate judges' outputs and compare them with the raters' majority.
      </p>
      {sets.total === 0 && sets.query.filters.q === "" ? (
        <p className="card">No validation sets yet. Import model responses below to create one.</p>
      ) : (
        <WindowTable
          window={sets}
          columns={columns}
          sortable={["name"]}
          noun="sets"
          testId="judge-sets"
          filterLabel="Set name starts with"
          rowProps={(s) => ({ "data-set": s.name })}
        />
      )}
      <h2>Import model responses</h2>
      <Form method="post" encType="multipart/form-data" className="card">
        <Csrf />
        <label htmlFor="set">Validation set (new or existing)</label>
        <input id="set" name="set" type="text" list="judge-sets" required />
        <datalist id="judge-sets">
          {sets.rows.map((s) => (
            <option key={s.id} value={s.name} />
          ))}
        </datalist>
        <small className="muted">Raters see the set's name: do not put the model or strategy in it.</small>
        <ResponsesUploadFields />
        <p>
          <button type="submit" name="intent" value="import" disabled={busy}>
            Import
          </button>
        </p>
      </Form>
      {result?.ok ? (
        <p className="notice ok" role="status" data-testid="import-done">
          Imported {result.written} responses.{" "}
          <Link to={`/admin/judge-validation/${result.setId}`}>Open the set to draw its sample</Link>
        </p>
      ) : null}
      {result ? <JudgeImportIssues result={result} /> : null}
    </section>
  );
}
