import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useActionData, useLoaderData, useNavigation, useSearchParams } from "@remix-run/react";
import { z } from "zod";
import { ActionResult, ImportedNotice } from "~/ui/admin-notices";
import {
  AdjudicationModeForm,
  AnnotatorsTable,
  AssignForm,
  AssignmentsSection,
  BulkReassignForm,
  CasesTable,
  MODE_LABELS,
} from "~/annotation/ui/study-sections";
import { getDb } from "~/platform/db.server";
import { parseIntent } from "~/platform/intent";
import { requireById, requireForm, requireRole } from "~/accounts/guard.server";
import {
  assignmentsWindow,
  autoAssign,
  bulkReassign,
  bulkReassignPlan,
  listStudyAnnotators,
  reassign,
} from "~/annotation/assignments.server";
import { getStudy, setAdjudicationMode, studyCasesWindow } from "~/annotation/studies.server";
import { ADJUDICATION_MODES } from "~/accounts/roles";
import { ServiceError } from "~/platform/service-error";
import { guidelinesAdmin } from "~/guidelines/guidelines.server";
import { GuidelinesEditor } from "~/guidelines/ui/guidelines-editor";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.study.name ?? "Study"} · Concord` }];

function studyOr404(param: string | undefined) {
  return requireById(param, (id) => getStudy(getDb(), id), "No such study.");
}

export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const study = studyOr404(params.studyId);
  const db = getDb();
  // Windows of the cases and the assignments, as the URL asks (docs/architecture.md, "Pages are windows").
  const search = new URL(request.url).searchParams;
  const annotators = listStudyAnnotators(db, study.id);
  const from = search.get("move_from") ?? "";
  const to = search.get("move_to") ?? "";
  const known = (id: string) => annotators.some((a) => a.id === id);
  return {
    study,
    cases: studyCasesWindow(db, study.id, search),
    annotators,
    assignments: assignmentsWindow(db, study.id, search),
    bulkPlan: known(from) && known(to) ? { from, to, ...bulkReassignPlan(db, { studyId: study.id, from, to }) } : null,
    guidelines: guidelinesAdmin(db, { scope: "safe_psych", scopeId: study.id }),
  };
}

const ActionSchema = z.discriminatedUnion("intent", [
  z.object({
    intent: z.literal("assign"),
    annotators: z
      .array(z.string().min(1))
      .min(2, "Choose at least two annotators: each case goes to two different people."),
    seed: z.coerce
      .number({ message: "The seed must be a whole number." })
      .int("The seed must be a whole number.")
      .min(0)
      .max(2 ** 31),
  }),
  z.object({ intent: z.literal("mode"), mode: z.enum(ADJUDICATION_MODES) }),
  z.object({
    intent: z.literal("reassign"),
    assignmentId: z.coerce.number().int().positive(),
    to: z.string().min(1, "Choose an annotator."),
  }),
  z.object({
    intent: z.literal("reassign_all"),
    from: z.string().min(1, "Choose whose work moves."),
    to: z.string().min(1, "Choose an annotator."),
    expected: z.coerce.number().int().min(0),
  }),
]);

export async function action({ request, params }: ActionFunctionArgs) {
  const me = await requireRole(request, "admin");
  const form = await requireForm(request, me);
  const study = studyOr404(params.studyId);
  const parsed = parseIntent(form, ActionSchema, { arrays: ["annotators"] });
  if (!parsed.ok) return { ok: false as const, message: parsed.message };
  try {
    if (parsed.data.intent === "assign") {
      const r = autoAssign(getDb(), {
        studyId: study.id,
        annotatorIds: parsed.data.annotators,
        seed: parsed.data.seed,
        actorId: me.id,
      });
      return {
        ok: true as const,
        message: r.created
          ? `Assigned ${r.cases} cases (${r.created} assignments, seed ${parsed.data.seed}).`
          : "Every case already has two annotators.",
      };
    }
    if (parsed.data.intent === "mode") {
      setAdjudicationMode(getDb(), { studyId: study.id, mode: parsed.data.mode, actorId: me.id });
      return { ok: true as const, message: `Adjudication mode: ${MODE_LABELS[parsed.data.mode]}.` };
    }
    if (parsed.data.intent === "reassign_all") {
      const r = bulkReassign(getDb(), { studyId: study.id, ...parsed.data, actorId: me.id });
      return {
        ok: true as const,
        message: `Moved ${r.moved} assignment(s)${r.blocked ? `; ${r.blocked} stayed (already on their case)` : ""}.`,
      };
    }
    reassign(getDb(), {
      assignmentId: parsed.data.assignmentId,
      toAnnotatorId: parsed.data.to,
      actorId: me.id,
      studyId: study.id,
    });
    return { ok: true as const, message: "Reassigned." };
  } catch (e) {
    if (e instanceof ServiceError) return { ok: false as const, message: e.message };
    throw e;
  }
}

export default function StudyPage() {
  const { study, cases, annotators, assignments, bulkPlan, guidelines } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const busy = useNavigation().state !== "idle";
  const [params] = useSearchParams();
  const imported = params.get("created");
  return (
    <section>
      <p>
        <Link to="/admin">Studies</Link> ›
      </p>
      <div className="row">
        <h1>{study.name}</h1>
        <span className="spacer" />
        <Link to={`/admin/studies/${study.id}/progress`} className="button secondary">
          Progress and export
        </Link>
        <Link to={`/admin/studies/${study.id}/stats`} className="button secondary">
          Agreement statistics
        </Link>
        <Link to={`/admin/studies/${study.id}/quality`} className="button secondary">
          Rater quality
        </Link>
        <Link to={`/admin/import?study=${encodeURIComponent(study.name)}`} className="button secondary">
          Import more notes
        </Link>
      </div>
      <ImportedNotice counts={imported !== null ? [imported, params.get("updated"), params.get("unchanged")] : null} />
      <ActionResult result={result} testId="assign-result" />

      <h2>Annotators</h2>
      <div className="grid2">
        <AnnotatorsTable annotators={annotators} />
        <AssignForm annotators={annotators} busy={busy} />
      </div>

      <h2>Assignments ({assignments.total})</h2>
      <BulkReassignForm annotators={annotators} plan={bulkPlan} busy={busy} />
      <AssignmentsSection assignments={assignments} annotators={annotators} busy={busy} />

      <h2>Adjudication</h2>
      <AdjudicationModeForm mode={study.adjudicationMode} busy={busy} />

      <GuidelinesEditor guidelines={guidelines} />

      <h2>Cases ({cases.total})</h2>
      <CasesTable cases={cases} />
    </section>
  );
}
