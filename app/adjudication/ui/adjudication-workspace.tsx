/**
 * The adjudicator's workspace (docs/safe-psych.md, "Disagreement and adjudication"), as a definition for the one
 * workspace shell (app/work-items/ui/workspace-page.tsx): the note (and, after the independent judgement, the two
 * annotations field by field) beside the label fields; the step the submission records (the independent judgement,
 * then the decision), posted with the case outcome's version; the keys of the keymap's adjudication row.
 */
import { useSearchParams } from "@remix-run/react";
import { checkLabelValues, labelValuesOf } from "~/labels/label-values";
import { LabelFields, SECTION_TITLES, useLabelFieldFocus, type SectionKind } from "~/annotation/public-ui";
import { MISSING_INFO, type CaseLabel } from "~/labels/labels";
import type { GuidelinesView } from "~/guidelines/domain/guidelines";
import { Time } from "~/ui/time";
import { TEXT_LIMITS } from "~/work-items/domain/text-limits";
import { LimitedText } from "~/work-items/ui/text-limit";
import type { WorkspaceDefinition } from "~/work-items/ui/workspace-page";
import { compareLabels } from "../domain/label-differences";
import {
  AdjudicationValuesSchema,
  labelPart,
  rationaleMissing,
  type AdjudicationStep,
  type AdjudicationValues,
} from "../domain/adjudication-values";
import type { AdjudicationView } from "../adjudication.server";

/** What the route's loader returns. */
export interface AdjudicationPageView {
  view: AdjudicationView;
  /** The titles of the ICD-10 codes shown. */
  titles: Record<string, string>;
  guidelines: GuidelinesView | null;
}

/** What a recorded step answers (the route's action): where the page goes next. */
export type AdjudicationStepResult =
  | {
      ok: true;
      version: number;
      savedAt: number;
      state: string;
      step: "independent_recorded" | "decided";
      /** After a decision: the next case of the queue, or null when none is left. */
      next: number | null;
      externalId: string;
    }
  | { ok: false; status: number; message: string; errors?: Record<string, string>; retryAfter?: number };

/** The step this page's submission records. */
export function stepOf(view: AdjudicationView): AdjudicationStep {
  return view.phase === "independent" && view.mode === "two_phase" ? "independent" : "decide";
}

const link = (id: number | null) => (id !== null ? `/adjudicate/${id}` : null);

/** The adjudication form's rules as the server checks them, at their fields (the WHO table aside). */
export function adjudicationErrors(values: AdjudicationValues, view: AdjudicationView): Record<string, string> {
  const check = checkLabelValues(labelPart(values), view.case.sections.length);
  if (!check.ok) return check.errors;
  if (stepOf(view) === "independent") return {};
  const missing = rationaleMissing(check.label, values.rationale, view.independent, view.mode === "two_phase");
  return missing ? { rationale: missing } : {};
}

export const adjudicationWorkspace: WorkspaceDefinition<
  AdjudicationPageView,
  AdjudicationValues,
  AdjudicationStepResult
> = {
  keymap: "adjudication",
  words: {
    list: { to: "/adjudicate", label: "Queue" },
    form: "Adjudication",
    incomplete: "The label is incomplete or invalid; see the marked fields.",
    stateTestId: "case-state",
    done: "decided",
    submit: ({ view }) => (stepOf(view) === "independent" ? "Record my judgement and show the annotations" : "Decide"),
  },
  itemKey: ({ view }) => view.case.id,
  // Each step starts the form again from the server's values: the decision's draft is not the judgement's. A
  // decision recorded keeps the form (the page reloads its data before the answer is read), so that its answer
  // still moves the page on to the next case.
  resetKey: ({ view }) => stepOf(view),
  itemAttribute: "data-case-id",
  title: ({ view }) => (
    <>
      Case {view.case.externalId} <small className="muted">({view.case.studyName})</small>
    </>
  ),
  // Beside the state on a second line, so that the header of the reveal fits one line at 1280 px.
  detail: ({ view }) => (view.reason ? <span className="badge">disagreement on {view.reason}</span> : null),
  state: ({ view }) => (view.phase === "decided" ? "locked" : view.draft ? "draft" : "not_started"),
  badge: ({ view }, shown) =>
    view.phase === "decided"
      ? { value: "locked", label: "decided" }
      : view.reopened
        ? { value: "reopened", label: "reopened" }
        : stepOf(view) === "independent"
          ? { value: shown, label: "step 1: independent" }
          : { value: "draft", label: view.mode === "two_phase" ? "step 2: decision" : "to decide" },
  progress: ({ view }) => view.progress,
  guidelines: (page) => page.guidelines,
  nav: ({ view }) => ({ next: link(view.nextCaseId), previous: link(view.previousCaseId) }),
  // Drafts through the engine, saved shortly after each change; the step itself is the submission, checked
  // against the case outcome's version the page read (docs/safe-psych.md, "Disagreement and adjudication").
  values: ({ view }) => {
    const from = view.final ?? view.revision?.previous ?? null;
    return {
      initial: view.draft?.values ?? {
        ...labelValuesOf(from?.label ?? view.independent),
        rationale: from?.rationale ?? "",
      },
      version: view.draft?.version ?? 0,
      updatedAt: view.draft?.updatedAt ?? null,
      mode: view.phase === "decided" ? "readOnly" : "draft",
    };
  },
  post: ({ view }) => ({ step: stepOf(view), outcomeVersion: String(view.outcomeVersion) }),
  schema: AdjudicationValuesSchema,
  check: (values, { view }) => adjudicationErrors(values, view),
  closed: ({ view }) => (view.phase === "decided" ? "Decided: this is the case's reference label." : null),
  onSubmitted: (_page, result, navigate) => {
    // The judgement recorded: the same case, now with the annotations. A decision: on to the next case of the
    // queue, like submit-and-next in every workspace, or the queue when none is left.
    if (result.step === "independent_recorded") navigate(".", { replace: true });
    else {
      const decided = `decided=${encodeURIComponent(result.externalId)}`;
      navigate(result.next !== null ? `/adjudicate/${result.next}?${decided}` : `/adjudicate?${decided}`);
    }
  },
  useParts: function useAdjudicationParts({ view: { view, titles }, draft, formRef }) {
    const { values, update, errors } = draft;
    const decided = view.phase === "decided";
    const step = stepOf(view);
    const T = view.case.sections.length;
    const { codeInput, missingRef, sufficiencyRef, focusMissing, searchCode } = useLabelFieldFocus();
    const [search] = useSearchParams();
    const decidedNow = search.get("decided");
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
    return {
      // Keys of the keymap's adjudication row: the annotator's label keys, E the rationale of a decision.
      onKey: (key) => {
        const current = draft.latest();
        if (key === "s") update({ sufficiency: "sufficient" });
        else if (key === "i") update({ sufficiency: "insufficient" });
        else if (/^[1-5]$/.test(key) && Number(key) <= T && current.sufficiency === "sufficient")
          update({ earliestSection: Number(key) });
        else if (key === "m") {
          if (current.sufficiency !== "insufficient") update({ sufficiency: "insufficient" });
          focusMissing();
        } else if (key === "e" && step === "decide") document.getElementById("rationale")?.focus();
        else return false;
        return true;
      },
      search: decided ? undefined : () => searchCode(draft.latest().sufficiency),
      notices: (
        <>
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
                  You have seen the two annotations of this case before, so there is no new independent step: your
                  earlier independent judgement stands and the form starts from your earlier decision. Revise it.
                </>
              ) : null}
            </div>
          ) : null}
        </>
      ),
      main: (
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
      ),
      fields:
        decided && view.final ? (
          <>
            <h3 style={{ marginTop: 0 }}>Your decision (the reference label)</h3>
            <LabelSummary label={view.final.label} titles={titles} />
            {view.final.rationale ? <p>Rationale: {view.final.rationale}</p> : null}
          </>
        ) : (
          <>
            {view.independent && view.mode === "two_phase" && !view.annotations ? (
              <div data-testid="independent">
                <h3 style={{ marginTop: 0 }}>Your independent judgement</h3>
                <LabelSummary label={view.independent} titles={titles} />
              </div>
            ) : null}
            <h3 style={{ marginTop: 0 }}>
              {step === "independent"
                ? "Step 1 of 2: your independent judgement"
                : view.revision
                  ? "Revised decision"
                  : view.mode === "two_phase"
                    ? "Step 2 of 2: final decision"
                    : "Decision"}
            </h3>
            <p className="muted">
              {step === "independent"
                ? "Read the note and record your own label. The two annotations are shown after you record it, and this judgement cannot be changed."
                : view.revision
                  ? "The case was reopened: revise your earlier decision in the light of the study manager's reason. A rationale is required if the label differs from your independent judgement."
                  : view.mode === "two_phase"
                    ? "Confirm your judgement or revise it. A rationale is required if the final label differs from your independent one."
                    : "Your decision becomes the case's reference label."}
            </p>
            <LabelFields
              values={labelPart(values)}
              update={update}
              sections={view.case.sections}
              errors={errors}
              disabled={decided}
              codeInput={codeInput}
              missingRef={missingRef}
              sufficiencyRef={sufficiencyRef}
              onCodeDone={() => formRef.current?.focus()}
              shortcuts
            />
            {step === "decide" ? (
              <LimitedText
                id="rationale"
                label={
                  <>
                    Rationale <kbd>E</kbd>
                  </>
                }
                what="A rationale"
                value={values.rationale}
                max={TEXT_LIMITS.notes}
                error={errors.rationale}
                onChange={(v) => update({ rationale: v })}
                disabled={decided}
              />
            ) : null}
          </>
        ),
    };
  },
};

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
    <div className="table-scroll">
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
    </div>
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
