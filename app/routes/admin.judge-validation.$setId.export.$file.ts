import type { LoaderFunctionArgs } from "@remix-run/node";
import { z } from "zod";
import { judgeLabelsCsv } from "~/judge-validation/domain/judge-report";
import { getDb } from "~/platform/db.server";
import { downloadResponse } from "~/platform/download.server";
import { requireById, requireRole } from "~/accounts/guard.server";
import { setLabels } from "~/judge-validation/judge-candidates.server";
import { exportSetFile, SET_EXPORT_FILES } from "~/judge-validation/judge-set-export.server";
import { getJudgeSet } from "~/judge-validation/judge-sets.server";

const FileSchema = z.enum([...SET_EXPORT_FILES, "labels.csv"]);

const TYPES: Record<z.infer<typeof FileSchema>, string> = {
  "annotator-sheet.csv": "text/csv; charset=utf-8",
  "key.csv": "text/csv; charset=utf-8",
  "labels.csv": "text/csv; charset=utf-8",
  "selected.jsonl": "application/x-ndjson; charset=utf-8",
  "summary.json": "application/json; charset=utf-8",
};

/**
 * One file of a validation set, as a download. Admin only: even the blinded annotator sheet is handed to raters by
 * the admin, and the other files hold the key (model, strategy, bucket) and everyone's labels.
 */
export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  const set = requireById(params.setId, (id) => getJudgeSet(db, id), "No such validation set.");
  const file = FileSchema.safeParse(params.file);
  if (!file.success) return new Response(`Choose one of ${FileSchema.options.join(", ")}.`, { status: 404 });
  const name = file.data;
  const prefix = set.name.replace(/[^A-Za-z0-9._-]+/g, "_");
  return downloadResponse({ filename: `${prefix}.${name}`, contentType: TYPES[name], cacheControl: "no-store" }, () =>
    name === "labels.csv" ? judgeLabelsCsv(setLabels(db, set.id)) : exportSetFile(db, set.id, name),
  );
}
