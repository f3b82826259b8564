import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data, redirect } from "@remix-run/node";
import { saveResponse, unlessOutOfSpace } from "~/platform/storage-errors.server";
import { Form, Link, useActionData, useLoaderData, useNavigation, useSearchParams } from "@remix-run/react";
import { useRef } from "react";
import { z } from "zod";
import { LabelFields, useLabelFieldFocus } from "~/annotation/ui/label-fields";
import { MISSING_INFO, type CaseLabel } from "~/labels/labels";
import { SECTION_TITLES, type SectionKind } from "~/annotation/domain/sections";
import { compareLabels } from "~/adjudication/domain/label-differences";
import { getDb } from "~/platform/db.server";
import { parseId } from "~/platform/forms";
import { parseIntent } from "~/platform/intent";
import { MAX_ACTIVE_MS_PER_SAVE } from "~/work-items/domain/active-time";
import { requireById, requireForm, requireRole } from "~/accounts/guard.server";
import { icd10Index } from "~/icd10/icd10.server";
import { Csrf, useRootData } from "~/ui/root-data";
import { answerDraftPost } from "~/work-items/workspace-route.server";
import { useWorkspaceKeys } from "~/work-items/ui/shortcuts";
import { useSaveState } from "~/work-items/ui/use-save-state";
import { ReloadButton, SaveProblem, SaveStateLine } from "~/work-items/ui/draft-footer";
import { ShortcutsCard, WorkspaceHeader } from "~/work-items/ui/workspace-header";
import type { SaveResult } from "~/work-items/domain/work-item";
import {
  AdjudicationDraftSchema,
  decide,
  getAdjudicationCase,
  LabelInputSchema,
  nextAfterDecision,
  recordIndependent,
  saveAdjudicationDraft,
  type AdjudicationDraftValues,
  type AdjudicationResult,
} from "~/adjudication/adjudication.server";
import { guidelinesForItem } from "~/guidelines/guidelines.server";
import { GuidelinesPanel } from "~/work-items/ui/guidelines-panel";
import { Time } from "~/ui/time";

export const meta: MetaFunction = () => [{ title: "Adjudicate · Concord" }];
// A refusal (409: decided by someone else) stays on this page with the user's input, instead of a reload that would
// answer 404 for a case that has left the queue (docs/architecture.md, "Saving under load").
export { clientAction, headers, shouldRevalidate } from "~/work-items/ui/save-action";

export async function loader({ request, params }: LoaderFunctionArgs) {
  const user = await requireRole(request, "adjudicator");
  // The same answer for every id that is not in the queue (nothing revealed), but one that says the likely reason.
  const view = requireById(
    params.caseId,
    (caseId) => getAdjudicationCase(getDb(), { userId: user.id, caseId }),
    "This case is not in your adjudication queue: another adjudicator may have decided it, or it is not yours to adjudicate.",
  );
  const titles: Record<string, string> = {};
  const codes = [view.independent, view.final?.label, view.annotations?.A.label, view.annotations?.B.label];
  for (const l of codes)
    if (l?.sufficiency === "sufficient") titles[l.icd10] = icd10Index().lookup(l.icd10)?.title ?? "";
  return { view, titles, guidelines: guidelinesForItem(getDb(), "adjudication", view.case.id, user.id) };
}

const PostFields = {
  label: z.string().max(20_000),
  rationale: z.string().max(10_000).default(""),
  outcomeVersion: z.coerce.number().int().min(0),
  // Time on task since the last draft save, set as the form is sent (docs/statistics.md, "Time on task").
  activeMs: z.coerce.number().int().min(0).max(MAX_ACTIVE_MS_PER_SAVE).default(0),
};
/** The two buttons of the page: record the independent judgement, or decide (docs/safe-psych.md#disagreement-and-adjudication). */
const PostSchema = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal("independent"), ...PostFields }),
  z.object({ intent: z.literal("decide"), ...PostFields }),
]);

export async function action({ request, params }: ActionFunctionArgs) {
  const user = await requireRole(request, "adjudicator");
  const form = await requireForm(request, user);
  // Drafts, saved as the adjudicator works (the same post as every workspace's draft hook).
  if (form.get("intent") === "draft")
    return answerDraftPost(form, user, params.caseId, {
      schema: AdjudicationDraftSchema,
      maxLength: 40_000,
      save: (db, { id: caseId, ...input }) => saveAdjudicationDraft(db, { ...input, caseId }),
    });
  const caseId = parseId(params.caseId);
  const post = parseIntent(form, PostSchema);
  const bad: AdjudicationResult = {
    ok: false,
    status: 422,
    message: "The form was malformed. Reload the page.",
    errors: {},
  };
  // Refusals answer with their real status (409 when someone else decided first), not a 200 (docs/security.md).
  if (caseId === null || !post.ok) return data(bad, 422);
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
      ? recordIndependent(db, {
          userId: user.id,
          caseId,
          label: label.data,
          outcomeVersion: post.data.outcomeVersion,
          activeMs: post.data.activeMs,
        })
      : decide(db, {
          userId: user.id,
          caseId,
          label: label.data,
          rationale: post.data.rationale,
          outcomeVersion: post.data.outcomeVersion,
          activeMs: post.data.activeMs,
        }),
  );
  if (!result.ok) return saveResponse(result);
  if (result.status === "decided") {
    // Like submit-and-next in every workspace: on to the next case of the queue, or the queue when none is left.
    const view = getAdjudicationCase(db, { userId: user.id, caseId });
    const next = nextAfterDecision(db, user.id, caseId);
    const decided = `decided=${encodeURIComponent(view?.case.externalId ?? "")}`;
    return redirect(next !== null ? `/adjudicate/${next}?${decided}` : `/adjudicate?${decided}`);
  }
  return redirect(`/adjudicate/${caseId}`);
}

function toValues(label: CaseLabel | null, rationale: string): AdjudicationDraftValues {
  if (!label)
    return { sufficiency: "", icd10: "", earliestSection: null, missingInfo: [], missingOther: "", rationale };
  return label.sufficiency === "sufficient"
    ? {
        sufficiency: "sufficient",
        icd10: label.icd10,
        earliestSection: label.earliestSection,
        missingInfo: [],
        missingOther: "",
        rationale,
      }
    : {
        sufficiency: "insufficient",
        icd10: "",
        earliestSection: null,
        missingInfo: label.missingInfo,
        missingOther: label.missingInfoOther ?? "",
        rationale,
      };
}

/**
 * After the reveal: Annotator A, Annotator B and the adjudicator's own independent judgement field by field, the
 * fields on which they differ highlighted.
 */
function Differences({
  columns,
  titles,
}: {
  columns: { name: string; label: CaseLabel }[];
  titles: Record<string, string>;
}) {
  const rows = compareLabels(columns.map((c) => c.label));
  return (
    <table className="differences" data-testid="differences">
      <caption className="muted" style={{ textAlign: "left" }}>
        Field by field; <mark>highlighted</mark>: the labels differ.
      </caption>
      <thead>
        <tr>
          <th scope="col">Field</th>
          {columns.map((c) => (
            <th scope="col" key={c.name}>
              {c.name}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr
            key={r.field}
            data-field={r.field}
            data-differs={r.differs ? "true" : "false"}
            className={r.differs ? "differs" : undefined}
          >
            <th scope="row">
              {r.title}
              {r.differs ? <span className="visually-hidden"> (differs)</span> : null}
            </th>
            {r.values.map((v, i) => (
              <td key={columns[i]!.name}>
                {r.field === "icd10" && v !== "—" ? (
                  <>
                    <code>{v}</code> {titles[v]}
                  </>
                ) : (
                  v
                )}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
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
  const csrf = useRootData()?.user?.csrf ?? "";
  const decided = view.phase === "decided";
  const independentPhase = view.phase === "independent";
  const intent = independentPhase && view.mode === "two_phase" ? "independent" : "decide";
  // Drafts through the engine, like annotation: saved shortly after each change, restored from the loader. The
  // step itself is recorded by the form below (recording the judgement or deciding removes the draft).
  const draft = useSaveState<AdjudicationDraftValues, SaveResult>({
    initial:
      view.draft?.values ??
      toValues(
        view.final?.label ?? view.revision?.previous?.label ?? view.independent,
        view.final?.rationale ?? view.revision?.previous?.rationale ?? "",
      ),
    version: view.draft?.version ?? 0,
    updatedAt: view.draft?.updatedAt ?? null,
    csrf,
    mode: decided ? "readOnly" : "draft",
    check: () => ({}),
    incompleteMessage: "",
    onSubmitted: () => {},
  });
  const { values, update } = draft;
  const errors = result && !result.ok && "errors" in result ? result.errors : {};
  const formRef = useRef<HTMLFormElement>(null);
  const activeMsRef = useRef<HTMLInputElement>(null);
  const submitRef = useRef<HTMLButtonElement>(null);
  const { codeInput, missingRef, sufficiencyRef, focusMissing, searchCode } = useLabelFieldFocus();
  const T = view.case.sections.length;
  const [search] = useSearchParams();
  const decidedNow = search.get("decided");
  const stateBadge = decided
    ? { value: "locked", label: "decided" }
    : view.reopened
      ? { value: "reopened", label: "reopened" }
      : intent === "independent"
        ? { value: values.sufficiency ? "draft" : "not_started", label: "step 1: independent" }
        : { value: "draft", label: view.mode === "two_phase" ? "step 2: decision" : "to decide" };

  // Keyboard (app/work-items/domain/keymap.ts): the annotator's label keys, R the rationale; next, Ctrl+Enter (record
  // the step) and the rest as in every workspace.
  useWorkspaceKeys(
    () => {
      if (!decided && !busy) formRef.current?.requestSubmit(submitRef.current);
    },
    (key) => {
      if (decided) return false;
      const current = draft.latest();
      if (key === "s") update({ sufficiency: "sufficient" });
      else if (key === "i") update({ sufficiency: "insufficient" });
      else if (/^[1-5]$/.test(key) && Number(key) <= T && current.sufficiency === "sufficient")
        update({ earliestSection: Number(key) });
      else if (key === "m") {
        if (current.sufficiency !== "insufficient") update({ sufficiency: "insufficient" });
        focusMissing();
      } else if (key === "r" && intent === "decide") document.getElementById("rationale")?.focus();
      else return false;
      return true;
    },
    {
      nav: {
        next: view.nextCaseId !== null ? `/adjudicate/${view.nextCaseId}` : null,
        previous: view.previousCaseId !== null ? `/adjudicate/${view.previousCaseId}` : null,
        search: () => {
          if (!decided) searchCode(draft.latest().sufficiency);
        },
      },
    },
  );

  const { rationale, ...label } = values;
  const columns =
    view.annotations !== null
      ? [
          { name: "Annotator A", label: view.annotations.A.label },
          { name: "Annotator B", label: view.annotations.B.label },
          ...(view.independent && view.mode === "two_phase"
            ? [{ name: "Your independent judgement", label: view.independent }]
            : []),
        ]
      : [];
  return (
    <section>
      <WorkspaceHeader
        list={{ to: "/adjudicate", label: "Queue" }}
        title={
          <>
            Case {view.case.externalId} <small className="muted">({view.case.studyName})</small>
          </>
        }
        // Beside the state on a second line, so that the header of the reveal fits one line at 1280 px.
        detail={view.reason ? <span className="badge">disagreement on {view.reason}</span> : null}
        state={{ value: stateBadge.value, label: stateBadge.label, testId: "case-state" }}
        progress={view.progress}
        doneWord="decided"
        links={[
          { label: "Previous", to: view.previousCaseId !== null ? `/adjudicate/${view.previousCaseId}` : null },
          { label: "Next", to: view.nextCaseId !== null ? `/adjudicate/${view.nextCaseId}` : null },
        ]}
      />
      {decidedNow ? (
        <p className="notice ok" role="status" data-testid="decided-notice">
          Decision recorded for case {decidedNow}. This is the next case of your queue.
        </p>
      ) : null}
      {view.reopened ? (
        <div className="notice warn" role="note" data-testid="reopened">
          <strong>Reopened</strong> by the study manager on <Time at={view.reopened.at} style="date" />.{" "}
          {view.reopened.reason !== null ? (
            <>Their reason: “{view.reopened.reason || "(none given)"}”.</>
          ) : (
            <>Their reason is shown with the annotations, after you record your independent judgement.</>
          )}
          {view.revision ? (
            <>
              {" "}
              You have seen the two annotations of this case before, so there is no new independent step: your earlier
              independent judgement stands and the form starts from your earlier decision. Revise it.
            </>
          ) : null}
        </div>
      ) : null}
      <GuidelinesPanel guidelines={guidelines} />
      <div className="workspace">
        <div>
          {view.annotations ? (
            <div className="card" data-testid="annotations">
              <h3 style={{ marginTop: 0 }}>
                Annotator A, Annotator B{columns.length > 2 ? " and your judgement" : ""}
              </h3>
              <Differences columns={columns} titles={titles} />
              {(["A", "B"] as const).map((k) =>
                view.annotations![k].notes ? (
                  <p key={k} className="muted" data-annotator={k}>
                    Annotator {k}&apos;s notes: {view.annotations![k].notes}
                  </p>
                ) : null,
              )}
            </div>
          ) : null}
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
        </div>
        <aside>
          {view.independent && view.mode === "two_phase" && !view.annotations ? (
            <div className="card" data-testid="independent">
              <h3 style={{ marginTop: 0 }}>Your independent judgement</h3>
              <LabelSummary label={view.independent} titles={titles} />
            </div>
          ) : null}
          {decided && view.final ? (
            <div className="card">
              <h3 style={{ marginTop: 0 }}>Your decision (the reference label)</h3>
              <LabelSummary label={view.final.label} titles={titles} />
              {view.final.rationale ? <p>Rationale: {view.final.rationale}</p> : null}
            </div>
          ) : (
            <Form
              method="post"
              className="card"
              ref={formRef}
              tabIndex={-1}
              aria-label="Adjudication"
              // The active time since the last draft save goes with the step (read from the form after this runs).
              onSubmit={() => {
                if (activeMsRef.current) activeMsRef.current.value = String(draft.takeActiveMs());
              }}
            >
              <Csrf />
              <input type="hidden" name="activeMs" defaultValue="0" ref={activeMsRef} />
              <input type="hidden" name="label" value={JSON.stringify(label)} />
              <input type="hidden" name="outcomeVersion" value={view.outcomeVersion} />
              <h3 style={{ marginTop: 0 }}>
                {intent === "independent"
                  ? "Step 1 of 2: your independent judgement"
                  : view.revision
                    ? "Revised decision"
                    : view.mode === "two_phase"
                      ? "Step 2 of 2: final decision"
                      : "Decision"}
              </h3>
              <p className="muted">
                {intent === "independent"
                  ? "Read the note and record your own label. The two annotations are shown after you record it, and this judgement cannot be changed."
                  : view.revision
                    ? "The case was reopened: revise your earlier decision in the light of the study manager's reason. A rationale is required if the label differs from your independent judgement."
                    : view.mode === "two_phase"
                      ? "Confirm your judgement or revise it. A rationale is required if the final label differs from your independent one."
                      : "Your decision becomes the case's reference label."}
              </p>
              <LabelFields
                values={label}
                update={update}
                sections={view.case.sections}
                errors={errors}
                codeInput={codeInput}
                missingRef={missingRef}
                sufficiencyRef={sufficiencyRef}
                onCodeDone={() => formRef.current?.focus()}
                shortcuts
              />
              {intent === "decide" ? (
                <>
                  <label htmlFor="rationale">
                    Rationale <kbd>R</kbd>
                  </label>
                  <textarea
                    id="rationale"
                    name="rationale"
                    value={rationale}
                    onChange={(e) => update({ rationale: e.target.value })}
                  />
                  {errors.rationale ? (
                    <p className="field-error" role="alert">
                      {errors.rationale}
                    </p>
                  ) : null}
                </>
              ) : null}
              {result && !result.ok && (result.status === 409 || Object.keys(errors).length === 0) ? (
                <p className="notice bad" role="alert" data-testid="form-message">
                  {result.message}
                  {result.status === 409 ? (
                    <>
                      {" "}
                      <ReloadButton /> <Link to="/adjudicate">Back to the queue</Link>
                    </>
                  ) : null}
                </p>
              ) : null}
              <div className="row" style={{ marginTop: "0.75rem" }}>
                <button type="submit" name="intent" value={intent} disabled={busy} ref={submitRef}>
                  {intent === "independent" ? "Record my judgement and show the annotations" : "Decide"} <kbd>Ctrl</kbd>
                  +<kbd>Enter</kbd>
                </button>
                <span className="spacer" />
                <SaveStateLine draft={draft} />
              </div>
              <SaveProblem draft={draft} prefix="Draft not saved: " />
            </Form>
          )}
          <ShortcutsCard workspace="adjudication" />
        </aside>
      </div>
    </section>
  );
}
