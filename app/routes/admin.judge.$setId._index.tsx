import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { useMemo } from "react";
import { z } from "zod";
import { ActionResult } from "~/ui/admin-notices";
import { columnHelper, DataTable } from "~/ui/data-table";
import { JudgeImportIssues, ResponsesUploadFields } from "~/judge-validation/ui/judge-admin";
import { BUCKET_SAMPLING_ORDER } from "~/judge-validation/domain/validation-set";
import { getDb } from "~/platform/db.server";
import { parseIntent } from "~/platform/intent";
import { requireById, requireForm, requireRole } from "~/accounts/guard.server";
import { Csrf } from "~/root";
import { listJudges } from "~/judge-validation/judge-candidates.server";
import { importJudgeFromForm, importResponsesFromForm, type UploadResult } from "~/judge-validation/judge-forms.server";
import { bucketOverview, drawSample } from "~/judge-validation/judge-sample.server";
import { getJudgeSet, SeedSchema, TargetsSchema, type BucketTargets } from "~/judge-validation/judge-sets.server";
import { listResponseImports } from "~/judge-validation/judge-responses.server";
import { listSampledItems, type SampledItemRow } from "~/judge-validation/judge-set-export.server";
import { listSetRaters, setRatingOpen, startRating } from "~/judge-validation/judge-raters.server";
import { ServiceError } from "~/accounts/users.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `${data?.set.name ?? "Validation set"} · Judge validation · Concord` },
];

function setOr404(param: string | undefined) {
  return requireById(param, (id) => getJudgeSet(getDb(), id), "No such validation set.");
}

export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const set = setOr404(params.setId);
  const db = getDb();
  return {
    set,
    buckets: bucketOverview(db, set.id),
    imports: listResponseImports(db, set.id),
    raters: listSetRaters(db, set.id),
    judges: listJudges(db, set.id),
    items: listSampledItems(db, set.id),
  };
}

/** A bucket target left blank keeps the set's current target. */
const blankAsUnset = (v: unknown) => (v === "" ? undefined : v);

const ActionSchema = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal(["import", "judge"]) }),
  z.object({
    intent: z.literal("draw"),
    seed: SeedSchema,
    ...Object.fromEntries(
      BUCKET_SAMPLING_ORDER.map((b) => [`target_${b}`, z.preprocess(blankAsUnset, TargetsSchema.shape[b].optional())]),
    ),
  }),
  z.object({
    intent: z.literal("start"),
    raters: z.array(z.string().min(1)).min(3, "Choose at least three raters: each response goes to three people."),
    seed: SeedSchema,
  }),
  z.object({ intent: z.literal(["close", "reopen"]) }),
]);

type ActionResult =
  | { kind: "message"; ok: boolean; message: string }
  | { kind: "upload"; what: "responses" | "judge"; result: UploadResult };

export async function action({ request, params }: ActionFunctionArgs): Promise<ActionResult> {
  const me = await requireRole(request, "admin");
  const form = await requireForm(request, me);
  const set = setOr404(params.setId);
  const db = getDb();
  const fail = (message: string): ActionResult => ({ kind: "message", ok: false, message });
  const parsed = parseIntent(form, ActionSchema, { arrays: ["raters"] });
  if (!parsed.ok) return fail(parsed.message);
  const a = parsed.data;
  try {
    switch (a.intent) {
      case "import":
        return {
          kind: "upload",
          what: "responses",
          result: await importResponsesFromForm(db, form, { actorId: me.id, setName: set.name }),
        };
      case "judge":
        return {
          kind: "upload",
          what: "judge",
          result: await importJudgeFromForm(db, form, { actorId: me.id, setId: set.id }),
        };
      case "draw": {
        const fields = a as Record<string, unknown>;
        const targets = Object.fromEntries(
          BUCKET_SAMPLING_ORDER.filter((b) => fields[`target_${b}`] !== undefined).map((b) => [b, fields[`target_${b}`]]),
        ) as Partial<BucketTargets>;
        const r = drawSample(db, { setId: set.id, seed: a.seed, targets, actorId: me.id });
        return {
          kind: "message",
          ok: true,
          message: `${r.redrawn ? "Re-drew" : "Drew"} the sample: ${r.items} responses (seed ${a.seed}).`,
        };
      }
      case "start": {
        const r = startRating(db, { setId: set.id, raterIds: a.raters, seed: a.seed, actorId: me.id });
        return {
          kind: "message",
          ok: true,
          message: `Rating started: ${r.items} responses, ${r.assignments} ratings assigned.`,
        };
      }
      case "close":
      case "reopen":
        setRatingOpen(db, { setId: set.id, open: a.intent === "reopen", actorId: me.id });
        return {
          kind: "message",
          ok: true,
          message: a.intent === "close" ? "Rating closed: labels are final." : "Rating reopened.",
        };
    }
  } catch (e) {
    if (e instanceof ServiceError) return fail(e.message);
    throw e;
  }
}

const col = columnHelper<SampledItemRow>();

export default function JudgeSetPage() {
  const { set, buckets, imports, raters, judges, items } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const busy = useNavigation().state !== "idle";
  const drafting = set.status === "drafting";
  const activeRaters = raters.filter((r) => r.active);
  const columns = useMemo(
    () => [
      col.accessor("annotationId", {
        header: "Annotation id",
        cell: (info) => <Link to={`/admin/judge/${set.id}/items/${info.row.original.itemId}`}>{info.getValue()}</Link>,
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
  const total = (k: "target" | "available" | "selected") => buckets.reduce((s, b) => s + b[k], 0);
  return (
    <section>
      <p>
        <Link to="/admin/judge">Judge validation</Link> ›
      </p>
      <div className="row">
        <h1>{set.name}</h1>
        <span className={`badge ${set.status}`} data-testid="set-status">
          {set.status}
        </span>
        <span className="spacer" />
        <Link to={`/admin/judge/${set.id}/report`} className="button secondary">
          Report: majority and judge scores
        </Link>
      </div>
      <ActionResult result={result?.kind === "message" ? result : null} />

      <h2>Responses ({set.responses})</h2>
      {imports.length ? (
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
                  {new Date(i.importedAt).toISOString().slice(0, 16).replace("T", " ")} UTC{" "}
                  {i.importedBy ? `by ${i.importedBy}` : "(command line)"}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
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
      {result?.kind === "upload" && result.what === "responses" ? (
        <>
          {result.result.ok ? (
            <p className="notice ok" role="status">
              Imported {result.result.written} responses
              {result.result.discardsDraw ? "; the previous sample was discarded: draw it again" : ""}.
            </p>
          ) : null}
          <JudgeImportIssues result={result.result} />
        </>
      ) : null}

      <h2>Bucket sample</h2>
      <p className="muted">
        The reference's rule-based first parse puts each response in a bucket; a seeded draw takes up to the target from
        each (INTEROP §5.2–5.3). The same responses and seed give the reference's own selection and ids.
        {set.drawnAt ? ` Drawn with seed ${set.seed}.` : " Not drawn yet."}
      </p>
      <Form method="post">
        <Csrf />
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

      {set.items > 0 ? (
        <>
          <h2>Exports</h2>
          <ul>
            <li>
              <a href={`/admin/judge/${set.id}/export/annotator-sheet.csv`} download>
                annotator-sheet.csv
              </a>{" "}
              — blinded sheet for annotation outside the app (no model or strategy): for raters
            </li>
            <li>
              <a href={`/admin/judge/${set.id}/export/key.csv`} download>
                key.csv
              </a>{" "}
              — the reference's sheet with model and strategy: admin only, never for raters
            </li>
            <li>
              <a href={`/admin/judge/${set.id}/export/selected.jsonl`} download>
                selected.jsonl
              </a>
              ,{" "}
              <a href={`/admin/judge/${set.id}/export/summary.json`} download>
                summary.json
              </a>{" "}
              — the sampled rows and the bucket summary, as the reference writes them
            </li>
            <li>
              <a href={`/admin/judge/${set.id}/export/labels.csv`} download>
                labels.csv
              </a>{" "}
              — submitted ratings and judge outputs, the input of <code>judge-report --labels</code>
            </li>
          </ul>

          <h2>Candidate judges ({judges.length})</h2>
          {judges.length ? (
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
                    <td>{new Date(j.importedAt).toISOString().slice(0, 16).replace("T", " ")} UTC</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
          <Form method="post" encType="multipart/form-data" className="card">
            <Csrf />
            <h3 style={{ marginTop: 0 }}>Import a judge's outputs</h3>
            <p className="muted">
              JSONL, one sampled response per line:{" "}
              <code>{'{"annotation_id", "new_judge_output": {"primary_answer", "info_request", "action"}}'}</code> as
              the reference writes them, or <code>{'{"annotation_id", "judge_output_raw": "PRIMARY_ANSWER: …"}'}</code>{" "}
              with the judge's raw text.
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
          {result?.kind === "upload" && result.what === "judge" ? (
            <>
              {result.result.ok ? (
                <p className="notice ok" role="status">
                  Imported {result.result.written} judge outputs.
                </p>
              ) : null}
              <JudgeImportIssues result={result.result} />
            </>
          ) : null}

          <h2>Sample ({items.length})</h2>
          <DataTable
            data={items}
            columns={columns}
            filterLabel="Filter the sample"
            rowProps={(r) => ({ "data-item": r.annotationId })}
          />
        </>
      ) : null}
    </section>
  );
}
