import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { z } from "zod";
import { MENTAT_DOMAINS, type MentatDomain } from "~/expert-panel/domain/expert-scales";
import {
  BankImportForm,
  BanksTable,
  ReviewSetImportForm,
  ReviewSetsTable,
  type ExpertImportResult,
} from "~/expert-panel/ui/expert-admin";
import { getDb } from "~/platform/db.server";
import { decodeImportBytes, importLimits } from "~/formats/import-contract";
import { parseIntent } from "~/platform/intent";
import { requireForm, requireRole } from "~/accounts/guard.server";
import { importReviewSet, reviewSetsWindow } from "~/case-review/case-review.server";
import { banksWindow, importQuestionBank } from "~/mentat/banks.server";

export const meta: MetaFunction = () => [{ title: "Expert ratings · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  // A window of each list, as the URL asks (docs/architecture.md, "Pages are windows"): banks `b_`, sets `s_`.
  const params = new URL(request.url).searchParams;
  return { banks: banksWindow(db, params), sets: reviewSetsWindow(db, params) };
}

const ImportSchema = z.discriminatedUnion("intent", [
  z.object({
    intent: z.literal(["bank", "set"]),
    name: z.string().trim().min(1, "Give the bank or set a name."),
    // An empty seed field means "no seed given", not 0.
    seed: z.preprocess(
      (v) => (v === "" ? undefined : v),
      z.coerce
        .number()
        .int()
        .min(0)
        .max(2 ** 31 - 1)
        .optional(),
    ),
    domains: z.array(z.enum(MENTAT_DOMAINS)).default([]),
  }),
]);

export async function action({ request }: ActionFunctionArgs) {
  const user = await requireRole(request, "admin");
  const form = await requireForm(request, user);
  const parsed = parseIntent(form, ImportSchema, { arrays: ["domains"] });
  if (!parsed.ok) return { intent: parsed.intent, message: parsed.message, issues: [] } satisfies ExpertImportResult;
  const intent = parsed.data.intent;
  const file = form.get("file");
  if (!(file instanceof File) || file.size === 0)
    return { intent, message: "Choose a CSV file.", issues: [] } satisfies ExpertImportResult;
  // The import contract (docs/reliability.md, "The import contract"): strict UTF-8 (never U+FFFD), the size and
  // line limits, no NUL, not empty.
  const decoded = decodeImportBytes(new Uint8Array(await file.arrayBuffer()), importLimits("expert"), { json: false });
  if ("problem" in decoded)
    return {
      intent,
      message: "1 problem; nothing was imported.",
      issues: [decoded.problem],
    } satisfies ExpertImportResult;
  const text = decoded.text;
  const db = getDb();
  if (parsed.data.intent === "bank") {
    const r = importQuestionBank(db, {
      bankName: parsed.data.name,
      text,
      actorId: user.id,
      preferenceDomains: parsed.data.domains as MentatDomain[],
      seed: parsed.data.seed,
    });
    if (!r.ok)
      return {
        intent,
        message: `${r.errors.length} problem(s); nothing was imported.`,
        issues: r.errors,
      } satisfies ExpertImportResult;
    // Values kept as given that deserve a look (formula-like, control characters) are shown, not dropped.
    if (r.warnings.length)
      return {
        intent,
        kind: "warning",
        message: `Imported into bank "${r.bankName}": ${r.created} new, ${r.updated} changed, ${r.unchanged} unchanged. Check these values:`,
        issues: r.warnings,
      } satisfies ExpertImportResult;
    throw redirect(`/admin/mentat/${r.bankId}?imported=${r.created}-${r.updated}-${r.unchanged}`);
  }
  const r = importReviewSet(db, { setName: parsed.data.name, text, actorId: user.id });
  if (!r.ok)
    return {
      intent,
      message: `${r.errors.length} problem(s); nothing was imported.`,
      issues: r.errors,
    } satisfies ExpertImportResult;
  if (r.warnings.length)
    return {
      intent,
      kind: "warning",
      message: `Imported into review set "${parsed.data.name}": ${r.created} new, ${r.updated} changed, ${r.unchanged} unchanged. Check these values:`,
      issues: r.warnings,
    } satisfies ExpertImportResult;
  throw redirect(`/admin/case-review/${r.setId}?imported=${r.created}-${r.updated}-${r.unchanged}`);
}
export default function ExpertAdmin() {
  const { banks, sets } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const busy = useNavigation().state !== "idle";
  return (
    <section>
      <h1>Expert ratings</h1>
      <p className="muted">
        MENTAT question banks (experts rate every answer option 0–100; hierarchical Bradley–Terry preference labels) and
        MentalBench review sets (experts rate generated cases on three 5-point scales and accept or reject seeds).
      </p>
      <h2>Question banks</h2>
      <BanksTable banks={banks} />
      <h2>Review sets</h2>
      <ReviewSetsTable sets={sets} />
      <div className="grid2" style={{ marginTop: "1.5rem" }}>
        <BankImportForm result={result} busy={busy} />
        <ReviewSetImportForm result={result} busy={busy} />
      </div>
    </section>
  );
}
