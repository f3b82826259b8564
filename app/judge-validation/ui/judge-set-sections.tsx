/** The parts of a judge-validation set's admin page, one per step: responses, sample, raters, exports, judges. */
import { Form, Link } from "@remix-run/react";
import { useMemo } from "react";
import { columnHelper } from "~/ui/data-table";
import { WindowTable } from "~/ui/window-table";
import type { ListWindow } from "~/platform/list-window";
import { Csrf } from "~/ui/root-data";
import type { JudgeRow } from "~/judge-validation/judge-candidates.server";
import type { UploadResult } from "~/judge-validation/judge-forms.server";
import type { ImportRow } from "~/judge-validation/judge-responses.server";
import type { RaterLoad } from "~/judge-validation/judge-raters.server";
import type { BucketRow } from "~/judge-validation/judge-sample.server";
import type { SampledItemRow } from "~/judge-validation/judge-set-export.server";
import type { JudgeSetSummary } from "~/judge-validation/judge-sets.server";
import { JudgeImportIssues, ResponsesUploadFields } from "./judge-admin";
import { Time } from "~/ui/time";

type SetProps = { set: JudgeSetSummary; busy: boolean };

/** The imported response files, and the form to import more while the set is drafting. */
export function ResponsesSection({
  set,
  imports,
  upload,
  busy,
}: SetProps & { imports: ImportRow[]; upload: UploadResult | null }) {
  const drafting = set.status === "drafting";
  return (
    <>
      <h2>Responses ({set.responses})</h2>
      {imports.length ? (
        <div className="table-scroll">
          <table>
            <thead>
              <tr>
                <th>File</th>
                <th>Format</th>
                <th className="num">Responses</th>
                <th>Imported</th>
              </tr>
            </thead>
            <tbody>
              {imports.map((i) => (
                <tr key={i.id}>
                  <td>{i.filename}</td>
                  <td>{i.format}</td>
                  <td className="num">{i.rows}</td>
                  <td>
                    <Time at={i.importedAt} /> {i.importedBy ? `by ${i.importedBy}` : "(command line)"}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {drafting ? (
        <details open={set.responses === 0}>
          <summary>Import more responses</summary>
          <Form method="post" encType="multipart/form-data" className="card">
            <Csrf />
            <ResponsesUploadFields />
            {set.items ? (
              <p className="notice warn">Importing discards the drawn sample: draw it again afterwards.</p>
            ) : null}
            <button type="submit" name="intent" value="import" disabled={busy}>
              Import
            </button>
          </Form>
        </details>
      ) : null}
      {upload ? (
        <>
          {upload.ok ? (
            <p className="notice ok" role="status">
              Imported {upload.written} responses
              {upload.discardsDraw ? "; the previous sample was discarded: draw it again" : ""}.
            </p>
          ) : null}
          <JudgeImportIssues result={upload} />
        </>
      ) : null}
    </>
  );
}

/** The buckets' targets, availability and selection, and the seeded draw. */
export function BucketSampleSection({ set, buckets, busy }: SetProps & { buckets: BucketRow[] }) {
  const drafting = set.status === "drafting";
  const total = (k: "target" | "available" | "selected") => buckets.reduce((s, b) => s + b[k], 0);
  return (
    <>
      <h2>Bucket sample</h2>
      <p className="muted">
        The reference's rule-based first parse puts each response in a bucket; a seeded draw takes up to the target from
        each (docs/judge-validation.md). The same responses and seed give the reference's own selection and ids.
        {set.drawnAt ? ` Drawn with seed ${set.seed}.` : " Not drawn yet."}
      </p>
      <Form method="post">
        <Csrf />
        <div className="table-scroll">
          <table data-testid="buckets">
            <thead>
              <tr>
                <th>Bucket</th>
                <th className="num">Target</th>
                <th className="num">Available</th>
                <th className="num">Selected</th>
              </tr>
            </thead>
            <tbody>
              {buckets.map((b) => (
                <tr key={b.bucket} data-bucket={b.bucket}>
                  <td>{b.bucket}</td>
                  <td className="num">
                    {drafting ? (
                      <input
                        type="number"
                        name={`target_${b.bucket}`}
                        defaultValue={b.target}
                        min={0}
                        style={{ width: "6rem" }}
                        aria-label={`Target of ${b.bucket}`}
                      />
                    ) : (
                      b.target
                    )}
                  </td>
                  <td className="num">{b.available}</td>
                  <td className="num">{b.selected}</td>
                </tr>
              ))}
              <tr>
                <th>Total</th>
                <th className="num">{total("target")}</th>
                <th className="num">{total("available")}</th>
                <th className="num" data-testid="selected-total">
                  {total("selected")}
                </th>
              </tr>
            </tbody>
          </table>
        </div>
        {drafting ? (
          <div className="row">
            <label htmlFor="seed">Seed</label>
            <input id="seed" name="seed" type="number" min={0} defaultValue={set.seed} style={{ width: "8rem" }} />
            <button type="submit" name="intent" value="draw" disabled={busy || set.responses === 0}>
              {set.drawnAt ? "Re-draw the sample" : "Draw the sample"}
            </button>
          </div>
        ) : (
          <p className="notice warn" data-testid="redraw-refused">
            Rating has started: the sample is frozen and can no longer be re-drawn.
          </p>
        )}
      </Form>
    </>
  );
}

/** Choosing the raters (which starts rating), then their progress and closing or reopening the rating. */
export function RatersSection({ set, raters, busy }: SetProps & { raters: RaterLoad[] }) {
  const drafting = set.status === "drafting";
  const activeRaters = raters.filter((r) => r.active);
  return (
    <>
      <h2>Raters</h2>
      {set.ratingsAssigned === 0 ? (
        drafting && set.items > 0 ? (
          <Form method="post" className="card">
            <Csrf />
            <p className="muted">
              Each sampled response goes to three of the raters chosen here: balanced load, never the same person twice,
              reproducible with the seed. This starts rating and freezes the sample.
            </p>
            {activeRaters.length === 0 ? <p className="notice warn">No active users have the rater role yet.</p> : null}
            {activeRaters.map((r) => (
              <label key={r.id} className="inline">
                <input type="checkbox" name="raters" value={r.id} defaultChecked /> {r.username}
              </label>
            ))}
            <label htmlFor="assign-seed">Seed</label>
            <input id="assign-seed" name="seed" type="number" defaultValue={1} min={0} style={{ width: "8rem" }} />
            <p>
              <button type="submit" name="intent" value="start" disabled={busy}>
                Assign raters and start rating
              </button>
            </p>
          </Form>
        ) : (
          <p className="muted">Draw the sample first; then choose the raters.</p>
        )
      ) : (
        <>
          <div className="table-scroll">
            <table data-testid="rater-progress">
              <thead>
                <tr>
                  <th>Rater</th>
                  <th className="num">Assigned</th>
                  <th className="num">Draft</th>
                  <th className="num">Submitted</th>
                </tr>
              </thead>
              <tbody>
                {raters
                  .filter((r) => r.assigned > 0)
                  .map((r) => (
                    <tr key={r.id} data-rater={r.username}>
                      <td>
                        {r.username} {r.active ? null : <span className="badge">deactivated</span>}
                      </td>
                      <td className="num">{r.assigned}</td>
                      <td className="num">{r.draft}</td>
                      <td className="num">{r.submitted}</td>
                    </tr>
                  ))}
              </tbody>
            </table>
          </div>
          <Form method="post" className="row">
            <Csrf />
            {set.status === "rating" ? (
              <button type="submit" name="intent" value="close" className="secondary" disabled={busy}>
                Close rating (labels become final)
              </button>
            ) : (
              <button type="submit" name="intent" value="reopen" className="secondary" disabled={busy}>
                Reopen rating
              </button>
            )}
          </Form>
        </>
      )}
    </>
  );
}

/** The set's export files. */
export function ExportsSection({ set }: { set: JudgeSetSummary }) {
  return (
    <>
      <h2>Exports</h2>
      <ul>
        <li>
          <a href={`/admin/judge-validation/${set.id}/export/annotator-sheet.csv`} download>
            annotator-sheet.csv
          </a>{" "}
          — blinded sheet for annotation outside the app (no model or strategy): for raters
        </li>
        <li>
          <a href={`/admin/judge-validation/${set.id}/export/key.csv`} download>
            key.csv
          </a>{" "}
          — the reference's sheet with model and strategy: admin only, never for raters
        </li>
        <li>
          <a href={`/admin/judge-validation/${set.id}/export/selected.jsonl`} download>
            selected.jsonl
          </a>
          ,{" "}
          <a href={`/admin/judge-validation/${set.id}/export/summary.json`} download>
            summary.json
          </a>{" "}
          — the sampled rows and the bucket summary, as the reference writes them
        </li>
        <li>
          <a href={`/admin/judge-validation/${set.id}/export/labels.csv`} download>
            labels.csv
          </a>{" "}
          — submitted ratings and judge outputs, the input of <code>judge-report --labels</code>
        </li>
      </ul>
    </>
  );
}

/** The candidate judges scored on the sample, and the form to import another. */
export function CandidateJudgesSection({
  judges,
  upload,
  busy,
}: {
  judges: JudgeRow[];
  upload: UploadResult | null;
  busy: boolean;
}) {
  return (
    <>
      <h2>Candidate judges ({judges.length})</h2>
      {judges.length ? (
        <div className="table-scroll">
          <table>
            <thead>
              <tr>
                <th>Judge</th>
                <th className="num">Outputs</th>
                <th>File</th>
                <th>Imported</th>
              </tr>
            </thead>
            <tbody>
              {judges.map((j) => (
                <tr key={j.id} data-judge={j.name}>
                  <td>{j.name}</td>
                  <td className="num">{j.outputs}</td>
                  <td>{j.filename}</td>
                  <td>
                    <Time at={j.importedAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <Form method="post" encType="multipart/form-data" className="card">
        <Csrf />
        <h3 style={{ marginTop: 0 }}>Import a judge's outputs</h3>
        <p className="muted">
          JSONL, one sampled response per line:{" "}
          <code>{'{"annotation_id", "new_judge_output": {"primary_answer", "info_request", "action"}}'}</code> as the
          reference writes them, or <code>{'{"annotation_id", "judge_output_raw": "PRIMARY_ANSWER: …"}'}</code> with the
          judge's raw text.
        </p>
        <div className="grid2">
          <div>
            <label htmlFor="judge">Judge name</label>
            <input id="judge" name="judge" type="text" placeholder="gemma-3-27b" required />
          </div>
          <div>
            <label htmlFor="judge-file">Outputs file</label>
            <input id="judge-file" name="file" type="file" accept=".jsonl,.json,.txt" required />
          </div>
        </div>
        <label className="inline">
          <input type="checkbox" name="replace" /> replace the outputs of a judge with this name
        </label>
        <p>
          <button type="submit" name="intent" value="judge" disabled={busy}>
            Import judge outputs
          </button>
        </p>
      </Form>
      {upload ? (
        <>
          {upload.ok ? (
            <p className="notice ok" role="status">
              Imported {upload.written} judge outputs.
            </p>
          ) : null}
          <JudgeImportIssues result={upload} />
        </>
      ) : null}
    </>
  );
}

const col = columnHelper<SampledItemRow & { position: number }>();

/** The sampled responses, each linking to its detail page. */
export function SampleSection({
  set,
  items,
  buckets,
}: {
  set: JudgeSetSummary;
  items: ListWindow<SampledItemRow & { position: number }>;
  buckets: readonly string[];
}) {
  const columns = useMemo(
    () => [
      col.accessor("position", { id: "position", header: "#" }),
      col.accessor("annotationId", {
        id: "annotationId",
        header: "Annotation id",
        cell: (info) => (
          <Link to={`/admin/judge-validation/${set.id}/items/${info.row.original.itemId}`}>{info.getValue()}</Link>
        ),
      }),
      col.accessor("bucket", { header: "Bucket" }),
      col.accessor("derivedAction", { header: "Derived action" }),
      col.accessor("model", { header: "Model" }),
      col.accessor("strategy", { header: "Strategy" }),
      col.accessor("sampleId", { header: "Sample" }),
      col.accessor((r) => r.stepIndex ?? "", { id: "step", header: "Step" }),
      col.accessor((r) => `${r.submitted} / ${r.assigned}`, { id: "ratings", header: "Ratings submitted" }),
    ],
    [set.id],
  );
  return (
    <>
      <h2>Sample ({set.items})</h2>
      <WindowTable
        window={items}
        columns={columns}
        sortable={["position", "annotationId"]}
        noun="responses"
        testId="sample"
        filterLabel="Annotation id starts with"
        filters={
          <select
            name="bucket"
            aria-label="Bucket"
            defaultValue={(items.query.filters as Record<string, string>).bucket}
          >
            <option value="">All buckets</option>
            {buckets.map((b) => (
              <option key={b} value={b}>
                {b}
              </option>
            ))}
          </select>
        }
        rowProps={(r) => ({ "data-item": r.annotationId })}
      />
    </>
  );
}
