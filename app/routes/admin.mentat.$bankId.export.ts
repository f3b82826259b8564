import { redirect, type LoaderFunctionArgs } from "@remix-run/node";
import { z } from "zod";
import { VARIANT_DIMENSIONS } from "~/expert-panel/domain/expert-scales";
import { getDb } from "~/platform/db.server";
import { requireById, requireRole } from "~/accounts/guard.server";
import { exportDataset } from "~/mentat/export.server";
import { getBank } from "~/mentat/banks.server";

const QuerySchema = z.object({ set: z.enum(VARIANT_DIMENSIONS), allowIntended: z.literal("1").optional() });

/** A variant set's evaluation records (JSONL) as a download. Admin only: it holds the labels. */
export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  const bank = requireById(params.bankId, (id) => getBank(db, id), "No such question bank.");
  const query = QuerySchema.safeParse(Object.fromEntries(new URL(request.url).searchParams));
  if (!query.success) return new Response(`Choose a set: ${VARIANT_DIMENSIONS.join(", ")}.`, { status: 400 });
  const result = exportDataset(db, {
    bankId: bank.id,
    dimension: query.data.set,
    allowIntended: Boolean(query.data.allowIntended),
  });
  // A refusal is shown on the bank's page under its export links, never as a bare text page.
  if (!result.ok) return redirect(`/admin/mentat/${bank.id}?refused=${query.data.set}#export`, 303);
  return new Response(result.text, {
    headers: {
      "Content-Type": "application/x-ndjson; charset=utf-8",
      "Content-Disposition": `attachment; filename="${result.filename}"`,
      "Cache-Control": "private, no-store",
      "X-Content-Type-Options": "nosniff",
    },
  });
}
