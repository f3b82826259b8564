import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { z } from "zod";
import { ActionResult } from "~/ui/admin-notices";
import {
  BucketSampleSection,
  CandidateJudgesSection,
  ExportsSection,
  RatersSection,
  ResponsesSection,
  SampleSection,
} from "~/judge-validation/ui/judge-set-sections";
import { BUCKET_SAMPLING_ORDER } from "~/judge-validation/domain/validation-set";
import { getDb } from "~/platform/db.server";
import { parseIntent } from "~/platform/intent";
import { requireById, requireForm, requireRole } from "~/accounts/guard.server";
import { listJudges } from "~/judge-validation/judge-candidates.server";
import { importJudgeFromForm, importResponsesFromForm, type UploadResult } from "~/judge-validation/judge-forms.server";
import { bucketOverview, drawSample } from "~/judge-validation/judge-sample.server";
import { getJudgeSet, SeedSchema, TargetsSchema, type BucketTargets } from "~/judge-validation/judge-sets.server";
import { listResponseImports } from "~/judge-validation/judge-responses.server";
import { judgeSampleWindow } from "~/judge-validation/judge-windows.server";
import { listSetRaters, setRatingOpen, startRating } from "~/judge-validation/judge-raters.server";
import { ServiceError } from "~/platform/service-error";
import { guidelinesAdmin } from "~/guidelines/guidelines.server";
import { GuidelinesEditor } from "~/guidelines/ui/guidelines-editor";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `${data?.set.name ?? "Validation set"} · Judge validation · Concord` },
];

function setOr404(param: string | undefined) {
  return requireById(param, (id) => getJudgeSet(getDb(), id), "No such validation set.");
}

export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const set = setOr404(params.setId);
  const db = getDb();
  return {
    set,
    buckets: bucketOverview(db, set.id),
    imports: listResponseImports(db, set.id),
    raters: listSetRaters(db, set.id),
    judges: listJudges(db, set.id),
    // One window of the sample, as the URL asks (docs/architecture.md, "Pages are windows").
    items: judgeSampleWindow(db, set.id, new URL(request.url).searchParams),
    guidelines: guidelinesAdmin(db, { scope: "judge_set", scopeId: set.id }),
  };
}

/** A bucket target left blank keeps the set's current target. */
const blankAsUnset = (v: unknown) => (v === "" ? undefined : v);

const ActionSchema = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal(["import", "judge"]) }),
  z.object({
    intent: z.literal("draw"),
    seed: SeedSchema,
    ...Object.fromEntries(
      BUCKET_SAMPLING_ORDER.map((b) => [`target_${b}`, z.preprocess(blankAsUnset, TargetsSchema.shape[b].optional())]),
    ),
  }),
  z.object({
    intent: z.literal("start"),
    raters: z.array(z.string().min(1)).min(3, "Choose at least three raters: each response goes to three people."),
    seed: SeedSchema,
  }),
  z.object({ intent: z.literal(["close", "reopen"]) }),
]);

type ActionResult =
  | { kind: "message"; ok: boolean; message: string }
  | { kind: "upload"; what: "responses" | "judge"; result: UploadResult };

export async function action({ request, params }: ActionFunctionArgs): Promise<ActionResult> {
  const me = await requireRole(request, "admin");
  const form = await requireForm(request, me);
  const set = setOr404(params.setId);
  const db = getDb();
  const fail = (message: string): ActionResult => ({ kind: "message", ok: false, message });
  const parsed = parseIntent(form, ActionSchema, { arrays: ["raters"] });
  if (!parsed.ok) return fail(parsed.message);
  const a = parsed.data;
  try {
    switch (a.intent) {
      case "import":
        return {
          kind: "upload",
          what: "responses",
          result: await importResponsesFromForm(db, form, { actorId: me.id, setName: set.name }),
        };
      case "judge":
        return {
          kind: "upload",
          what: "judge",
          result: await importJudgeFromForm(db, form, { actorId: me.id, setId: set.id }),
        };
      case "draw": {
        const fields = a as Record<string, unknown>;
        const targets = Object.fromEntries(
          BUCKET_SAMPLING_ORDER.filter((b) => fields[`target_${b}`] !== undefined).map((b) => [
            b,
            fields[`target_${b}`],
          ]),
        ) as Partial<BucketTargets>;
        const r = drawSample(db, { setId: set.id, seed: a.seed, targets, actorId: me.id });
        return {
          kind: "message",
          ok: true,
          message: `${r.redrawn ? "Re-drew" : "Drew"} the sample: ${r.items} responses (seed ${a.seed}).`,
        };
      }
      case "start": {
        const r = startRating(db, { setId: set.id, raterIds: a.raters, seed: a.seed, actorId: me.id });
        return {
          kind: "message",
          ok: true,
          message: `Rating started: ${r.items} responses, ${r.assignments} ratings assigned.`,
        };
      }
      case "close":
      case "reopen":
        setRatingOpen(db, { setId: set.id, open: a.intent === "reopen", actorId: me.id });
        return {
          kind: "message",
          ok: true,
          message: a.intent === "close" ? "Rating closed: labels are final." : "Rating reopened.",
        };
    }
  } catch (e) {
    if (e instanceof ServiceError) return fail(e.message);
    throw e;
  }
}

export default function JudgeSetPage() {
  const { set, buckets, imports, raters, judges, items, guidelines } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const busy = useNavigation().state !== "idle";
  const upload = (what: "responses" | "judge") =>
    result?.kind === "upload" && result.what === what ? result.result : null;
  return (
    <section>
      <p>
        <Link to="/admin/judge-validation">Judge validation</Link> ›
      </p>
      <div className="row">
        <h1>{set.name}</h1>
        <span className={`badge ${set.status}`} data-testid="set-status">
          {set.status}
        </span>
        <span className="spacer" />
        <Link to={`/admin/judge-validation/${set.id}/report`} className="button secondary">
          Report: majority and judge scores
        </Link>
      </div>
      <ActionResult result={result?.kind === "message" ? result : null} />

      <ResponsesSection set={set} imports={imports} upload={upload("responses")} busy={busy} />
      <BucketSampleSection set={set} buckets={buckets} busy={busy} />
      <RatersSection set={set} raters={raters} busy={busy} />
      <GuidelinesEditor guidelines={guidelines} />
      {set.items > 0 ? (
        <>
          <ExportsSection set={set} />
          <CandidateJudgesSection judges={judges} upload={upload("judge")} busy={busy} />
          <SampleSection set={set} items={items} buckets={buckets.map((b) => b.bucket)} />
        </>
      ) : null}
    </section>
  );
}
