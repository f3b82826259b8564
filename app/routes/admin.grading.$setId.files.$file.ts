import type { LoaderFunctionArgs } from "@remix-run/node";
import { getDb } from "~/platform/db.server";
import { downloadResponse } from "~/platform/download.server";
import { requireById, requireRole } from "~/accounts/guard.server";
import { getGradingSet, getResultFile, ResultFileSchema } from "~/rubric-grading/results.server";

const type = (file: string) =>
  file.endsWith(".csv")
    ? "text/csv; charset=utf-8"
    : file.endsWith(".json")
      ? "application/json; charset=utf-8"
      : file.endsWith(".md")
        ? "text/markdown; charset=utf-8"
        : file.endsWith(".svg")
          ? "image/svg+xml"
          : "image/png";

/** One file of a set's report, as grade-report --out writes it. Admin only. */
export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  const set = requireById(params.setId, (id) => getGradingSet(db, id), "No such evaluation set.");
  const file = ResultFileSchema.safeParse(params.file);
  if (!file.success) return new Response(`Choose one of ${ResultFileSchema.options.join(", ")}.`, { status: 404 });
  const subset = new URL(request.url).searchParams.get("subset");
  const prefix = set.name.replace(/[^A-Za-z0-9._-]+/g, "_");
  return downloadResponse(
    {
      filename: `${prefix}.${file.data}`,
      contentType: type(file.data),
      inline: file.data.endsWith(".svg") || file.data.endsWith(".png"),
      cacheControl: "no-store",
    },
    async () => {
      const body = await getResultFile(db, set, file.data, subset);
      return typeof body === "string" ? body : new Uint8Array(body);
    },
  );
}
