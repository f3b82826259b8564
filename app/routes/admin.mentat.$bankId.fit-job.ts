import type { LoaderFunctionArgs } from "@remix-run/node";
import { getDb } from "~/platform/db.server";
import { requireById, requireRole } from "~/accounts/guard.server";
import { getBank } from "~/mentat/banks.server";
import { latestFitJob } from "~/mentat/fits.server";

/**
 * The bank's latest fit job — status, refits done of the total, error, the stored fit's id — polled by the bank page
 * while a fit runs (docs/mentat.md, "Fits in the background"). Admin only; no labels in it.
 */
export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  const bank = requireById(params.bankId, (id) => getBank(db, id), "No such question bank.");
  return Response.json({ job: latestFitJob(db, bank.id) }, { headers: { "Cache-Control": "no-store" } });
}
