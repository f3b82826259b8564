import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { z } from "zod";
import { ActionResult } from "~/ui/admin-notices";
import { percent } from "~/screening/ui/screening-figures";
import {
  ImportForm,
  ImportReport,
  NextStep,
  OpenRoundForm,
  ReleaseCard,
  RoundsSection,
  ScreenCounts,
  SettingsForm,
} from "~/screening/ui/screening-admin";
import { parseVocabulary } from "~/screening/domain/screening-import";
import { getDb } from "~/platform/db.server";
import { importBytesProblem, importLimits, refusalLine } from "~/formats/import-contract";
import { formObject, parseForm } from "~/platform/forms";
import { parseIntent } from "~/platform/intent";
import { invariantFound, requireForm, requireRole } from "~/accounts/guard.server";
import { parseId } from "~/platform/forms";
import { ScreeningSettingsSchema, updateScreeningSettings } from "~/screening/screening.server";
import {
  importScreeningFiles,
  type ScreeningFile,
  type ScreeningImportReport,
} from "~/screening/screening-import.server";
import { getStudyOverview, openRound, suggestSeed } from "~/screening/screening-rounds.server";
import { exportScreeningRelease } from "~/screening/screening-release.server";
import { ServiceError } from "~/platform/service-error";
import { guidelinesAdmin } from "~/guidelines/guidelines.server";
import { GuidelinesEditor, InclusionCriterionForm } from "~/guidelines/ui/guidelines-editor";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `${data?.study.name ?? "Screening study"} · Concord` },
];

async function overviewOr404(param: string | undefined) {
  const id = parseId(param);
  return invariantFound(id === null ? null : await getStudyOverview(getDb(), id), "No such screening study.");
}

export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const overview = await overviewOr404(params.studyId);
  // After a refused download (the files route sends the admin back here): the reason, as it stands now.
  const refusal = new URL(request.url).searchParams.get("refused")
    ? exportScreeningRelease(getDb(), {
        studyId: overview.study.id,
        incompleteHint: "use the provisional export of the release card",
      })
    : null;
  return {
    ...overview,
    refused: refusal && !refusal.ok ? refusal.message : null,
    suggestedSeed: suggestSeed(),
    guidelines: guidelinesAdmin(getDb(), { scope: "screening", scopeId: overview.study.id }),
  };
}

const OpenRoundSchema = z.object({
  reviewers: z.array(z.string().min(1)).min(1, "Choose the reviewers."),
  seed: z.coerce
    .number({ message: "The seed must be a whole number." })
    .int("The seed must be a whole number.")
    .min(0, "The seed must be a whole number ≥ 0.")
    .max(2 ** 53 - 1),
  controls: z.coerce
    .number({ message: "Give the number of controls." })
    .int()
    .min(1, "A round needs at least one control."),
});

const ActionSchema = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal(["import", "check"]) }),
  OpenRoundSchema.extend({ intent: z.literal("open_round") }),
  // The settings' rules span several fields (a refined schema), so they are checked in their branch.
  z.object({ intent: z.literal("settings") }),
]);

type ActionResult =
  | { intent: "import"; report: ScreeningImportReport; dryRun: boolean }
  | { intent: "open_round" | "settings"; ok: boolean; message: string; errors?: Record<string, string> };

async function fileOf(
  form: FormData,
  name: string,
  format: string,
): Promise<(ScreeningFile & { bytes: Uint8Array }) | undefined> {
  const file = form.get(name);
  if (!(file instanceof File) || file.size === 0) return undefined;
  return {
    bytes: new Uint8Array(await file.arrayBuffer()),
    filename: file.name,
    format: format === "csv" || format === "jsonl" ? format : undefined,
  };
}

export async function action({ request, params }: ActionFunctionArgs): Promise<ActionResult> {
  const me = await requireRole(request, "admin");
  const form = await requireForm(request, me);
  const { study } = await overviewOr404(params.studyId);
  const db = getDb();
  const parsed = parseIntent(form, ActionSchema, { arrays: ["reviewers"] });
  // Only the round's form has fields checked here.
  if (!parsed.ok) return { intent: "open_round", ok: false, message: parsed.message, errors: parsed.errors };
  const a = parsed.data;
  const intent = a.intent;
  try {
    if (a.intent === "import" || a.intent === "check") {
      const format = String(form.get("format") ?? "auto");
      const files = {
        items: await fileOf(form, "items", format),
        labels: await fileOf(form, "labels", format),
        tiers: await fileOf(form, "tiers", format),
      };
      if (!files.items && !files.labels && !files.tiers)
        return { intent: "settings", ok: false, message: "Choose at least one file to import." };
      // The import contract (docs/reliability.md, "The import contract"): size, line length, NUL.
      for (const f of [files.items, files.labels, files.tiers]) {
        if (!f) continue;
        const json = (f.format ?? (/\.csv$/i.test(f.filename) ? "csv" : "jsonl")) === "jsonl";
        const problem = importBytesProblem(f.bytes, importLimits("screening"), { json });
        if (problem)
          return {
            intent: "settings",
            ok: false,
            message: `${refusalLine(f.filename, problem)} Nothing was imported.`,
          };
      }
      const report = importScreeningFiles(db, {
        studyId: study.id,
        ...files,
        actorId: me.id,
        dryRun: a.intent === "check",
      });
      return { intent: "import", report, dryRun: a.intent === "check" };
    }
    if (a.intent === "open_round") {
      const r = openRound(db, {
        studyId: study.id,
        reviewerIds: a.reviewers,
        seed: a.seed,
        controls: a.controls,
        actorId: me.id,
      });
      return {
        intent: a.intent,
        ok: true,
        message: `Round ${r.number} is open: ${r.candidates} items and ${r.controls} concealed controls in one order (seed ${r.seed}).`,
      };
    }
    const settings = parseForm(ScreeningSettingsSchema, {
      ...formObject(form),
      categories: parseVocabulary(String(form.get("categories") ?? "")),
    });
    if (!settings.ok)
      return { intent: "settings", ok: false, message: Object.values(settings.errors)[0]!, errors: settings.errors };
    updateScreeningSettings(db, { studyId: study.id, settings: settings.data, actorId: me.id });
    return { intent: "settings", ok: true, message: "Settings saved." };
  } catch (e) {
    if (e instanceof ServiceError)
      return { intent: intent === "open_round" ? "open_round" : "settings", ok: false, message: e.message };
    throw e;
  }
}

export default function ScreeningStudyPage() {
  const data = useLoaderData<typeof loader>();
  const { study } = data;
  const result = useActionData<typeof action>();
  const busy = useNavigation().state !== "idle";

  return (
    <section>
      <p>
        <Link to="/admin/screening">Screening reviews</Link> ›
      </p>
      <h1>{study.name}</h1>
      {study.description ? <p className="muted">{study.description}</p> : null}
      <p className="muted">
        {study.reviewersPerRound} reviewers per round; an item is included with ≥ {study.inclusionVotes} of{" "}
        {study.reviewersPerRound} relevant votes; a control-inclusion rate above {percent(study.controlThreshold)} opens
        a recall round.
      </p>

      <ActionResult result={result && result.intent !== "import" ? result : null} />
      {result && result.intent === "import" ? <ImportReport report={result.report} dryRun={result.dryRun} /> : null}

      <NextStep data={data} />
      <ScreenCounts data={data} />
      <RoundsSection data={data} />
      <OpenRoundForm data={data} busy={busy} />
      {data.refused ? (
        <p className="notice warn" role="alert" id="release" data-testid="export-refused">
          Export refused: {data.refused}
        </p>
      ) : null}
      <ReleaseCard data={data} />
      <ImportForm data={data} busy={busy} />
      <SettingsForm data={data} busy={busy} />
      <h2>Inclusion criterion</h2>
      <InclusionCriterionForm studyId={study.id} criterion={study.inclusionCriterion} />
      <GuidelinesEditor guidelines={data.guidelines} />
    </section>
  );
}
