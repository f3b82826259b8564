import type { LoaderFunctionArgs } from "@remix-run/node";
import { z } from "zod";
import { getDb } from "~/platform/db.server";
import { requireById, requireRole } from "~/accounts/guard.server";
import { downloadResponse } from "~/platform/download.server";
import { getProject, missingLines, notesCsv, notesJsonl, readPlan } from "~/preparation/public.server";

const QuerySchema = z.object({
  what: z.enum(["minimised", "released"]).default("minimised"),
  format: z.enum(["csv", "jsonl"]).default("csv"),
});

/**
 * Admins only (docs/security.md, "Source text"): the project's minimised notes in the source language (docs/
 * preparation.md, "Export") or its released English notes in the released CSV's layout ("Release"), made whole before
 * the answer starts (one download answer, app/platform/download.server.ts); refused (409, one line per note) while a
 * note is not ready.
 */
export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  const project = requireById(params.projectId, (id) => getProject(db, id));
  const query = QuerySchema.safeParse(Object.fromEntries(new URL(request.url).searchParams));
  if (!query.success) throw new Response("Unknown export.", { status: 400 });
  const { what, format } = query.data;
  const slug = project.name.replace(/[^\p{L}\p{N}._-]+/gu, "-");
  const filename = what === "released" ? `${slug}-released.csv` : `${slug}-minimised.${format}`;
  return downloadResponse(
    {
      filename,
      contentType: format === "csv" || what === "released" ? "text/csv; charset=utf-8" : "application/x-ndjson",
    },
    () => {
      const plan = readPlan(db, project.id, what === "released" ? "release" : "export");
      if (plan.missing.length)
        return new Response(
          `${missingLines(plan.missing).join("\n")}\nNot ${what === "released" ? "released" : "exported"}: ${plan.missing.length} notes are not ready.\n`,
          { status: 409, headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" } },
        );
      if (what === "released") return notesCsv(plan.notes, { released: true });
      return format === "csv" ? notesCsv(plan.notes) : notesJsonl(plan.notes);
    },
  );
}
