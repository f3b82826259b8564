import type { LoaderFunctionArgs } from "@remix-run/node";
import { requireUser } from "~/accounts/guard.server";
import { icd10Index, icd10Synonyms } from "~/icd10/icd10.server";

/**
 * The WHO chapter V table and the synonym table for the code picker's in-browser search (docs/icd10.md#search);
 * fetched once and cached by the browser.
 */
export async function loader({ request }: LoaderFunctionArgs) {
  await requireUser(request);
  const rows = icd10Index().entries.map((e) => ({
    code: e.code,
    title: e.title,
    level: e.level,
    parent: e.parent ?? "",
  }));
  return new Response(JSON.stringify({ rows, synonyms: icd10Synonyms() }), {
    headers: { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "private, max-age=86400" },
  });
}
