import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data } from "@remix-run/node";
import { Link, useFetcher, useLoaderData, useNavigate } from "@remix-run/react";
import { useCallback, useEffect, useRef, useState } from "react";
import { z } from "zod";
import { LabelFields } from "~/components/label-fields";
import { STATE_LABELS } from "~/components/state-labels";
import { checkCaseLabel } from "~/core/gold";
import { SECTION_TITLES, type SectionKind } from "~/core/sections";
import { getDb } from "~/lib/db.server";
import { invariantFound, requireForm, requireRole } from "~/lib/guard.server";
import { useRootData } from "~/root";
import {
  AnnotationValuesSchema,
  getAnnotatorCase,
  saveDraft,
  submitAnnotation,
  type AnnotationValues,
  type SaveResult,
} from "~/services/annotations.server";

export const meta: MetaFunction = () => [{ title: "Annotate · Concord" }];

const CaseIdSchema = z.coerce.number().int().positive();

export async function loader({ request, params }: LoaderFunctionArgs) {
  const user = await requireRole(request, "annotator");
  const id = CaseIdSchema.safeParse(params.caseId);
  // Not assigned (or not a case at all) answers 404, never 403: ids reveal nothing.
  return invariantFound(id.success ? getAnnotatorCase(getDb(), { userId: user.id, caseId: id.data }) : null);
}

const PostSchema = z.object({
  intent: z.enum(["draft", "submit"]),
  version: z.coerce.number().int().min(0),
  values: z.string().max(100_000),
});

export async function action({ request, params }: ActionFunctionArgs) {
  const user = await requireRole(request, "annotator");
  const form = await requireForm(request, user);
  const caseId = CaseIdSchema.safeParse(params.caseId);
  const post = PostSchema.safeParse(Object.fromEntries(form));
  if (!caseId.success || !post.success)
    return data<SaveResult>(
      { ok: false, status: 422, message: "The form was malformed. Reload the page.", errors: {} },
      422,
    );
  let raw: unknown;
  try {
    raw = JSON.parse(post.data.values);
  } catch {
    return data<SaveResult>(
      { ok: false, status: 422, message: "The form was malformed. Reload the page.", errors: {} },
      422,
    );
  }
  const values = AnnotationValuesSchema.safeParse(raw);
  if (!values.success) {
    const errors: Record<string, string> = {};
    for (const issue of values.error.issues) errors[String(issue.path[0] ?? "_form")] ??= issue.message;
    return data<SaveResult>(
      { ok: false, status: 422, message: "Some values are not valid; see the marked fields.", errors },
      422,
    );
  }
  const input = { userId: user.id, caseId: caseId.data, values: values.data, version: post.data.version };
  const result = post.data.intent === "draft" ? saveDraft(getDb(), input) : submitAnnotation(getDb(), input);
  return data<SaveResult>(result, result.ok ? 200 : result.status);
}

type SaveState =
  | { kind: "idle" }
  | { kind: "saving" }
  | { kind: "saved"; at: number }
  | { kind: "error"; message: string };

function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return Boolean(el?.closest("input[type=text], input[type=search], textarea, select, [contenteditable]"));
}

export default function AnnotateCase() {
  const view = useLoaderData<typeof loader>();
  // One component instance per case: form state starts from the server's values, never from the previous case.
  return <Workspace key={view.case.id} view={view} />;
}

function Workspace({ view }: { view: ReturnType<typeof useLoaderData<typeof loader>> }) {
  const csrf = useRootData()?.user?.csrf ?? "";
  const navigate = useNavigate();
  const T = view.case.sections.length;
  const locked = view.state === "locked";
  const submitted = view.state === "submitted";
  const [values, setValues] = useState<AnnotationValues>(view.values);
  const [version, setVersion] = useState(view.version);
  const [saveState, setSaveState] = useState<SaveState>(
    view.updatedAt ? { kind: "saved", at: view.updatedAt } : { kind: "idle" },
  );
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [message, setMessage] = useState<string | null>(null);
  const draftFetcher = useFetcher<SaveResult>();
  const submitFetcher = useFetcher<SaveResult>();
  const dirty = useRef(false);
  const codeInput = useRef<HTMLInputElement>(null);
  const formRef = useRef<HTMLDivElement>(null);
  const missingRef = useRef<HTMLFieldSetElement>(null);
  const [focusCode, setFocusCode] = useState(0);
  useEffect(() => {
    if (focusCode) codeInput.current?.focus();
  }, [focusCode]);

  const update = useCallback(
    (patch: Partial<AnnotationValues>) => {
      if (locked) return;
      setValues((v) => ({ ...v, ...patch }));
      dirty.current = true;
      setErrors((e) => {
        const next = { ...e };
        for (const k of Object.keys(patch)) delete next[k];
        return next;
      });
    },
    [locked],
  );

  // Drafts: saved on the server shortly after each change (SPEC §3), only while the annotation is a draft.
  const autosave = !locked && !submitted;
  useEffect(() => {
    if (!autosave || !dirty.current || draftFetcher.state !== "idle") return;
    const timer = setTimeout(() => {
      dirty.current = false;
      setSaveState({ kind: "saving" });
      draftFetcher.submit(
        { intent: "draft", version: String(version), values: JSON.stringify(values), csrf },
        { method: "post" },
      );
    }, 700);
    return () => clearTimeout(timer);
  }, [values, version, autosave, draftFetcher.state]); // eslint-disable-line react-hooks/exhaustive-deps

  useEffect(() => {
    const r = draftFetcher.data;
    if (!r || draftFetcher.state !== "idle") return;
    if (r.ok) {
      setVersion(r.version);
      setSaveState({ kind: "saved", at: r.savedAt });
    } else {
      dirty.current = false;
      setSaveState({ kind: "error", message: r.message });
    }
  }, [draftFetcher.data, draftFetcher.state]);

  useEffect(() => {
    const r = submitFetcher.data;
    if (!r || submitFetcher.state !== "idle") return;
    if (r.ok) {
      setVersion(r.version);
      const target = view.nextCaseId !== null ? `/annotate/${view.nextCaseId}` : "/annotate";
      navigate(target, { state: { submitted: view.case.externalId } });
    } else {
      setMessage(r.message);
      if ("errors" in r) setErrors(r.errors);
    }
  }, [submitFetcher.data, submitFetcher.state]); // eslint-disable-line react-hooks/exhaustive-deps

  const submit = useCallback(() => {
    if (locked || submitFetcher.state !== "idle") return;
    // The same rules as the server (core/gold checkCaseLabel), so mistakes show at once; the server checks again.
    const check = checkCaseLabel(
      {
        sufficiency: values.sufficiency || undefined,
        icd10: values.icd10,
        earliestSection: values.earliestSection ?? undefined,
        missingInfo: values.missingInfo,
        missingInfoOther: values.missingOther,
      },
      { sectionCount: T },
    );
    if (!check.ok) {
      const e: Record<string, string> = {};
      for (const [k, v] of Object.entries(check.errors))
        e[k === "missingInfoOther" ? "missingOther" : k] = v!.charAt(0).toUpperCase() + v!.slice(1) + ".";
      setErrors(e);
      setMessage("The annotation is incomplete or invalid; see the marked fields.");
      return;
    }
    dirty.current = false;
    submitFetcher.submit(
      { intent: "submit", version: String(version), values: JSON.stringify(values), csrf },
      { method: "post" },
    );
  }, [locked, submitFetcher, values, version, csrf, T]);

  // Keyboard: S / I sufficiency, 1–T earliest section, / code search, M missing information, Ctrl+Enter submit, N next.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        submit();
        return;
      }
      if (isTyping(e.target) || e.altKey || e.ctrlKey || e.metaKey) return;
      const key = e.key.toLowerCase();
      if (key === "s") update({ sufficiency: "sufficient" });
      else if (key === "i") update({ sufficiency: "insufficient" });
      else if (/^[1-5]$/.test(key) && Number(key) <= T && values.sufficiency === "sufficient")
        update({ earliestSection: Number(key) });
      else if (key === "/") {
        e.preventDefault();
        // The picker exists only for a sufficient note: "/" chooses sufficient first, then focuses it once rendered.
        if (values.sufficiency !== "sufficient") update({ sufficiency: "sufficient" });
        setFocusCode((n) => n + 1);
      } else if (key === "m") missingRef.current?.querySelector("input")?.focus();
      else if (key === "n" && view.nextCaseId !== null) navigate(`/annotate/${view.nextCaseId}`);
      else return;
      e.preventDefault();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [submit, update, T, values.sufficiency, view.nextCaseId, navigate]);

  const chosen = values.sufficiency === "sufficient" ? values.earliestSection : null;
  return (
    <section>
      <div className="row">
        <Link to="/annotate">My cases</Link>
        <span className="muted">›</span>
        <h1 style={{ margin: 0 }}>
          Case {view.case.externalId} <small className="muted">({view.case.studyName})</small>
        </h1>
        <span className={`badge ${view.state}`} data-testid="case-state">
          {STATE_LABELS[view.state]}
        </span>
        <span className="spacer" />
        <span className="muted" data-testid="progress">
          {view.progress.done} of {view.progress.total} submitted
        </span>
        {view.nextCaseId !== null ? (
          <Link to={`/annotate/${view.nextCaseId}`} className="button secondary">
            Next <kbd>N</kbd>
          </Link>
        ) : null}
      </div>
      <div className="workspace">
        <div aria-label="Clinical note">
          {view.case.sections.map((s) => (
            <article
              key={s.order}
              className={`note-section${chosen === s.order ? " chosen" : ""}${
                chosen !== null && s.order > chosen ? " after" : ""
              }`}
              data-section={s.order}
            >
              <h3>
                <span className="num">{s.order}</span> {SECTION_TITLES[s.kind as SectionKind] ?? s.kind}
                {values.sufficiency === "sufficient" && !locked ? (
                  <button
                    type="button"
                    className="link"
                    style={{ marginLeft: "0.75rem", fontSize: "0.85rem" }}
                    onClick={() => update({ earliestSection: s.order })}
                  >
                    {chosen === s.order ? "earliest sufficient section" : "sufficient from here"}
                  </button>
                ) : null}
              </h3>
              <p>{s.content}</p>
            </article>
          ))}
        </div>
        <aside>
          <div className="card" ref={formRef} tabIndex={-1} aria-label="Annotation">
            <LabelFields
              values={values}
              update={update}
              sections={view.case.sections}
              errors={errors}
              disabled={locked}
              codeInput={codeInput}
              missingRef={missingRef}
              onCodeDone={() => formRef.current?.focus()}
              shortcuts
            />
            <label htmlFor="notes">Notes (optional)</label>
            <textarea
              id="notes"
              value={values.notes}
              disabled={locked}
              onChange={(e) => update({ notes: e.target.value })}
            />

            {message ? (
              <p className="notice bad" role="alert" data-testid="form-message">
                {message}
              </p>
            ) : null}
            <div className="row" style={{ marginTop: "0.75rem" }}>
              {locked ? (
                <span className="notice ok">Both annotations are in: this case is locked.</span>
              ) : (
                <button type="button" onClick={submit} disabled={submitFetcher.state !== "idle"} data-testid="submit">
                  {submitted ? "Save revision" : "Submit"} <kbd>Ctrl</kbd>+<kbd>Enter</kbd>
                </button>
              )}
              <span className="spacer" />
              <small className="muted" data-testid="save-state" aria-live="polite">
                {saveState.kind === "saving"
                  ? "Saving…"
                  : saveState.kind === "saved"
                  ? `Saved ${new Date(saveState.at).toLocaleTimeString()}`
                  : saveState.kind === "error"
                  ? ""
                  : autosave
                  ? "Drafts save automatically"
                  : ""}
              </small>
            </div>
            {saveState.kind === "error" ? (
              <p className="field-error" role="alert">
                Not saved: {saveState.message}
              </p>
            ) : null}
          </div>
          <details className="card" open>
            <summary>Keyboard shortcuts</summary>
            <dl className="kv">
              <dt>
                <kbd>S</kbd> / <kbd>I</kbd>
              </dt>
              <dd>sufficient / insufficient</dd>
              <dt>
                <kbd>1</kbd>–<kbd>5</kbd>
              </dt>
              <dd>earliest sufficient section</dd>
              <dt>
                <kbd>/</kbd>
              </dt>
              <dd>search ICD-10 codes (arrows, Enter to choose, Esc to leave)</dd>
              <dt>
                <kbd>M</kbd>
              </dt>
              <dd>missing information (Tab, Space)</dd>
              <dt>
                <kbd>Ctrl</kbd>+<kbd>Enter</kbd>
              </dt>
              <dd>submit and go to the next case</dd>
              <dt>
                <kbd>N</kbd>
              </dt>
              <dd>next case</dd>
            </dl>
          </details>
        </aside>
      </div>
    </section>
  );
}
