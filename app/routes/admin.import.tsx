import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { z } from "zod";
import { ImportPreview, ImportUploadForm } from "~/annotation/ui/case-import";
import { formatOf, MAX_FILE_BYTES } from "~/annotation/domain/case-import";
import { importBytesProblem, importLimits, refusalLine } from "~/formats/import-contract";
import { getDb } from "~/platform/db.server";
import { parseColumnMap } from "~/platform/forms";
import { parseIntent } from "~/platform/intent";
import { requireForm, requireRole } from "~/accounts/guard.server";
import { isDemoDatabase } from "~/demo/demo.server";
import {
  confirmPendingImportOffThread,
  discardPendingImport,
  stagePendingImport,
} from "~/annotation/pending-imports.server";
import { listStudies, StudyNameSchema, type ImportPlan } from "~/annotation/studies.server";
import { ServiceError } from "~/platform/service-error";
import { unlessOutOfSpaceAwaited } from "~/platform/storage-errors.server";

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
      // The lock held elsewhere (a command-line import, a backup) answers 503 with Retry-After, never 500.
      // On a worker thread: this server keeps answering annotators while the import writes.
      const confirmed = await unlessOutOfSpaceAwaited(() =>
        confirmPendingImportOffThread(db, { id: a.pendingId, userId: me.id }),
      );
      if ("status" in confirmed) {
        const error =
          confirmed.status === 503
            ? "The database is busy with another task (an import or a backup): nothing was imported. Confirm again in a moment."
            : "The server is out of disk space: nothing was imported. Free some space, then confirm again.";
        const headers: Record<string, string> =
          confirmed.status === 503 ? { "Retry-After": String(confirmed.retryAfter) } : {};
        return Response.json({ step: "error", error } satisfies ActionResult, { status: confirmed.status, headers });
      }
      const { plan, studyId } = confirmed;
      if (!plan.ok)
        return { step: "preview", plan, pendingId: null, error: "The file no longer validates: nothing was imported." };
      return redirect(
        `/admin/studies/${studyId}?created=${plan.create}&updated=${plan.update}&unchanged=${plan.unchanged}`,
      );
    } catch (e) {
      if (e instanceof ServiceError) return { step: "error", error: e.message };
      throw e;
    }
  }
  const file = form.get("file");
  if (!(file instanceof File) || file.size === 0)
    return { step: "error", error: "Choose a CSV or JSONL file to import." };
  const columnMap = parseColumnMap(a.columnMap);
  if (columnMap === null)
    return {
      step: "error",
      error:
        'Column names must be written as "canonical=your column", separated by commas, e.g. "id=case_id, presenting_symptoms=Symptoms".',
    };
  const bytes = new Uint8Array(await file.arrayBuffer());
  // The import contract (docs/reliability.md, "The import contract"): size, line length, NUL, an empty file.
  const format = formatOf(file.name, a.format === "auto" ? undefined : a.format);
  const problem = importBytesProblem(bytes, importLimits("cases"), { json: format === "jsonl" });
  if (problem) return { step: "error", error: `${refusalLine(file.name, problem)} Nothing was imported.` };
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
          This is a demo database: its accounts have a published password. Import only fictional notes here; run a real
          study on its own database (see docs/deploying.md, “Deploying for a real study”).
        </p>
      ) : null}
      <p className="muted">
        CSV (one row per case: <code>id</code>, the section columns <code>presenting_symptoms</code>,{" "}
        <code>psychiatric_history</code>, <code>psychiatric_exam</code>, <code>psychological_exam</code>,{" "}
        <code>secondary_diagnoses</code>, optional <code>age_group</code>, <code>sex</code> and the Safe-Psych label
        columns) or JSONL. The whole file is checked first; nothing is written until you confirm, and a file with errors
        writes nothing.
      </p>
      <ImportUploadForm studies={studies} study={study} busy={busy} />

      {result?.error ? (
        <p className="notice bad" role="alert">
          {result.error}
        </p>
      ) : null}
      {plan ? (
        <ImportPreview
          plan={plan}
          pendingId={result && result.step === "preview" ? result.pendingId : null}
          busy={busy}
        />
      ) : null}
    </section>
  );
}
