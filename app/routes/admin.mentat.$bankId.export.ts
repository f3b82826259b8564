import { redirect, type LoaderFunctionArgs } from "@remix-run/node";
import { z } from "zod";
import { VARIANT_DIMENSIONS } from "~/expert-panel/domain/expert-scales";
import { getDb } from "~/platform/db.server";
import { downloadResponse } from "~/platform/download.server";
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
  const dimension = query.data.set;
  return downloadResponse(
    { filename: `the ${dimension} set`, contentType: "application/x-ndjson; charset=utf-8" },
    () => {
      const result = exportDataset(db, {
        bankId: bank.id,
        dimension,
        allowIntended: Boolean(query.data.allowIntended),
      });
      // A refusal is shown on the bank's page under its export links, never as a bare text page.
      if (!result.ok) return redirect(`/admin/mentat/${bank.id}?refused=${dimension}#export`, 303);
      return { filename: result.filename, body: result.text };
    },
  );
}
