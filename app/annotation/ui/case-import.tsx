/** The parts of the note import page: the upload form and the preview of what the file would change. */
import { Form } from "@remix-run/react";
import { Csrf } from "~/ui/root-data";
import type { ImportPlan } from "~/annotation/studies.server";

function Issues({
  title,
  items,
  kind,
}: {
  title: string;
  items: { line: number; message: string }[];
  kind: "bad" | "warn";
}) {
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

/** The file, its study and format, and the column names if they differ. */
export function ImportUploadForm({ studies, study, busy }: { studies: string[]; study: string; busy: boolean }) {
  return (
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
          <input
            id="columnMap"
            name="columnMap"
            type="text"
            placeholder="id=case_id, presenting_symptoms=Symptoms"
            style={{ width: "100%" }}
          />
        </div>
      </div>
      <p>
        <button type="submit" name="intent" value="preview" disabled={busy}>
          Check file
        </button>
      </p>
    </Form>
  );
}

/** What the checked file would change, with its problems, and the buttons that confirm or discard it. */
export function ImportPreview({
  plan,
  pendingId,
  busy,
}: {
  plan: ImportPlan;
  pendingId: string | null;
  busy: boolean;
}) {
  return (
    <div className="card" data-testid="import-preview">
      <h2>
        {plan.ok ? "Ready to import" : "The file cannot be imported"} into “{plan.studyName}”
        {plan.studyExists ? "" : " (new study)"}
      </h2>
      <Issues
        title="Errors — fix these and upload again; nothing was written"
        items={[...plan.parse.errors, ...plan.conflicts]}
        kind="bad"
      />
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
            <dd>
              {plan.parse.hasReferenceLabels ? "yes — kept apart, never shown to annotators or adjudicators" : "none"}
            </dd>
          </dl>
          {plan.create + plan.update + plan.labelChanges === 0 ? (
            <p className="notice ok">Nothing to change: every case in this file is already imported as it is.</p>
          ) : pendingId ? (
            <Form method="post" className="row">
              <Csrf />
              <input type="hidden" name="pendingId" value={pendingId} />
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
  );
}
