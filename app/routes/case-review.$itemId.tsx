import type { ActionFunctionArgs, LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData, useNavigate } from "@remix-run/react";
import { useCallback, useRef, useState } from "react";
import { DraftFooter } from "~/work-items/ui/draft-footer";
import styles from "~/expert-panel/ui/expert-ratings.css?url";
import { useWorkspaceKeys } from "~/work-items/ui/shortcuts";
import { liveWorkState, useDraft } from "~/work-items/ui/use-draft";
import { ShortcutsCard, WorkspaceHeader } from "~/work-items/ui/workspace-header";
import {
  REVIEW_DIMENSION_LABELS,
  REVIEW_DIMENSIONS,
  REVIEW_SCALE,
  type ReviewDimension,
} from "~/expert-panel/domain/expert-scales";
import { useRootData } from "~/ui/root-data";
import { workspaceAction, workspaceLoader } from "~/work-items/workspace-route.server";
import { WORK_STATE_LABELS, type WorkState } from "~/work-items/domain/work-item";
import {
  getRaterItem,
  ReviewValuesSchema,
  saveReview,
  type ReviewSaveResult,
  type ReviewValues,
} from "~/case-review/case-review.server";
import { LimitedText } from "~/work-items/ui/text-limit";
import { TEXT_LIMITS, overLimitErrors } from "~/work-items/domain/text-limits";
import { GuidelinesPanel } from "~/work-items/ui/guidelines-panel";

export const meta: MetaFunction = () => [{ title: "Review a case · Concord" }];
// A failed save keeps the workspace (and the draft) on screen: docs/architecture.md, "Saving under load".
export { clientAction, headers, shouldRevalidate } from "~/work-items/ui/save-action";
export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];

export const loader = ({ request, params }: LoaderFunctionArgs) =>
  workspaceLoader(request, "rater", params.itemId, {
    find: (db, userId, itemId) => getRaterItem(db, { userId, itemId }),
    guidelines: "case_review",
    itemId: (view) => view.item.id,
  });

export const action = ({ request, params }: ActionFunctionArgs) =>
  workspaceAction(request, "rater", params.itemId, {
    schema: ReviewValuesSchema,
    maxLength: 50_000,
    report: "message",
    save: (db, { id: itemId, ...input }) => saveReview(db, { ...input, itemId }),
  });

export default function ReviewItem() {
  const view = useLoaderData<typeof loader>();
  return <Workspace key={view.item.id} view={view} />;
}

const SCALE_HINTS: Record<ReviewDimension, [string, string]> = {
  naturalness: ["reads as machine-made", "reads as a real clinician or patient wrote it"],
  validity: ["does not support the diagnosis", "fully consistent with the diagnostic criteria"],
  realism: ["not a plausible patient", "a patient one meets in practice"],
};

function Workspace({ view }: { view: ReturnType<typeof useLoaderData<typeof loader>> }) {
  const csrf = useRootData()?.user?.csrf ?? "";
  const navigate = useNavigate();
  const isSeed = view.item.kind === "seed";
  const next = view.nextItemId !== null ? `/case-review/${view.nextItemId}` : "/expert-ratings";
  const [state, setState] = useState<WorkState>(view.state);
  const form = useDraft<ReviewValues, ReviewSaveResult>({
    initial: view.values,
    version: view.version,
    updatedAt: view.updatedAt,
    csrf,
    // Changes to a submitted review are not autosaved: they wait for "Save revision".
    autosave: state !== "submitted",
    check: (v) => {
      const e: Record<string, string> = {};
      if (isSeed) {
        if (!v.decision) e.decision = "Accept or reject the seed.";
        if (v.decision === "reject" && !v.reason.trim()) e.reason = "Say why the seed is rejected.";
      } else for (const d of REVIEW_DIMENSIONS) if (v[d] === null) e[d] = "Choose a score from 1 to 5.";
      return {
        ...e,
        ...overLimitErrors(v, {
          reason: ["A reason", TEXT_LIMITS.comment],
          comment: ["A comment", TEXT_LIMITS.comment],
        }),
      };
    },
    incompleteMessage: "Some answers are missing; see the marked fields.",
    onSubmitted: (r) => {
      setState(r.state);
      navigate(next);
    },
  });
  // The dimension digits 1–5 apply to: the one last focused or chosen, else the first without a score.
  const [active, setActive] = useState<ReviewDimension>(
    REVIEW_DIMENSIONS.find((d) => view.values[d] === null) ?? "naturalness",
  );

  const focusReason = useRef(false);
  const attachReason = useCallback((el: HTMLTextAreaElement | null) => {
    if (el && focusReason.current) {
      focusReason.current = false;
      el.focus();
    }
  }, []);

  // Keyboard (app/work-items/domain/keymap.ts): A / R a seed's decision, 1–5 scores, C the comment; next, previous,
  // Ctrl+Enter and the rest as in every workspace.
  const previous = view.previousItemId !== null ? `/case-review/${view.previousItemId}` : null;
  useWorkspaceKeys(
    form.submit,
    (key) => {
      if (!isSeed && /^[1-5]$/.test(key)) {
        form.update({ [active]: Number(key) } as Partial<ReviewValues>);
        const after = REVIEW_DIMENSIONS[REVIEW_DIMENSIONS.indexOf(active) + 1];
        if (after) setActive(after);
      } else if (isSeed && key === "a") form.update({ decision: "accept" });
      else if (isSeed && key === "r") {
        // Focus the reason: now if it is shown, else in the commit that renders it (its ref callback), so that the
        // letters typed next go into it and never act as shortcuts.
        const reason = document.getElementById("reason");
        if (reason) reason.focus();
        else focusReason.current = true;
        form.update({ decision: "reject" });
      } else if (key === "c") document.getElementById("comment")?.focus();
      else return false;
      return true;
    },
    { nav: { next: view.nextItemId !== null ? next : null, previous } },
  );

  return (
    <section>
      <WorkspaceHeader
        list={{ to: "/expert-ratings", label: "Expert ratings" }}
        title={
          <>
            {isSeed ? "Seed" : "Case"} {view.item.externalId}{" "}
            <small className="muted">
              ({view.item.setName}
              {view.item.caseType ? `, type ${view.item.caseType}` : ""})
            </small>
          </>
        }
        state={{
          value: liveWorkState(state, form),
          label: WORK_STATE_LABELS[liveWorkState(state, form)],
          testId: "item-state",
        }}
        progress={view.progress}
        links={[
          { label: "Previous", to: previous },
          { label: "Next", to: view.nextItemId !== null ? next : null },
        ]}
      />
      <GuidelinesPanel guidelines={view.guidelines} />
      <div className="workspace">
        <article className="card" aria-label="Case">
          <p className="case-text" data-testid="case-text">
            {view.item.text}
          </p>
        </article>
        <aside>
          <div className="card" aria-label="Review">
            {isSeed ? (
              <>
                <fieldset aria-invalid={form.errors.decision ? true : undefined}>
                  <legend>Is this seed case valid?</legend>
                  <div className="scale-group" role="radiogroup">
                    {(["accept", "reject"] as const).map((d) => (
                      <label key={d} className={form.values.decision === d ? "chosen" : ""}>
                        <input
                          type="radio"
                          name="decision"
                          value={d}
                          checked={form.values.decision === d}
                          onChange={() => form.update({ decision: d })}
                        />
                        {d === "accept" ? "Accept" : "Reject"} <kbd>{d === "accept" ? "A" : "R"}</kbd>
                      </label>
                    ))}
                  </div>
                  {form.errors.decision ? <p className="field-error">{form.errors.decision}</p> : null}
                </fieldset>
                {form.values.decision === "reject" ? (
                  <>
                    <LimitedText
                      id="reason"
                      label="Reason for rejecting (required)"
                      what="A reason"
                      value={form.values.reason}
                      max={TEXT_LIMITS.comment}
                      error={form.errors.reason}
                      onChange={(v) => form.update({ reason: v })}
                      inputRef={attachReason}
                    />
                  </>
                ) : null}
              </>
            ) : (
              REVIEW_DIMENSIONS.map((d) => (
                <fieldset
                  key={d}
                  className={active === d ? "active" : ""}
                  onFocus={() => setActive(d)}
                  data-dimension={d}
                >
                  <legend>{REVIEW_DIMENSION_LABELS[d]}</legend>
                  {d === "validity" && view.item.targetDiagnosis ? (
                    // Shown only with the question that needs it (docs/decisions/0009-target-diagnosis-for-validity.md).
                    <p className="criterion" data-testid="target-diagnosis">
                      <strong>Target diagnosis:</strong> {view.item.targetDiagnosis}
                    </p>
                  ) : null}
                  <div className="scale-group" role="radiogroup" aria-label={REVIEW_DIMENSION_LABELS[d]}>
                    {REVIEW_SCALE.map((v) => (
                      <label key={v} className={form.values[d] === v ? "chosen" : ""}>
                        <input
                          type="radio"
                          name={d}
                          value={v}
                          checked={form.values[d] === v}
                          onChange={() => {
                            form.update({ [d]: v } as Partial<ReviewValues>);
                            setActive(d);
                          }}
                        />
                        {v}
                      </label>
                    ))}
                  </div>
                  <small className="muted">
                    1 = {SCALE_HINTS[d][0]}; 5 = {SCALE_HINTS[d][1]}
                  </small>
                  {form.errors[d] ? <p className="field-error">{form.errors[d]}</p> : null}
                </fieldset>
              ))
            )}
            <LimitedText
              id="comment"
              label="Comment (optional)"
              what="A comment"
              value={form.values.comment}
              max={TEXT_LIMITS.comment}
              error={form.errors.comment}
              onChange={(v) => form.update({ comment: v })}
            />
            <DraftFooter draft={form} submitted={state === "submitted"} revisionHint />
          </div>
          <ShortcutsCard workspace="case-review" omit={isSeed ? ["1–5"] : ["A / R"]} />
        </aside>
      </div>
    </section>
  );
}
