import { redirect, type LoaderFunctionArgs } from "@remix-run/node";
import { z } from "zod";
import { getDb } from "~/platform/db.server";
import { downloadResponse } from "~/platform/download.server";
import { invariantFound, requireRole } from "~/accounts/guard.server";
import { getScreeningStudy } from "~/screening/screening.server";
import { exportScreeningRelease, recallPoolCsv, RELEASE_FILES } from "~/screening/screening-release.server";

const ParamsSchema = z.object({
  studyId: z.coerce.number().int().positive(),
  file: z.enum([...RELEASE_FILES, "recall-pool.csv"]),
});

const typeOf = (file: string) =>
  file.endsWith(".csv")
    ? "text/csv; charset=utf-8"
    : file.endsWith(".jsonl")
      ? "application/x-ndjson; charset=utf-8"
      : "application/json; charset=utf-8";

/** One file of a screening study's release, or the recall screen's population. Admin only. */
export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const p = ParamsSchema.safeParse(params);
  const db = getDb();
  const study = invariantFound(p.success ? getScreeningStudy(db, p.data.studyId) : null, "No such file.");
  const file = p.data!.file;
  return downloadResponse({ filename: file, contentType: typeOf(file), cacheControl: "no-store" }, () => {
    if (file === "recall-pool.csv") return recallPoolCsv(db, study.id);
    const allowIncomplete = new URL(request.url).searchParams.get("allowIncomplete") === "1";
    const result = exportScreeningRelease(db, { studyId: study.id, allowIncomplete });
    // A refusal is shown on the study's page beside its release card, never as a bare text page.
    if (!result.ok) return redirect(`/admin/screening/${study.id}?refused=${file}#release`, 303);
    return result.files[file];
  });
}
