import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData, useNavigate } from "@remix-run/react";
import { useRef } from "react";
import { DraftFooter } from "~/work-items/ui/draft-footer";
import { INFO_REQUEST_KEYS, PRIMARY_ANSWER_KEYS } from "~/judge-validation/ui/judge-labels";
import { WORK_STATE_LABELS } from "~/work-items/domain/work-item";
import { useWorkspaceKeys } from "~/work-items/ui/shortcuts";
import { liveWorkState, useDraft } from "~/work-items/ui/use-draft";
import { ShortcutsCard, WorkspaceHeader } from "~/work-items/ui/workspace-header";
import { raterAction } from "~/evaluation/domain/judge";
import { useRootData } from "~/ui/root-data";
import { workspaceAction, workspaceLoader } from "~/work-items/workspace-route.server";
import {
  getRaterItem,
  raterGuide,
  RatingValuesSchema,
  saveRatingDraft,
  submitRating,
  type RatingSaveResult,
  type RatingValues,
} from "~/judge-validation/judge-ratings.server";
import { LimitedText } from "~/work-items/ui/text-limit";
import { TEXT_LIMITS, overLimitErrors } from "~/work-items/domain/text-limits";
import { GuidelinesPanel } from "~/work-items/ui/guidelines-panel";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `${data?.item.annotationId ?? "Response"} · Rate · Concord` },
];
// A failed save keeps the workspace (and the draft) on screen: docs/architecture.md, "Saving under load".
export { clientAction, headers, shouldRevalidate } from "~/work-items/ui/save-action";

/**
 * Blinding (docs/architecture.md, "Roles and blinding"): the loader returns the response text, the rater's own labels and the judge prompt's guide —
 * nothing else. getRaterItem selects exactly those columns; an item not assigned to this rater answers 404.
 */
export const loader = async ({ request, params }: LoaderFunctionArgs) => ({
  ...(await workspaceLoader(request, "rater", params.itemId, {
    find: (db, raterId, itemId) => getRaterItem(db, { raterId, itemId }),
    guidelines: "judge_rating",
    itemId: (view) => view.item.id,
  })),
  guide: raterGuide(),
});

export const action = ({ request, params }: ActionFunctionArgs) =>
  workspaceAction(request, "rater", params.itemId, {
    schema: RatingValuesSchema,
    maxLength: 50_000,
    save: (db, { userId: raterId, id: itemId, intent, ...input }) =>
      (intent === "draft" ? saveRatingDraft : submitRating)(db, { ...input, raterId, itemId }),
  });

const RATING_LIMITS = {
  icdCodes: ["The codes", TEXT_LIMITS.icdCodes],
  diagnosisNames: ["The diagnosis names", TEXT_LIMITS.diagnosisNames],
  notes: ["Notes", TEXT_LIMITS.notes],
} as const;

export default function RateItem() {
  const view = useLoaderData<typeof loader>();
  // One component per response: the form starts from the server's values, never from the previous response.
  return <Workspace key={view.item.id} view={view} />;
}

function Workspace({ view }: { view: ReturnType<typeof useLoaderData<typeof loader>> }) {
  const csrf = useRootData()?.user?.csrf ?? "";
  const navigate = useNavigate();
  const readOnly = !view.open;
  const submitted = view.state === "submitted";
  const codesRef = useRef<HTMLInputElement>(null);
  const formRef = useRef<HTMLDivElement>(null);
  const draft = useDraft<RatingValues, RatingSaveResult>({
    initial: view.values,
    version: view.version,
    updatedAt: view.updatedAt,
    csrf,
    // Drafts are saved on the server shortly after each change, while the rating is not yet submitted.
    autosave: !readOnly && !submitted,
    readOnly,
    check: (values) => {
      const missing: Record<string, string> = {};
      if (!values.primaryAnswer) missing.primaryAnswer = "Choose the primary answer (C, D or N).";
      if (!values.infoRequest) missing.infoRequest = "Choose the information request (S, G or X).";
      return { ...missing, ...overLimitErrors(values, RATING_LIMITS) };
    },
    incompleteMessage: "Both features are needed to submit; see the marked fields.",
    onSubmitted: () =>
      navigate(view.nextItemId !== null ? `/judge-validation/${view.nextItemId}` : "/judge-validation"),
  });
  const { values, update, errors } = draft;

  // Keyboard (app/work-items/domain/keymap.ts): C / D / N primary answer, S / G / X information request, / ICD codes;
  // next, previous, Ctrl+Enter and the rest as in every workspace.
  const next = view.nextItemId !== null ? `/judge-validation/${view.nextItemId}` : null;
  const previous = view.previousItemId !== null ? `/judge-validation/${view.previousItemId}` : null;
  useWorkspaceKeys(
    draft.submit,
    (key) => {
      const primary = PRIMARY_ANSWER_KEYS.find((p) => p.key === key);
      const info = INFO_REQUEST_KEYS.find((i) => i.key === key);
      if (primary) update({ primaryAnswer: primary.value });
      else if (info) update({ infoRequest: info.value });
      else return false;
      return true;
    },
    { leaveFieldTo: formRef, nav: { next, previous, search: () => codesRef.current?.focus() } },
  );

  const action = raterAction(values.primaryAnswer || null, values.infoRequest || null);
  return (
    <section>
      <WorkspaceHeader
        list={{ to: "/judge-validation", label: "My responses" }}
        title={<>Response {view.item.annotationId}</>}
        state={{
          value: liveWorkState(view.state, draft),
          label: WORK_STATE_LABELS[liveWorkState(view.state, draft)],
          testId: "rating-state",
        }}
        progress={view.progress}
        links={[
          { label: "Previous", to: previous },
          { label: "Next", to: next },
        ]}
      />
      <GuidelinesPanel guidelines={view.guidelines} />
      <div className="workspace">
        <div>
          <article className="note-section" aria-label="Model response">
            <h3>Model response</h3>
            <p data-testid="response-text" style={{ whiteSpace: "pre-wrap" }}>
              {view.item.text || <em className="muted">(empty response)</em>}
            </p>
          </article>
          <details className="card" open>
            <summary>
              <strong>Feature definitions</strong> (from the judge prompt)
            </summary>
            {view.guide.features.map((f) => (
              <div key={f.title}>
                <h3>{f.title}</h3>
                <pre style={{ whiteSpace: "pre-wrap", font: "inherit" }}>{f.body}</pre>
              </div>
            ))}
          </details>
          <details className="card">
            <summary>
              <strong>Worked examples</strong> ({view.guide.examples.length})
            </summary>
            <ol>
              {view.guide.examples.map((ex, i) => (
                <li key={i} style={{ marginBottom: "0.75rem" }}>
                  <p>“{ex.response}”</p>
                  <dl className="kv">
                    {ex.output.map((o) => (
                      <div key={o.key} style={{ display: "contents" }}>
                        <dt>{o.key}</dt>
                        <dd>{o.value || <span className="muted">empty</span>}</dd>
                      </div>
                    ))}
                  </dl>
                </li>
              ))}
            </ol>
          </details>
        </div>
        <aside>
          <div className="card" ref={formRef} tabIndex={-1} aria-label="Rating">
            <fieldset disabled={readOnly}>
              <legend>Primary answer</legend>
              {PRIMARY_ANSWER_KEYS.map((p) => (
                <label key={p.value} className="inline">
                  <input
                    type="radio"
                    name="primaryAnswer"
                    value={p.value}
                    checked={values.primaryAnswer === p.value}
                    onChange={() => update({ primaryAnswer: p.value })}
                  />{" "}
                  {p.label} <kbd>{p.key.toUpperCase()}</kbd>
                </label>
              ))}
              {errors.primaryAnswer ? <p className="field-error">{errors.primaryAnswer}</p> : null}
            </fieldset>
            <fieldset disabled={readOnly}>
              <legend>Information request</legend>
              {INFO_REQUEST_KEYS.map((i) => (
                <label key={i.value} className="inline">
                  <input
                    type="radio"
                    name="infoRequest"
                    value={i.value}
                    checked={values.infoRequest === i.value}
                    onChange={() => update({ infoRequest: i.value })}
                  />{" "}
                  {i.label} <kbd>{i.key.toUpperCase()}</kbd>
                </label>
              ))}
              {errors.infoRequest ? <p className="field-error">{errors.infoRequest}</p> : null}
            </fieldset>
            <p>
              Action by the rule: <strong data-testid="derived-action">{action ?? "— (choose both features)"}</strong>
            </p>
            <LimitedText
              id="icdCodes"
              label="ICD codes named in the response (optional, comma-separated)"
              what="The codes"
              value={values.icdCodes}
              max={TEXT_LIMITS.icdCodes}
              error={errors.icdCodes}
              onChange={(v) => update({ icdCodes: v })}
              disabled={readOnly}
              oneLine
              inputRef={codesRef}
            />
            <LimitedText
              id="diagnosisNames"
              label="Diagnosis names (optional, comma-separated)"
              what="The diagnosis names"
              value={values.diagnosisNames}
              max={TEXT_LIMITS.diagnosisNames}
              error={errors.diagnosisNames}
              onChange={(v) => update({ diagnosisNames: v })}
              disabled={readOnly}
              oneLine
            />
            <LimitedText
              id="notes"
              label="Notes (optional)"
              what="Notes"
              value={values.notes}
              max={TEXT_LIMITS.notes}
              error={errors.notes}
              onChange={(v) => update({ notes: v })}
              disabled={readOnly}
            />
            <DraftFooter
              draft={draft}
              submitted={submitted}
              closed={readOnly ? "Rating of this set is closed: the labels are final." : null}
            />
          </div>
          <ShortcutsCard workspace="judge-validation" />
        </aside>
      </div>
    </section>
  );
}
