/**
 * POST /guidelines/seen: the guidelines panel of a workspace asks whether this person is seeing a study's guidelines
 * version for the first time, and records that they now have (docs/guidelines.md, "In the workspaces"). A form post
 * with the CSRF token, answered with JSON `{ firstVisit }`.
 */
import type { ActionFunctionArgs } from "@remix-run/node";
import { z } from "zod";
import { requireForm, requireUser } from "~/accounts/guard.server";
import { GUIDELINE_SCOPES } from "~/guidelines/domain/guidelines";
import { markGuidelinesSeen } from "~/guidelines/guidelines.server";
import { getDb } from "~/platform/db.server";

const SeenSchema = z.object({
  scope: z.enum(GUIDELINE_SCOPES),
  scopeId: z.coerce.number().int().positive(),
  version: z.coerce.number().int().positive(),
});

export async function action({ request }: ActionFunctionArgs) {
  const me = await requireUser(request);
  const form = await requireForm(request, me);
  const parsed = SeenSchema.safeParse(Object.fromEntries(form));
  if (!parsed.success) return Response.json({ firstVisit: false, error: "Not a study's guidelines." }, { status: 400 });
  return Response.json(markGuidelinesSeen(getDb(), { ...parsed.data, userId: me.id, now: Date.now() }), {
    headers: { "Cache-Control": "no-store" },
  });
}
