import { redirect, type LoaderFunctionArgs } from "@remix-run/node";
import { z } from "zod";
import { getDb } from "~/platform/db.server";
import { downloadResponse } from "~/platform/download.server";
import { requireById, requireRole } from "~/accounts/guard.server";
import { goldFileOffThread } from "~/gold/gold-export.server";
import { getStudy } from "~/annotation/studies.server";

const QuerySchema = z.object({
  file: z.enum(["data_gt.json", "samples.json", "data.csv", "manifest.json"]),
  asReleased: z.literal("1").optional(),
  allowPartial: z.literal("1").optional(),
});

const TYPES: Record<string, string> = {
  "data_gt.json": "application/json; charset=utf-8",
  "samples.json": "application/json; charset=utf-8",
  "manifest.json": "application/json; charset=utf-8",
  "data.csv": "text/csv; charset=utf-8",
};

/** One file of the gold export, as a download. Admin only: it holds every label of the study. */
export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  const study = requireById(params.studyId, (id) => getStudy(db, id), "No such study.");
  const query = QuerySchema.safeParse(Object.fromEntries(new URL(request.url).searchParams));
  if (!query.success)
    return new Response("Choose one of data_gt.json, samples.json, data.csv, manifest.json.", { status: 400 });
  const file = query.data.file;
  return downloadResponse({ filename: file, contentType: TYPES[file]!, cacheControl: "no-store" }, async () => {
    // Made on a worker thread into a complete temporary file (the output layer), then streamed from it with its
    // length: a big study's export takes seconds and its files are large; a full disk is a 507, not a short file.
    const result = await goldFileOffThread(db, {
      studyId: study.id,
      file,
      asReleased: Boolean(query.data.asReleased),
      allowPartial: Boolean(query.data.allowPartial),
    });
    // A refusal is shown on the progress page, beside the form that asked (the page words it itself, naming its
    // checkbox), never as a bare text page.
    if (!result.ok) {
      const back = new URLSearchParams({ refused: file });
      if (query.data.asReleased) back.set("asReleased", "1");
      return redirect(`/admin/studies/${study.id}/progress?${back}`, 303);
    }
    return { stream: result.body, length: result.length };
  });
}
