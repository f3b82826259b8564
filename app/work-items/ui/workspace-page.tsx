/**
 * The one shell of every workspace (docs/architecture.md, "One workspace page"): a protocol's workspace definition
 * says what is particular to it — its values and their check, its mode, its words, its fields and its keys — and
 * `WorkspacePage` renders the rest the same way everywhere: the header (list, title, state, progress, previous and
 * next), the guidelines, the fields beside the item, the footer with the save state, the shortcuts card from the one
 * keymap, the shared keys, and the leave-page protection of the save-state machine (useSaveState). A route is its
 * guard (loader and action) and `<WorkspacePage definition={…} view={useLoaderData()} />`.
 */
import { useNavigate, type NavigateFunction } from "@remix-run/react";
import { useRef, type ReactNode, type RefObject } from "react";
import { WORK_STATE_LABELS, type WorkState } from "../domain/work-item";
import type { WorkspaceId } from "../domain/keymap";
import type { DraftResult, Errors, SaveMachine, SaveMode } from "../domain/save-state";
import type { ZodType } from "zod";
import { schemaFieldErrors } from "~/platform/forms";
import { useRootData } from "~/ui/root-data";
import { DraftFooter } from "./draft-footer";
import { GuidelinesPanel } from "./guidelines-panel";
import type { GuidelinesView } from "~/guidelines/domain/guidelines";
import { useWorkspaceKeys } from "./shortcuts";
import { useSaveState, type SaveState } from "./use-save-state";
import { ShortcutsCard, WorkspaceHeader } from "./workspace-header";

/** What a definition's `useParts` gets: the loader's view, the save state, and the form card (Esc goes there). */
export interface WorkspaceContext<View, V extends object> {
  view: View;
  draft: SaveState<V>;
  formRef: RefObject<HTMLDivElement>;
}

/** What a workspace renders and answers to, beside what the shell does for all. */
export interface WorkspaceParts {
  /** The item itself (the note, the response, the question), left of the form. */
  main: ReactNode;
  /** The fields of the form, above the footer. */
  fields: ReactNode;
  /** Under the footer, inside the form card (a training case's reveal). */
  afterFooter?: ReactNode;
  /** Between the header and the guidelines: notices about the item (adjudication's "decision recorded", "reopened"). */
  notices?: ReactNode;
  /** The workspace's own keys (from its row of the keymap): true when the key was used. */
  onKey: (key: string) => boolean;
  /** What `/` does here. */
  search?: () => void;
  /** Own keys of the keymap that do not apply to this item, by how they are shown ("A / R"). */
  omitKeys?: readonly string[];
}

export interface WorkspaceDefinition<View, V extends object, R extends DraftResult = DraftResult> {
  /** Its row of the keymap (app/work-items/domain/keymap.ts), which gives its shortcuts card. */
  keymap: WorkspaceId;
  /** Its words. */
  words: {
    list: { to: string; label: string };
    /** What the form card is called to a screen reader ("Annotation", "Vote"). */
    form: string;
    /** The message above the fields when the check finds problems. */
    incomplete: string;
    /** The `data-testid` of the state badge. */
    stateTestId: string;
    /** What done means in the progress (default "submitted"; "decided" in adjudication). */
    done?: string;
    /** The submit button's words for work not yet submitted (default "Submit"). */
    submit?: (view: View) => string;
  };
  /** One component per item: the form starts from the server's values, never from the previous item's. */
  itemKey: (view: View) => string | number;
  /**
   * Anything else whose change starts the form again from the server's values (e.g. the item's state after an undo);
   * the form is keyed by the item and this.
   */
  resetKey?: (view: View) => string;
  /** The attribute of the page's section that names the item shown (default `data-item-id`). */
  itemAttribute?: string;
  title: (view: View) => ReactNode;
  /** More about the item, on a line under the title (adjudication's reason for the dispute). */
  detail?: (view: View) => ReactNode;
  /** The item's state as loaded. */
  state: (view: View) => WorkState;
  /** The state badge, when the workspace names its states in its own words (default: the work-item states). */
  badge?: (view: View, shown: WorkState) => { value: string; label: string };
  /**
   * Fields sent with every post besides the values and their version (adjudication: the step the submission
   * records and the case outcome's version it is checked against).
   */
  post?: (view: View) => Record<string, string>;
  progress: (view: View) => { done: number; total: number };
  guidelines: (view: View) => GuidelinesView | null;
  nav: (view: View) => { next: string | null; previous: string | null };
  /** The values and version as loaded, and whether changes are drafts, a revision or not allowed. */
  values: (view: View) => { initial: V; version: number; updatedAt: number | null; mode: SaveMode };
  /** How a change applies to the values (default: merged in). */
  apply?: (values: V, patch: Partial<V>) => V;
  /**
   * The values' one zod schema, the one the route's action parses them with: its problems show at their fields
   * before a submission, in the server's words (app/platform/forms.ts:schemaFieldErrors). It lives in the protocol's
   * domain, where the page and the route both read it.
   */
  schema: ZodType;
  /** The server's rules beyond the schema (completeness), checked before a submission at their fields. */
  check: (values: V, view: View) => Errors;
  /** Why the work cannot change any more, shown instead of the submit button (null: it can). */
  closed?: (view: View) => string | null;
  /** After a submission: by default on to the next item, or the list. */
  onSubmitted?: (view: View, result: Extract<R, { ok: true }>, navigate: NavigateFunction) => void;
  /** The workspace's fields, item and keys (a hook: it may keep refs and state of its own). */
  useParts: (ctx: WorkspaceContext<View, V>) => WorkspaceParts;
}

/** What the loaders of the workspaces of the common shape return: the item's state, progress, version, guidelines. */
export interface CommonWorkspaceView {
  state: WorkState;
  progress: { done: number; total: number };
  guidelines: GuidelinesView | null;
  version: number;
  updatedAt: number | null;
}

/**
 * The parts of a definition that the workspaces of the common view shape read the same way: the state, the progress,
 * the guidelines, previous and next (the neighbours' ids under `path`), and the values (`view.values` unless
 * `initial` says otherwise) with their version; `mode` says whether changes are drafts, a revision or not allowed.
 */
export function commonViewParts<View extends CommonWorkspaceView, V extends object>(spec: {
  path: string;
  neighbours: (view: View) => { next: string | number | null; previous: string | number | null };
  initial: (view: View) => V;
  mode: (view: View) => SaveMode;
}): Pick<WorkspaceDefinition<View, V>, "state" | "progress" | "guidelines" | "nav" | "values"> {
  const link = (id: string | number | null) => (id !== null ? `${spec.path}/${id}` : null);
  return {
    state: (view) => view.state,
    progress: (view) => view.progress,
    guidelines: (view) => view.guidelines,
    nav: (view) => {
      const n = spec.neighbours(view);
      return { next: link(n.next), previous: link(n.previous) };
    },
    values: (view) => ({
      initial: spec.initial(view),
      version: view.version,
      updatedAt: view.updatedAt,
      mode: spec.mode(view),
    }),
  };
}

/** The state the badge shows: submitted once submitted from the page, a draft once a draft is stored from it. */
export function shownWorkState(loaded: WorkState, machine: SaveMachine<unknown>): WorkState {
  if (loaded === "locked" || loaded === "submitted") return loaded;
  if (machine.mode === "revision") return "submitted";
  return loaded === "not_started" && machine.draftSaved ? "draft" : loaded;
}

export function WorkspacePage<View, V extends object, R extends DraftResult>({
  definition,
  view,
}: {
  definition: WorkspaceDefinition<View, V, R>;
  view: View;
}) {
  const key = `${definition.itemKey(view)}${definition.resetKey ? `:${definition.resetKey(view)}` : ""}`;
  return <Workspace key={key} definition={definition} view={view} />;
}

function Workspace<View, V extends object, R extends DraftResult>({
  definition: d,
  view,
}: {
  definition: WorkspaceDefinition<View, V, R>;
  view: View;
}) {
  const csrf = useRootData()?.user?.csrf ?? "";
  const navigate = useNavigate();
  const nav = d.nav(view);
  const loaded = d.values(view);
  const draft = useSaveState<V, R>({
    initial: loaded.initial,
    version: loaded.version,
    updatedAt: loaded.updatedAt,
    mode: loaded.mode,
    csrf,
    apply: d.apply,
    check: (values) => ({ ...schemaFieldErrors(d.schema, values), ...d.check(values, view) }),
    incompleteMessage: d.words.incomplete,
    onSubmitted: (result) =>
      d.onSubmitted ? d.onSubmitted(view, result, navigate) : navigate(nav.next ?? d.words.list.to),
    post: d.post?.(view),
  });
  const formRef = useRef<HTMLDivElement>(null);
  const parts = d.useParts({ view, draft, formRef });
  useWorkspaceKeys(draft.submit, (key) => draft.machine.mode !== "readOnly" && parts.onKey(key), {
    leaveFieldTo: formRef,
    nav: { next: nav.next, previous: nav.previous, search: parts.search },
  });
  const state = shownWorkState(d.state(view), draft.machine);
  const badge = d.badge?.(view, state) ?? { value: state, label: WORK_STATE_LABELS[state] };
  return (
    <section data-workspace={d.keymap} {...{ [d.itemAttribute ?? "data-item-id"]: d.itemKey(view) }}>
      <WorkspaceHeader
        list={d.words.list}
        title={d.title(view)}
        detail={d.detail?.(view) ?? null}
        state={{ ...badge, testId: d.words.stateTestId }}
        progress={d.progress(view)}
        doneWord={d.words.done}
        links={[
          { label: "Previous", to: nav.previous },
          { label: "Next", to: nav.next },
        ]}
      />
      {parts.notices}
      <GuidelinesPanel guidelines={d.guidelines(view)} />
      <div className="workspace">
        {parts.main}
        <aside>
          <div className="card" ref={formRef} tabIndex={-1} aria-label={d.words.form}>
            {parts.fields}
            <DraftFooter draft={draft} closed={d.closed?.(view) ?? null} submitLabel={d.words.submit?.(view)} />
            {parts.afterFooter}
          </div>
          <ShortcutsCard workspace={d.keymap} omit={parts.omitKeys} />
        </aside>
      </div>
    </section>
  );
}
