import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Form, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { z } from "zod";
import { Csrf } from "~/root";
import { MAX_FILE_BYTES } from "~/annotation/domain/case-import";
import { getDb } from "~/platform/db.server";
import { parseColumnMap } from "~/platform/forms";
import { parseIntent } from "~/platform/intent";
import { requireForm, requireRole } from "~/accounts/guard.server";
import { isDemoDatabase } from "~/demo/demo.server";
import { confirmPendingImport, discardPendingImport, stagePendingImport } from "~/platform/pending-imports.server";
import { listStudies, StudyNameSchema, type ImportPlan } from "~/annotation/studies.server";
import { ServiceError } from "~/accounts/users.server";

export const meta: MetaFunction = () => [{ title: "Import notes · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const url = new URL(request.url);
  return {
    studies: listStudies(getDb()).map((s) => s.name),
    study: url.searchParams.get("study") ?? "",
    demo: isDemoDatabase(getDb()),
  };
}

const MISSING_PREVIEW = "The preview to confirm is missing. Upload the file again.";

const ActionSchema = z.discriminatedUnion("intent", [
  z.object({
    intent: z.literal("preview"),
    study: z.preprocess((v) => v ?? "", StudyNameSchema),
    format: z.preprocess((v) => (v === "" ? undefined : v), z.enum(["auto", "csv", "jsonl"]).default("auto")),
    columnMap: z.string().max(2000).default(""),
  }),
  z.object({
    intent: z.literal(["confirm", "discard"]),
    pendingId: z.string({ message: MISSING_PREVIEW }).min(1, MISSING_PREVIEW),
  }),
]);

type ActionResult =
  | { step: "preview"; plan: ImportPlan | null; pendingId: string | null; error: string | null }
  | { step: "error"; error: string };

export async function action({ request }: ActionFunctionArgs): Promise<ActionResult | Response> {
  const me = await requireRole(request, "admin");
  const length = Number(request.headers.get("content-length") ?? 0);
  if (length > MAX_FILE_BYTES + 1_000_000)
    return { step: "error", error: `The upload is larger than ${MAX_FILE_BYTES / 1024 / 1024} MB. Split the file.` };
  const form = await requireForm(request, me);
  const db = getDb();
  const parsed = parseIntent(form, ActionSchema);
  if (!parsed.ok) return { step: "error", error: parsed.message };
  const a = parsed.data;
  if (a.intent !== "preview") {
    if (a.intent === "discard") {
      discardPendingImport(db, { id: a.pendingId, userId: me.id });
      return redirect("/admin/import");
    }
    try {
      const { plan, studyId } = confirmPendingImport(db, { id: a.pendingId, userId: me.id });
      if (!plan.ok) return { step: "preview", plan, pendingId: null, error: "The file no longer validates: nothing was imported." };
      return redirect(`/admin/studies/${studyId}?created=${plan.create}&updated=${plan.update}&unchanged=${plan.unchanged}`);
    } catch (e) {
      if (e instanceof ServiceError) return { step: "error", error: e.message };
      throw e;
    }
  }
  const file = form.get("file");
  if (!(file instanceof File) || file.size === 0) return { step: "error", error: "Choose a CSV or JSONL file to import." };
  const columnMap = parseColumnMap(a.columnMap);
  if (columnMap === null)
    return { step: "error", error: 'Column names must be written as "canonical=your column", separated by commas, e.g. "id=case_id, presenting_symptoms=Symptoms".' };
  const bytes = new Uint8Array(await file.arrayBuffer());
  const staged = stagePendingImport(db, {
    userId: me.id,
    studyName: a.study,
    filename: file.name,
    bytes,
    format: a.format === "auto" ? undefined : a.format,
    columnMap,
  });
  return { step: "preview", plan: staged.plan, pendingId: staged.pendingId, error: null };
}

function Issues({ title, items, kind }: { title: string; items: { line: number; message: string }[]; kind: "bad" | "warn" }) {
  if (!items.length) return null;
  return (
    <div className={`notice ${kind}`} data-testid={`import-${kind === "bad" ? "errors" : "warnings"}`}>
      <strong>
        {title} ({items.length})
      </strong>
      <ul className="issues">
        {items.map((i, n) => (
          <li key={n}>{i.line > 0 ? `line ${i.line}: ${i.message}` : i.message}</li>
        ))}
      </ul>
    </div>
  );
}

export default function ImportPage() {
  const { studies, study, demo } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const busy = useNavigation().state !== "idle";
  const plan = result && result.step === "preview" ? result.plan : null;
  return (
    <section>
      <h1>Import notes</h1>
      {demo ? (
        <p className="notice warn" role="alert">
          This is a demo database: its accounts have a published password. Import only fictional notes here; run a real study
          on its own database (see the README, “Deploying for a real study”).
        </p>
      ) : null}
      <p className="muted">
        CSV (one row per case: <code>id</code>, the section columns <code>presenting_symptoms</code>,{" "}
        <code>psychiatric_history</code>, <code>psychiatric_exam</code>, <code>psychological_exam</code>,{" "}
        <code>secondary_diagnoses</code>, optional <code>age_group</code>, <code>sex</code> and the Safe-Psych label columns) or JSONL.
        The whole file is checked first; nothing is written until you confirm, and a file with errors writes nothing.
      </p>
      <Form method="post" encType="multipart/form-data" className="card">
        <Csrf />
        <div className="grid2">
          <div>
            <label htmlFor="study">Study (new or existing)</label>
            <input id="study" name="study" type="text" list="studies" defaultValue={study} required />
            <datalist id="studies">
              {studies.map((s) => (
                <option key={s} value={s} />
              ))}
            </datalist>
            <label htmlFor="file">File</label>
            <input id="file" name="file" type="file" accept=".csv,.jsonl,.ndjson,text/csv" required />
          </div>
          <div>
            <label htmlFor="format">Format</label>
            <select id="format" name="format" defaultValue="auto">
              <option value="auto">From the file name (.csv, .jsonl)</option>
              <option value="csv">CSV</option>
              <option value="jsonl">JSONL</option>
            </select>
            <label htmlFor="columnMap">Column names, if yours differ (optional)</label>
            <input id="columnMap" name="columnMap" type="text" placeholder="id=case_id, presenting_symptoms=Symptoms" style={{ width: "100%" }} />
          </div>
        </div>
        <p>
          <button type="submit" name="intent" value="preview" disabled={busy}>
            Check file
          </button>
        </p>
      </Form>

      {result?.error ? (
        <p className="notice bad" role="alert">
          {result.error}
        </p>
      ) : null}
      {plan ? (
        <div className="card" data-testid="import-preview">
          <h2>
            {plan.ok ? "Ready to import" : "The file cannot be imported"} into “{plan.studyName}”
            {plan.studyExists ? "" : " (new study)"}
          </h2>
          <Issues title="Errors — fix these and upload again; nothing was written" items={[...plan.parse.errors, ...plan.conflicts]} kind="bad" />
          <Issues title="Warnings" items={plan.parse.warnings} kind="warn" />
          {plan.ok ? (
            <>
              <dl className="kv">
                <dt>Cases in file</dt>
                <dd>{plan.total}</dd>
                <dt>New</dt>
                <dd>{plan.create}</dd>
                <dt>Changed (not yet annotated)</dt>
                <dd>{plan.update}</dd>
                <dt>Unchanged</dt>
                <dd>{plan.unchanged}</dd>
                <dt>Reference labels</dt>
                <dd>{plan.parse.hasReferenceLabels ? "yes — kept apart, never shown to annotators or adjudicators" : "none"}</dd>
              </dl>
              {plan.create + plan.update + plan.labelChanges === 0 ? (
                <p className="notice ok">Nothing to change: every case in this file is already imported as it is.</p>
              ) : result && result.step === "preview" && result.pendingId ? (
                <Form method="post" className="row">
                  <Csrf />
                  <input type="hidden" name="pendingId" value={result.pendingId} />
                  <button type="submit" name="intent" value="confirm" disabled={busy}>
                    Import {plan.create + plan.update} case{plan.create + plan.update === 1 ? "" : "s"}
                  </button>
                  <button type="submit" name="intent" value="discard" className="secondary" disabled={busy}>
                    Cancel
                  </button>
                </Form>
              ) : null}
            </>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
