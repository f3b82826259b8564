import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data, redirect } from "@remix-run/node";
import { unlessOutOfSpace } from "~/platform/storage-errors.server";
import { Form, Link, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { useState } from "react";
import { z } from "zod";
import { LabelFields, type LabelValues } from "~/annotation/ui/label-fields";
import { MISSING_INFO, type CaseLabel } from "~/gold/domain/gold";
import { SECTION_TITLES, type SectionKind } from "~/annotation/domain/sections";
import { getDb } from "~/platform/db.server";
import { parseId } from "~/platform/forms";
import { requireById, requireForm, requireRole } from "~/accounts/guard.server";
import { icd10Index } from "~/icd10/icd10.server";
import { Csrf } from "~/root";
import {
  decide,
  getAdjudicationCase,
  LabelInputSchema,
  recordIndependent,
  type AdjudicationResult,
} from "~/adjudication/adjudication.server";
import { guidelinesForItem } from "~/guidelines/guidelines.server";
import { GuidelinesPanel } from "~/work-items/ui/guidelines-panel";

export const meta: MetaFunction = () => [{ title: "Adjudicate · Concord" }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const user = await requireRole(request, "adjudicator");
  const view = requireById(params.caseId, (caseId) => getAdjudicationCase(getDb(), { userId: user.id, caseId }));
  const titles: Record<string, string> = {};
  const codes = [view.independent, view.final?.label, view.annotations?.A.label, view.annotations?.B.label];
  for (const l of codes)
    if (l?.sufficiency === "sufficient") titles[l.icd10] = icd10Index().lookup(l.icd10)?.title ?? "";
  return { view, titles, guidelines: guidelinesForItem(getDb(), "adjudication", view.case.id) };
}

const PostSchema = z.object({
  intent: z.enum(["independent", "decide"]),
  label: z.string().max(20_000),
  rationale: z.string().max(10_000).default(""),
  outcomeVersion: z.coerce.number().int().min(0),
});

export async function action({ request, params }: ActionFunctionArgs) {
  const user = await requireRole(request, "adjudicator");
  const form = await requireForm(request, user);
  const caseId = parseId(params.caseId);
  const post = PostSchema.safeParse(Object.fromEntries(form));
  const bad: AdjudicationResult = {
    ok: false,
    status: 422,
    message: "The form was malformed. Reload the page.",
    errors: {},
  };
  // Refusals answer with their real status (409 when someone else decided first), not a 200 (docs/security.md).
  if (caseId === null || !post.success) return data(bad, 422);
  let raw: unknown;
  try {
    raw = JSON.parse(post.data.label);
  } catch {
    return data(bad, 422);
  }
  const label = LabelInputSchema.safeParse(raw);
  if (!label.success) return data(bad, 422);
  const db = getDb();
  const result = unlessOutOfSpace(() =>
    post.data.intent === "independent"
      ? recordIndependent(db, { userId: user.id, caseId, label: label.data })
      : decide(db, {
          userId: user.id,
          caseId,
          label: label.data,
          rationale: post.data.rationale,
          outcomeVersion: post.data.outcomeVersion,
        }),
  );
  if (!result.ok) return data(result, result.status);
  if (result.status === "decided") {
    const view = getAdjudicationCase(db, { userId: user.id, caseId });
    return redirect(`/adjudicate?decided=${encodeURIComponent(view?.case.externalId ?? "")}`);
  }
  return redirect(`/adjudicate/${caseId}`);
}

function toValues(label: CaseLabel | null): LabelValues {
  if (!label) return { sufficiency: "", icd10: "", earliestSection: null, missingInfo: [], missingOther: "" };
  return label.sufficiency === "sufficient"
    ? {
        sufficiency: "sufficient",
        icd10: label.icd10,
        earliestSection: label.earliestSection,
        missingInfo: [],
        missingOther: "",
      }
    : {
        sufficiency: "insufficient",
        icd10: "",
        earliestSection: null,
        missingInfo: label.missingInfo,
        missingOther: label.missingInfoOther ?? "",
      };
}

function LabelSummary({ label, titles }: { label: CaseLabel; titles: Record<string, string> }) {
  if (label.sufficiency === "sufficient")
    return (
      <dl className="kv">
        <dt>Sufficiency</dt>
        <dd>sufficient</dd>
        <dt>ICD-10</dt>
        <dd>
          <code>{label.icd10}</code> {titles[label.icd10]}
        </dd>
        <dt>Earliest section</dt>
        <dd>{label.earliestSection}</dd>
      </dl>
    );
  return (
    <dl className="kv">
      <dt>Sufficiency</dt>
      <dd>insufficient</dd>
      <dt>Missing</dt>
      <dd>
        {label.missingInfo.map((k) => MISSING_INFO.find((m) => m.key === k)?.label ?? k).join("; ")}
        {label.missingInfoOther ? ` (${label.missingInfoOther})` : ""}
      </dd>
    </dl>
  );
}

export default function AdjudicateCase() {
  const { view, titles, guidelines } = useLoaderData<typeof loader>();
  return <Workspace key={`${view.case.id}:${view.phase}`} view={view} titles={titles} guidelines={guidelines} />;
}

function Workspace({ view, titles, guidelines }: ReturnType<typeof useLoaderData<typeof loader>>) {
  const result = useActionData<typeof action>();
  const busy = useNavigation().state !== "idle";
  const [values, setValues] = useState<LabelValues>(toValues(view.final?.label ?? view.independent));
  const [rationale, setRationale] = useState(view.final?.rationale ?? "");
  const errors = result && !result.ok && "errors" in result ? result.errors : {};
  const update = (patch: Partial<LabelValues>) => setValues((v) => ({ ...v, ...patch }));
  const independentPhase = view.phase === "independent";
  const intent = independentPhase && view.mode === "two_phase" ? "independent" : "decide";
  return (
    <section>
      <div className="row">
        <Link to="/adjudicate">Queue</Link>
        <span className="muted">›</span>
        <h1 style={{ margin: 0 }}>
          Case {view.case.externalId} <small className="muted">({view.case.studyName})</small>
        </h1>
        <span className="badge">disagreement on {view.reason}</span>
      </div>
      <GuidelinesPanel guidelines={guidelines} />
      <div className="workspace">
        <div aria-label="Clinical note">
          {view.case.sections.map((s) => (
            <article key={s.order} className="note-section" data-section={s.order}>
              <h3>
                <span className="num">{s.order}</span> {SECTION_TITLES[s.kind as SectionKind] ?? s.kind}
              </h3>
              <p>{s.content}</p>
            </article>
          ))}
        </div>
        <aside>
          {view.annotations ? (
            <div className="card" data-testid="annotations">
              {(["A", "B"] as const).map((k) => (
                <div key={k} data-annotator={k}>
                  <h3>Annotator {k}</h3>
                  <LabelSummary label={view.annotations![k].label} titles={titles} />
                  {view.annotations![k].notes ? <p className="muted">Notes: {view.annotations![k].notes}</p> : null}
                </div>
              ))}
            </div>
          ) : null}
          {view.independent && view.mode === "two_phase" ? (
            <div className="card" data-testid="independent">
              <h3 style={{ marginTop: 0 }}>Your independent judgement</h3>
              <LabelSummary label={view.independent} titles={titles} />
            </div>
          ) : null}
          {view.phase === "decided" && view.final ? (
            <div className="card">
              <h3 style={{ marginTop: 0 }}>Your decision (the reference label)</h3>
              <LabelSummary label={view.final.label} titles={titles} />
              {view.final.rationale ? <p>Rationale: {view.final.rationale}</p> : null}
            </div>
          ) : (
            <Form method="post" className="card">
              <Csrf />
              <input type="hidden" name="label" value={JSON.stringify(values)} />
              <input type="hidden" name="outcomeVersion" value={view.outcomeVersion} />
              <h3 style={{ marginTop: 0 }}>
                {intent === "independent"
                  ? "Step 1 of 2: your independent judgement"
                  : view.mode === "two_phase"
                  ? "Step 2 of 2: final decision"
                  : "Decision"}
              </h3>
              <p className="muted">
                {intent === "independent"
                  ? "Read the note and record your own label. The two annotations are shown after you record it, and this judgement cannot be changed."
                  : view.mode === "two_phase"
                  ? "Confirm your judgement or revise it. A rationale is required if the final label differs from your independent one."
                  : "Your decision becomes the case's reference label."}
              </p>
              <LabelFields values={values} update={update} sections={view.case.sections} errors={errors} />
              {intent === "decide" ? (
                <>
                  <label htmlFor="rationale">Rationale</label>
                  <textarea
                    id="rationale"
                    name="rationale"
                    value={rationale}
                    onChange={(e) => setRationale(e.target.value)}
                  />
                  {errors.rationale ? (
                    <p className="field-error" role="alert">
                      {errors.rationale}
                    </p>
                  ) : null}
                </>
              ) : null}
              {result && !result.ok ? (
                <p className="notice bad" role="alert" data-testid="form-message">
                  {result.message}
                </p>
              ) : null}
              <button type="submit" name="intent" value={intent} disabled={busy}>
                {intent === "independent" ? "Record my judgement and show the annotations" : "Decide"}
              </button>
            </Form>
          )}
        </aside>
      </div>
    </section>
  );
}
