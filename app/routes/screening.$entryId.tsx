import { WORK_STATE_LABELS } from "~/work-items/domain/work-item";
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData, useNavigate } from "@remix-run/react";
import { useCallback, useRef } from "react";
import { DraftFooter } from "~/work-items/ui/draft-footer";
import { useWorkspaceKeys } from "~/work-items/ui/shortcuts";
import { liveWorkState, useDraft } from "~/work-items/ui/use-draft";
import { ShortcutsCard, WorkspaceHeader } from "~/work-items/ui/workspace-header";
import { checkVote, REVIEW_CONFIDENCES, type VoteValues } from "~/screening/domain/screening";
import { useRootData } from "~/ui/root-data";
import { workspaceAction, workspaceLoader } from "~/work-items/workspace-route.server";
import {
  getReviewEntry,
  saveVoteDraft,
  submitVote,
  VoteValuesSchema,
  type VoteResult,
} from "~/screening/screening-review.server";
import { LimitedText } from "~/work-items/ui/text-limit";
import { TEXT_LIMITS, overLimitErrors } from "~/work-items/domain/text-limits";
import { GuidelinesPanel } from "~/work-items/ui/guidelines-panel";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `Item ${data?.entry.position ?? ""} · Screening review · Concord` },
];
// A failed save keeps the workspace (and the draft) on screen: docs/architecture.md, "Saving under load".
export { clientAction, headers, shouldRevalidate } from "~/work-items/ui/save-action";

/**
 * The reviewer's item. The service's projection is the blinding: it returns the item's messages and the reviewer's
 * own vote, never control status, screen labels, rubrics or other reviewers' votes. Not theirs → 404.
 */
export const loader = ({ request, params }: LoaderFunctionArgs) =>
  workspaceLoader(request, "rater", params.entryId, {
    find: (db, userId, entryId) => getReviewEntry(db, { userId, entryId }),
    guidelines: "screening_vote",
    itemId: (view) => view.entry.id,
  });

export const action = ({ request, params }: ActionFunctionArgs) =>
  workspaceAction(request, "rater", params.entryId, {
    schema: VoteValuesSchema,
    maxLength: 100_000,
    save: (db, { id: entryId, intent, ...input }) =>
      (intent === "draft" ? saveVoteDraft : submitVote)(db, { ...input, entryId }),
  });

const ROLE_NAMES: Record<string, string> = {
  user: "User",
  assistant: "Assistant",
  system: "System",
  developer: "Developer",
  text: "Text",
};

export default function ReviewItem() {
  const view = useLoaderData<typeof loader>();
  // One component per item: the form starts from the server's values, never from the previous item's.
  return <Workspace key={view.entry.id} view={view} />;
}

function Workspace({ view }: { view: ReturnType<typeof useLoaderData<typeof loader>> }) {
  const csrf = useRootData()?.user?.csrf ?? "";
  const navigate = useNavigate();
  const closed = !view.entry.roundOpen;
  const submitted = view.state === "submitted";
  const categoryRef = useRef<HTMLSelectElement | null>(null);
  const formRef = useRef<HTMLDivElement>(null);
  const draft = useDraft<VoteValues, VoteResult>({
    initial: view.values,
    version: view.version,
    updatedAt: view.updatedAt,
    csrf,
    // Drafts are saved shortly after each change while the vote is a draft.
    autosave: !closed && !submitted,
    readOnly: closed,
    apply: (v, patch) => ({ ...v, ...patch, ...(patch.relevant === "no" ? { category: "" } : {}) }),
    // The server's rule (core checkVote), so mistakes show at once; the server checks again.
    check: (values) => ({
      ...(checkVote(values, view.categories) as Record<string, string>),
      ...overLimitErrors(values, { notes: ["Notes", TEXT_LIMITS.notes] }),
    }),
    incompleteMessage: "The vote is incomplete; see the marked fields.",
    onSubmitted: (r) =>
      navigate(view.nextEntryId !== null && !r.roundClosed ? `/screening/${view.nextEntryId}` : "/screening"),
  });
  const { values, update, errors } = draft;
  // Y shows the category select; it takes the focus in the commit that renders it (its ref callback), so that no
  // later key can arrive between the two (a timer here once moved the focus after the next key had been typed).
  const focusCategory = useRef(false);
  const attachCategory = useCallback((el: HTMLSelectElement | null) => {
    categoryRef.current = el;
    if (el && focusCategory.current) {
      focusCategory.current = false;
      el.focus();
    }
  }, []);

  // Keyboard (app/work-items/domain/keymap.ts): Y / N relevance, C category, 1–3 confidence; next, previous,
  // Ctrl+Enter and the rest as in every workspace.
  const next = view.nextEntryId !== null ? `/screening/${view.nextEntryId}` : null;
  const previous = view.previousEntryId !== null ? `/screening/${view.previousEntryId}` : null;
  useWorkspaceKeys(
    draft.submit,
    (key) => {
      if (key === "y") {
        // Focus the category select: now if it is shown, else as soon as it is rendered.
        if (categoryRef.current) categoryRef.current.focus();
        else focusCategory.current = true;
        update({ relevant: "yes" });
      } else if (key === "n") update({ relevant: "no" });
      else if (key === "c" && values.relevant === "yes") categoryRef.current?.focus();
      else if (/^[1-3]$/.test(key)) update({ confidence: REVIEW_CONFIDENCES[Number(key) - 1]! });
      else return false;
      return true;
    },
    { nav: { next, previous } },
  );

  const fieldError = (name: string) =>
    errors[name] ? (
      <p className="field-error" role="alert">
        {errors[name]}
      </p>
    ) : null;

  return (
    <section>
      <WorkspaceHeader
        list={{ to: "/screening", label: "My items" }}
        title={
          <>
            Item {view.entry.position} of {view.entry.total}{" "}
            <small className="muted">
              ({view.entry.studyName}, round {view.entry.round})
            </small>
          </>
        }
        state={{
          value: liveWorkState(view.state, draft),
          label: WORK_STATE_LABELS[liveWorkState(view.state, draft)],
          testId: "vote-state",
        }}
        progress={view.progress}
        links={[
          { label: "Previous", to: previous },
          { label: "Next", to: next },
        ]}
      />
      <GuidelinesPanel guidelines={view.guidelines} />
      <div className="workspace">
        <div aria-label="Item" data-testid="item-text">
          {view.entry.messages.map((m, i) => (
            <article key={i} className="note-section" data-role={m.role}>
              {view.entry.kind === "conversation" ? (
                <h3>
                  <span className="num">{i + 1}</span> {ROLE_NAMES[m.role] ?? m.role}
                </h3>
              ) : null}
              <p>{m.content}</p>
            </article>
          ))}
        </div>
        <aside>
          <div className="card" ref={formRef} tabIndex={-1} aria-label="Vote">
            <fieldset disabled={closed}>
              <legend>
                Relevant to the subset? <kbd>Y</kbd>/<kbd>N</kbd>
              </legend>
              <p className="criterion" data-testid="inclusion-criterion">
                {view.entry.inclusionCriterion ? (
                  <>
                    <strong>Inclusion criterion:</strong> {view.entry.inclusionCriterion}
                  </>
                ) : (
                  <span className="muted">This study has no written inclusion criterion; ask its admin.</span>
                )}
              </p>
              <label className="inline">
                <input
                  type="radio"
                  name="relevant"
                  value="yes"
                  checked={values.relevant === "yes"}
                  onChange={() => update({ relevant: "yes" })}
                />
                Yes
              </label>
              <label className="inline">
                <input
                  type="radio"
                  name="relevant"
                  value="no"
                  checked={values.relevant === "no"}
                  onChange={() => update({ relevant: "no" })}
                />
                No
              </label>
              {fieldError("relevant")}
            </fieldset>
            {values.relevant === "yes" ? (
              <>
                <label htmlFor="category">
                  Category <kbd>C</kbd>
                </label>
                <select
                  id="category"
                  ref={attachCategory}
                  value={values.category}
                  disabled={closed}
                  onChange={(e) => update({ category: e.target.value })}
                  onKeyDown={(e) => {
                    // Enter or Esc leaves the list, so that the single-key shortcuts work again.
                    if (e.key === "Enter" || e.key === "Escape") {
                      e.preventDefault();
                      formRef.current?.focus();
                    }
                  }}
                >
                  <option value="">Choose…</option>
                  {view.categories.map((c) => (
                    <option key={c} value={c}>
                      {c}
                    </option>
                  ))}
                </select>
                {fieldError("category")}
              </>
            ) : null}
            <fieldset disabled={closed}>
              <legend>
                Confidence <kbd>1</kbd>–<kbd>3</kbd>
              </legend>
              {REVIEW_CONFIDENCES.map((c, i) => (
                <label key={c} className="inline">
                  <input
                    type="radio"
                    name="confidence"
                    value={c}
                    checked={values.confidence === c}
                    onChange={() => update({ confidence: c })}
                  />
                  {c} <small className="muted">({i + 1})</small>
                </label>
              ))}
              {fieldError("confidence")}
            </fieldset>
            <LimitedText
              id="notes"
              label="Notes (optional)"
              what="Notes"
              value={values.notes}
              max={TEXT_LIMITS.notes}
              error={draft.errors.notes}
              onChange={(v) => update({ notes: v })}
              disabled={closed}
            />
            <DraftFooter
              draft={draft}
              submitted={submitted}
              closed={closed ? "This round has closed: every vote is in." : null}
            />
          </div>
          <ShortcutsCard workspace="screening" />
        </aside>
      </div>
    </section>
  );
}
