import type { ActionFunctionArgs, LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { z } from "zod";
import { ExpertAdminHead, ExpertPanel } from "~/expert-panel/ui/expert-panel";
import styles from "~/expert-panel/ui/expert-ratings.css?url";
import { VARIANT_DIMENSIONS } from "~/expert-panel/domain/expert-scales";
import { DatasetsTable, ExpandForm, FitForm, FitSummary, QuestionsTable } from "~/mentat/ui/bank-sections";
import { FitJobProgress } from "~/mentat/ui/fit-job-progress";
import { getDb } from "~/platform/db.server";
import { parseIntent } from "~/platform/intent";
import { requireById, requireForm, requireRole } from "~/accounts/guard.server";
import { changeBankPanel, listBankPanel } from "~/mentat/panel.server";
import { expandBank, bankQuestionsWindow, listDatasets } from "~/mentat/questions.server";
import { cancelBankFitJob, FitOptionsSchema, getLatestFit, latestFitJob, startBankFitJob } from "~/mentat/fits.server";
import { getBank } from "~/mentat/banks.server";
import { exportDataset } from "~/mentat/export.server";
import { ServiceError } from "~/platform/service-error";
import { guidelinesAdmin } from "~/guidelines/guidelines.server";
import { GuidelinesEditor } from "~/guidelines/ui/guidelines-editor";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `${data?.bank.name ?? "Question bank"} · Concord` },
];
export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];

function bankOr404(param: string | undefined) {
  return requireById(param, (id) => getBank(getDb(), id), "No such question bank.");
}

export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const bank = bankOr404(params.bankId);
  const db = getDb();
  const fit = getLatestFit(db, bank.id);
  const questions = bankQuestionsWindow(db, bank, new URL(request.url).searchParams);
  const shown = new Set(questions.rows.map((q) => q.externalId));
  // After a refused download (the export route sends the admin back here): the reason, as it stands now.
  const refusedSet = VariantSetSchema.safeParse(new URL(request.url).searchParams.get("refused"));
  const refusal = refusedSet.success ? exportDataset(db, { bankId: bank.id, dimension: refusedSet.data }) : null;
  return {
    refused: refusal && !refusal.ok ? `Export of the ${refusedSet.data} set refused: ${refusal.message}` : null,
    bank,
    // One window of the questions, as the URL asks (docs/architecture.md, "Pages are windows").
    questions,
    panel: listBankPanel(db, bank.id),
    datasets: listDatasets(db, bank.id),
    guidelines: guidelinesAdmin(db, { scope: "mentat_bank", scopeId: bank.id }),
    job: latestFitJob(db, bank.id),
    fit: fit && {
      id: fit.id,
      createdAt: fit.createdAt,
      params: fit.params,
      stale: fit.stale,
      nRows: fit.result.nRows,
      objective: fit.result.labels.objective,
      converged: fit.result.labels.converged,
      notConverged: fit.result.labels.bootstrap.notConverged,
      raters: fit.result.labels.raters,
      // The fitted labels and agreement of the window's questions; the separated ones of the whole bank by name.
      questions: fit.result.labels.questions.filter((q) => shown.has(q.question)),
      separated: fit.result.labels.questions.filter((q) => q.separated).map((q) => q.question),
      agreement: fit.result.agreement.filter((a) => shown.has(a.question)),
    },
  };
}

const VariantSetSchema = z.enum(VARIANT_DIMENSIONS);

const ListSchema = z
  .string()
  .optional()
  .transform((s) => (s?.trim() ? s.split(",").map((x) => x.trim()) : undefined));

const ActionSchema = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal("add_rater"), raterId: z.string().min(1) }),
  z.object({ intent: z.literal("remove_rater"), raterId: z.string().min(1) }),
  z.object({
    intent: z.literal("expand"),
    dimension: z.enum([...VARIANT_DIMENSIONS, "all"]),
    ages: ListSchema,
    races: ListSchema,
  }),
  z.object({
    intent: z.literal("fit"),
    bootstrap: z.coerce
      .number()
      .int()
      .min(0)
      .max(1000, "At most 1000 refits from the web page; use the mentat-fit command for more."),
    seed: z.string(),
    raterEffects: z.string(),
  }),
  z.object({ intent: z.literal("cancel_fit") }),
]);

export async function action({ request, params }: ActionFunctionArgs) {
  const me = await requireRole(request, "admin");
  const form = await requireForm(request, me);
  const bank = bankOr404(params.bankId);
  const parsed = parseIntent(form, ActionSchema);
  if (!parsed.ok) return { ok: false as const, message: parsed.message };
  const db = getDb();
  const a = parsed.data;
  try {
    if (a.intent === "add_rater" || a.intent === "remove_rater")
      return changeBankPanel(db, { id: bank.id, intent: a.intent, raterId: a.raterId, actorId: me.id });
    if (a.intent === "expand") {
      const ages = a.ages?.map(Number);
      if (ages?.some((x) => !Number.isInteger(x)))
        return { ok: false as const, message: "Ages must be whole numbers, separated by commas." };
      const done = (a.dimension === "all" ? VARIANT_DIMENSIONS : [a.dimension]).map((dimension) => {
        const r = expandBank(db, { bankId: bank.id, dimension, params: { ages, races: a.races }, actorId: me.id });
        return `${dimension}: ${r.count}${r.unchanged ? " (unchanged)" : ""}`;
      });
      return { ok: true as const, message: `Variant sets — ${done.join(", ")}.` };
    }
    if (a.intent === "cancel_fit") {
      await cancelBankFitJob(db, { bankId: bank.id, actorId: me.id });
      return { ok: true as const, message: "Fit cancelled; nothing was saved." };
    }
    const options = FitOptionsSchema.safeParse({ bootstrap: a.bootstrap, seed: a.seed, raterEffects: a.raterEffects });
    if (!options.success) return { ok: false as const, message: options.error.issues[0]!.message };
    // The fit runs on worker threads (docs/mentat.md, "Fits in the background"): this answers at once.
    const job = startBankFitJob(db, { bankId: bank.id, options: options.data, actorId: me.id });
    return {
      ok: true as const,
      message: `Fit started (job ${job.id}, ${options.data.bootstrap} bootstrap refits); the labels appear here when it is done.`,
    };
  } catch (e) {
    if (e instanceof ServiceError) return { ok: false as const, message: e.message };
    throw e;
  }
}

export default function BankPage() {
  const { bank, questions, panel, datasets, fit, guidelines, job, refused } = useLoaderData<typeof loader>();
  const fitRunning = job?.status === "queued" || job?.status === "running";
  const result = useActionData<typeof action>();
  const busy = useNavigation().state !== "idle";
  return (
    <section>
      <ExpertAdminHead
        name={bank.name}
        result={result}
        aside={
          <span className="muted">
            {bank.numQuestions} questions · preference labels for {bank.preferenceDomains.join(", ") || "no domain"} (
            {bank.numRated} questions) · seed {bank.seed}
          </span>
        }
      />

      <h2>Experts</h2>
      <ExpertPanel
        panel={panel}
        total={bank.numRated}
        busy={busy}
        emptyText="Nobody rates this bank yet."
        everyoneText="Every active user with the rater role is on the panel. Give more users the rater role on the Users page."
        markDeactivated
      />

      <h2>Preference labels</h2>
      <FitJobProgress bankId={bank.id} job={job} />
      <div className="grid2">
        <div>
          <FitSummary fit={fit} />
        </div>
        <FitForm busy={busy || fitRunning} running={fitRunning} />
      </div>

      <h2 id="export">Variant sets and export</h2>
      {refused ? (
        <p className="notice warn" role="alert" data-testid="export-refused">
          {refused}
        </p>
      ) : null}
      <div className="grid2">
        <DatasetsTable bankId={bank.id} datasets={datasets} />
        <ExpandForm busy={busy} />
      </div>

      <GuidelinesEditor guidelines={guidelines} />

      <h2>Questions ({bank.numQuestions})</h2>
      <QuestionsTable questions={questions} fit={fit} />
    </section>
  );
}
