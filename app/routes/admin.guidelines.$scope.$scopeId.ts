import type { ActionFunctionArgs } from "@remix-run/node";
import { data } from "@remix-run/node";
import { z } from "zod";
import { requireForm, requireRole } from "~/accounts/guard.server";
import { GUIDELINE_SCOPES } from "~/guidelines/domain/guidelines";
import { GuidelinesEditSchema, saveGuidelines } from "~/guidelines/guidelines.server";
import { setInclusionCriterion } from "~/screening/public.server";
import { getDb } from "~/platform/db.server";
import { parseIntent } from "~/platform/intent";

const ParamsSchema = z.object({ scope: z.enum(GUIDELINE_SCOPES), scopeId: z.coerce.number().int().positive() });

const ActionSchema = z.discriminatedUnion("intent", [
  GuidelinesEditSchema.extend({ intent: z.literal("guidelines") }),
  z.object({
    intent: z.literal("criterion"),
    criterion: z.string().trim().max(4000, "The inclusion criterion has at most 4,000 characters."),
  }),
]);

export type GuidelinesActionResult = { ok: boolean; message: string };

/** Saves a new version of a study's guidelines, or a screening study's inclusion criterion (docs/guidelines.md). */
export async function action({ request, params }: ActionFunctionArgs) {
  const me = await requireRole(request, "admin");
  const form = await requireForm(request, me);
  const where = ParamsSchema.safeParse(params);
  if (!where.success) throw new Response("No such study.", { status: 404 });
  const ref = where.data;
  const parsed = parseIntent(form, ActionSchema);
  if (!parsed.ok) return data<GuidelinesActionResult>({ ok: false, message: parsed.message }, 422);
  if (parsed.data.intent === "criterion") {
    if (ref.scope !== "screening")
      throw new Response("Only screening studies have an inclusion criterion.", { status: 404 });
    if (!setInclusionCriterion(getDb(), { studyId: ref.scopeId, criterion: parsed.data.criterion, actorId: me.id }))
      throw new Response("No such study.", { status: 404 });
    return data<GuidelinesActionResult>({ ok: true, message: "Inclusion criterion saved." });
  }
  const r = saveGuidelines(getDb(), { ref, body: parsed.data.body, basedOn: parsed.data.basedOn, actorId: me.id });
  if (!r.ok) {
    if (r.status === 404) throw new Response(r.message, { status: 404 });
    return data<GuidelinesActionResult>({ ok: false, message: r.message }, 409);
  }
  return data<GuidelinesActionResult>({
    ok: true,
    message: r.changed ? `Saved as version ${r.version}.` : `Unchanged: version ${r.version} stays in force.`,
  });
}
