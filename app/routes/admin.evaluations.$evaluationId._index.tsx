import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { timingSafeEqual } from "node:crypto";
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { unstable_parseMultipartFormData } from "@remix-run/node";
import { Link, useActionData, useLoaderData, useSearchParams } from "@remix-run/react";
import { useMemo } from "react";
import { z } from "zod";
import { requireById, requireForm, requireRole } from "~/accounts/guard.server";
import { evaluationTables, runsWindow, type RunRow } from "~/evaluation/evaluation-pages.server";
import {
  getEvaluation,
  importFromPage,
  importStagedFolder,
  runsRoot,
  stageUploadedFile,
} from "~/evaluation/evaluations.server";
import { UploadForm } from "~/evaluation/ui/upload-form";
import { ImportForm, ImportResultView } from "~/evaluation/ui/import-form";
import { listReviews } from "~/evaluation/model-review.server";
import { AgreementLine, DefensibleTable } from "~/evaluation/ui/review-figures";
import { MetricsTables } from "~/evaluation/ui/metrics-tables";
import { getDb } from "~/platform/db.server";
import { ServiceError } from "~/platform/service-error";
import { columnHelper } from "~/ui/data-table";
import { WindowTable } from "~/ui/window-table";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `${data?.evaluation.name ?? "Evaluation"} · Evaluations · Concord` },
];

export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  const evaluation = requireById(params.evaluationId, (id) => getEvaluation(db, id), "No such evaluation.");
  const url = new URL(request.url);
  const mode: "paper" | "reference" = url.searchParams.get("mode") === "reference" ? "reference" : "paper";
  const { output, tables } = evaluationTables(db, evaluation.id, mode);
  return {
    evaluation,
    mode,
    tables,
    gold: output.gold,
    warnings: output.warnings,
    runs: runsWindow(db, evaluation.id, url.searchParams),
    reviews: listReviews(db, evaluation.id),
    root: runsRoot(),
  };
}

const FormSchema = z.object({ intent: z.enum(["preview", "import"]), runs: z.string().min(1).max(20_000) });

export async function action({ request, params }: ActionFunctionArgs) {
  const user = await requireRole(request, "admin");
  const db = getDb();
  const evaluation = requireById(params.evaluationId, (id) => getEvaluation(db, id), "No such evaluation.");
  if ((request.headers.get("content-type") ?? "").startsWith("multipart/form-data"))
    return uploadAction(request, user, evaluation.name);
  const form = await requireForm(request, user);
  const parsed = FormSchema.safeParse(Object.fromEntries(form));
  if (!parsed.success) return { error: "Give at least one run folder." };
  try {
    return importFromPage(db, {
      evaluation: evaluation.name,
      runs: parsed.data.runs,
      dryRun: parsed.data.intent === "preview",
      actor: user.id,
    });
  } catch (e) {
    if (e instanceof ServiceError) return { error: e.message };
    throw e;
  }
}

async function textOf(data: AsyncIterable<Uint8Array>): Promise<string> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of data) {
    n += c.byteLength;
    if (n > 10_000) throw new ServiceError("A form field is too long.", "files", 413);
    chunks.push(Buffer.from(c));
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * A folder uploaded from the page (docs/evaluation.md, "Runs in the app"): the CSRF token is checked before any file
 * is written; the files are staged in a temporary folder (`stageUploadedFile`) and imported from it as `eval-import`
 * imports a folder (`importStagedFolder`), then the staging folder is removed, whatever happened.
 */
async function uploadAction(request: Request, user: { id: string; csrf: string }, evaluation: string) {
  const staging = mkdtempSync(join(tmpdir(), "concord-upload-"));
  try {
    let csrfOk = false;
    let path: string | null = null;
    const files: string[] = [];
    const form = await unstable_parseMultipartFormData(request, async ({ name, filename, data }) => {
      if (filename === undefined) {
        const text = await textOf(data);
        if (name === "csrf") {
          const a = Buffer.from(text);
          const b = Buffer.from(user.csrf);
          csrfOk = a.length === b.length && timingSafeEqual(a, b);
        }
        if (name === "path") path = text;
        return text;
      }
      if (!csrfOk || name !== "files")
        throw new Response("The form has expired or did not come from this site. Reload the page and try again.", {
          status: 403,
        });
      // The file's path in the chosen folder: the `path` field sent just before it.
      const written = await stageUploadedFile(staging, path ?? filename, data);
      path = null;
      if (written) files.push(written);
      return written ?? undefined;
    });
    if (!csrfOk)
      throw new Response("The form has expired or did not come from this site. Reload the page and try again.", {
        status: 403,
      });
    return importStagedFolder(getDb(), {
      evaluation,
      staging,
      files,
      dryRun: form.get("intent") !== "import",
      actor: user.id,
    });
  } catch (e) {
    if (e instanceof ServiceError) return { error: e.message };
    throw e;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

const col = columnHelper<RunRow>();

/** Why a run shows no tokens (docs/evaluation.md, "Runs in the app"). */
const NO_TOKENS =
  "Not recorded: this run's run.json has no token counts (a run by the reference's runner or an older Concord, or a server that reports no usage).";

function seconds(s: number | null): string {
  if (s === null) return "—";
  if (s < 120) return `${s.toFixed(1)} s`;
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

export default function EvaluationPage() {
  const { evaluation, mode, tables, gold, warnings, runs, reviews, root } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const [params] = useSearchParams();
  const columns = useMemo(
    () => [
      col.accessor("model", { id: "model", header: "Model" }),
      col.accessor("strategy", { header: "Strategy" }),
      col.accessor("seed", { header: "Seed", cell: (i) => i.getValue() ?? "—" }),
      col.accessor("status", { header: "Status" }),
      col.accessor("trajectories", { header: "Cases" }),
      col.accessor("calls", { header: "Calls" }),
      col.accessor("retries", { header: "Retries", cell: (i) => i.getValue() ?? "—" }),
      col.accessor("tokens", {
        header: "Tokens",
        cell: (i) => {
          const n = i.getValue();
          return n === null ? (
            <span title={NO_TOKENS} aria-label={NO_TOKENS} data-testid="no-tokens">
              —
            </span>
          ) : (
            n.toLocaleString("en-US")
          );
        },
      }),
      col.accessor("failures", { header: "Failures" }),
      col.accessor("seconds", { header: "Time", cell: (i) => seconds(i.getValue()) }),
    ],
    [],
  );
  const modeHref = (m: string) => {
    const next = new URLSearchParams(params);
    if (m === "paper") next.delete("mode");
    else next.set("mode", m);
    return `?${next.toString()}`;
  };
  const base = `/admin/evaluations/${evaluation.id}`;
  return (
    <section>
      <p>
        <Link to="/admin/evaluations">Evaluations</Link> ›
      </p>
      <h1>{evaluation.name}</h1>
      <p className="muted">
        {gold.cases} gold cases ({gold.sufficient} sufficient, {gold.insufficient} insufficient)
        {evaluation.studyName ? ` of the study ${evaluation.studyName}` : ""}; {evaluation.runs} runs.{" "}
        <Link to={`${base}/cases`}>Cases and failures ›</Link>
      </p>
      <h2>Metrics</h2>
      <nav className="row" aria-label="Mode">
        <Link to={modeHref("paper")} aria-current={mode === "paper" ? "page" : undefined}>
          Paper definitions
        </Link>
        <Link to={modeHref("reference")} aria-current={mode === "reference" ? "page" : undefined}>
          Reference scripts (compat)
        </Link>
      </nav>
      <p className="muted" data-testid="mode-text">
        {mode === "paper"
          ? "The paper's definitions, the same for every strategy and seed; trajectories with an empty output or a judge failure are left out. Mean ± s.d. [95% Student-t interval over seeds]."
          : 'Each reference script\'s own numbers, quirks included; seeds pooled as the scripts pool them (docs/evaluation.md, "Compat mode").'}{" "}
        The same numbers as <code>concord metrics{mode === "reference" ? " --compat reference" : ""}</code>.
      </p>
      {warnings.length > 0 && (
        <ul className="notice">
          {warnings.map((w, i) => (
            <li key={i}>{w}</li>
          ))}
        </ul>
      )}
      <MetricsTables tables={tables} mode={mode} base={`${base}/files`} />
      <h2>Clinician review</h2>
      <p className="muted" data-testid="review-link">
        How many of the failures psychiatrists judged clinically defensible, blinded to the model.{" "}
        <Link to={`${base}/reviews`}>Send model steps to review ›</Link>
        {reviews.length ? (
          <>
            {" "}
            · <a href={`${base}/files/reviews.csv`}>reviews.csv</a>
          </>
        ) : null}
      </p>
      {reviews.map((r) => (
        <div key={r.id} data-testid="evaluation-review" data-review={r.name}>
          <DefensibleTable name={r.name} rows={r.defensible} />
          <AgreementLine agreement={r.agreement} />
        </div>
      ))}
      <h2>Runs</h2>
      <WindowTable
        window={runs}
        columns={columns}
        sortable={["model"]}
        filterLabel="Model starts with"
        noun="runs"
        testId="runs"
        rowProps={(r) => ({ "data-run": r.path })}
      />
      <h2>Import more runs</h2>
      <ImportResultView result={result} />
      <ImportForm root={root} evaluation={evaluation.name} />
      <UploadForm />
    </section>
  );
}
