import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, redirect, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { z } from "zod";
import { getDb } from "~/platform/db.server";
import { requireById, requireForm, requireRole } from "~/accounts/guard.server";
import { parseIntent } from "~/platform/intent";
import { ServiceError } from "~/platform/service-error";
import { Csrf } from "~/ui/root-data";
import { TranslationCard } from "~/preparation/ui/translation-card";
import { listProviders, ProviderConfigError, type ProviderView } from "~/model-calls/providers.server";
import {
  changeReviewers,
  countDifferingNotes,
  DEFAULT_TRANSLATION_CONCURRENCY,
  differingNotesWindow,
  missingLines,
  readPlan,
  releaseToStudy,
  getProject,
  listProjectNotes,
  PAPER_MAX_TOKENS,
  projectAgreement,
  projectQualityState,
  projectTranslationView,
  startTranslationJob,
} from "~/preparation/public.server";
import { QualityCard } from "~/preparation/public";

export const meta: MetaFunction = () => [{ title: "Preparation project · Concord" }];

/** How many missing notes the page lists (the command line lists them all). */
const MISSING_SHOWN = 50;

/**
 * Admins only (docs/security.md, "Source text"): the project's notes by id and count, its reviewers, the notes
 * waiting for a settlement (a window from `?after=`, cut on the server), and whether it can be released and exported.
 */
export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  const project = requireById(params.projectId, (id) => getProject(db, id));
  // The translation (docs/preparation.md, "Translation"): providers by name and model, never their keys.
  let providers: ProviderView[] = [];
  let providersProblem: string | null = null;
  try {
    providers = listProviders();
  } catch (e) {
    if (!(e instanceof ProviderConfigError)) throw e;
    providersProblem = e.message;
  }
  const url = new URL(request.url);
  const afterParam = url.searchParams.get("after");
  const after = afterParam && /^\d{1,9}$/.test(afterParam) ? Number(afterParam) : undefined;
  const summary = (kind: "release" | "export") => {
    const plan = readPlan(db, project.id, kind);
    return {
      ready: plan.notes.length,
      excluded: plan.excluded,
      missing: plan.missing.length,
      lines: missingLines(plan.missing.slice(0, MISSING_SHOWN)),
    };
  };
  return {
    project,
    notes: listProjectNotes(db, project.id),
    agreement: projectAgreement(db, project.id),
    translation: {
      ...projectTranslationView(db, project.id),
      providers: providers.map((p) => ({ name: p.name, model: p.model, keyAvailable: p.keyAvailable })),
      providersProblem,
      defaults: { concurrency: DEFAULT_TRANSLATION_CONCURRENCY, maxTokens: PAPER_MAX_TOKENS },
    },
    quality: projectQualityState(db, project.id)!,
    differing: {
      ...differingNotesWindow(db, project.id, { after }),
      total: countDifferingNotes(db, project.id),
      after: after ?? null,
    },
    settled: url.searchParams.get("settled"),
    release: summary("release"),
    export: summary("export"),
  };
}

const TranslateSchema = z.discriminatedUnion("intent", [
  z.object({
    intent: z.literal("translate"),
    provider: z.string().trim().min(1, "Choose a model."),
    maxTokens: z.coerce
      .number()
      .int("The longest answer is a whole number of tokens.")
      .min(1, "The longest answer is at least 1 token.")
      .max(100_000, "The longest answer is at most 100000 tokens."),
    concurrency: z.coerce
      .number()
      .int("Calls in flight is a whole number.")
      .min(1, "Calls in flight is at least 1.")
      .max(64, "Calls in flight is at most 64."),
    backTranslateOnly: z
      .literal("on")
      .optional()
      .transform((v) => v === "on"),
  }),
]);

const ReviewerSchema = z.discriminatedUnion("intent", [
  z.object({
    intent: z.literal(["add", "remove"]),
    username: z.string().trim().min(1, "Give a username.").max(200),
  }),
  z.object({
    intent: z.literal("release"),
    study: z.string().trim().min(1, "Name the new study.").max(200),
  }),
]);

export async function action({ request, params }: ActionFunctionArgs) {
  const user = await requireRole(request, "admin");
  const form = await requireForm(request, user);
  const db = getDb();
  const project = requireById(params.projectId, (id) => getProject(db, id));
  if (form.get("intent") === "translate") {
    const t = parseIntent(form, TranslateSchema);
    if (!t.ok) return { ok: false as const, message: t.message };
    let jobId: number;
    try {
      const { intent: _, ...choice } = t.data;
      jobId = startTranslationJob(db, {
        params: { projectId: project.id, project: project.name, ...choice },
        actorId: user.id,
      });
    } catch (e) {
      if (e instanceof ServiceError) return { ok: false as const, message: e.message };
      throw e;
    }
    return redirect(`/admin/eval-jobs/${jobId}`);
  }
  const parsed = parseIntent(form, ReviewerSchema);
  if (!parsed.ok) return { ok: false as const, message: parsed.message };
  if (parsed.data.intent === "release") {
    const study = parsed.data.study;
    try {
      const r = releaseToStudy(db, {
        projectId: project.id,
        projectName: project.name,
        studyName: study,
        actorId: user.id,
      });
      return r.ok
        ? {
            ok: true as const,
            release: true,
            message: `Released as study "${r.study}": ${r.notes} notes (excluded cases left out: ${r.excluded}).`,
          }
        : { ok: false as const, release: true, message: r.message, lines: r.lines.slice(0, MISSING_SHOWN) };
    } catch (e) {
      if (e instanceof ServiceError) return { ok: false as const, release: true, message: e.message };
      throw e;
    }
  }
  try {
    const names: string[] = [parsed.data.username];
    const r = changeReviewers(db, {
      projectId: project.id,
      ...(parsed.data.intent === "add" ? { add: names } : { remove: names }),
      actorId: user.id,
    });
    const what = parsed.data.intent === "add" ? r.added : r.removed;
    return {
      ok: true as const,
      message: what.length
        ? `${parsed.data.intent === "add" ? "Added" : "Removed"} ${what.join(", ")}.`
        : "Nothing to change.",
    };
  } catch (e) {
    if (e instanceof ServiceError) return { ok: false as const, message: e.message };
    throw e;
  }
}

export default function PreparationProject() {
  const {
    project,
    notes,
    agreement,
    translation,
    quality,
    differing,
    settled,
    release,
    export: exported,
  } = useLoaderData<typeof loader>();
  const busy = useNavigation().state !== "idle";
  const pct = (x: number | null) => (x === null ? "–" : `${(x * 100).toFixed(1)}%`);
  const result = useActionData<typeof action>();
  return (
    <section>
      <p>
        <Link to="/admin/preparation">← Preparation projects</Link>
      </p>
      <h1>
        {project.name} <small className="muted">({project.sourceLanguage})</small>
      </h1>
      <div className="card">
        <h2 style={{ marginTop: 0 }}>Reviewers</h2>
        <p className="muted">With the admins, the only people who see this project&apos;s source text.</p>
        <ul data-testid="prep-reviewers">
          {project.reviewers.map((r) => (
            <li key={r}>
              {r}{" "}
              <Form method="post" style={{ display: "inline" }}>
                <Csrf />
                <input type="hidden" name="username" value={r} />
                <button type="submit" name="intent" value="remove" className="link">
                  Remove
                </button>
              </Form>
            </li>
          ))}
        </ul>
        <Form method="post" className="row">
          <Csrf />
          <label htmlFor="reviewer">Username</label>
          <input id="reviewer" name="username" type="text" required />
          <button type="submit" name="intent" value="add">
            Name as reviewer
          </button>
        </Form>
        {result && !("release" in result) ? (
          <p className={`notice ${result.ok ? "ok" : "error"}`} role="status">
            {result.message}
          </p>
        ) : null}
      </div>
      <div className="card" data-testid="prep-agreement">
        <h2 style={{ marginTop: 0 }}>Agreement between reviewers</h2>
        {differing.total ? (
          <p>
            <a href="#settlements">{differing.total} notes wait for a settlement</a> of their reviewers&apos;
            differences.
          </p>
        ) : null}
        <p>
          {agreement.proposals} proposals decided by two or more reviewers: percent agreement{" "}
          {pct(agreement.percentAgreement)}, Cohen&apos;s κ{" "}
          {agreement.kappa === null ? `– (${agreement.kappaReason})` : agreement.kappa.toFixed(3)}. Exclusion decided
          alike on {agreement.exclusionAgreed} of {agreement.notesReviewedTwice} notes reviewed twice.
        </p>
      </div>
      <TranslationCard {...translation} busy={busy} />
      <QualityCard projectId={project.id} state={quality} />
      <div className="card table-wrap" id="settlements" data-testid="prep-differing">
        <h2 style={{ marginTop: 0 }}>
          Waiting for a settlement <small className="muted">({differing.total})</small>
        </h2>
        {settled ? (
          <p className="notice ok" role="status">
            Note {settled} is settled.
          </p>
        ) : null}
        {differing.total === 0 ? (
          <p className="muted">No note&apos;s reviews differ.</p>
        ) : (
          <>
            <p className="muted">
              Notes whose submitted reviews differ: settle each by choosing, per proposal, whose decision it takes.
            </p>
            <table>
              <thead>
                <tr>
                  <th>Note</th>
                  <th className="num">Reviews</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {differing.rows.map((r) => (
                  <tr key={r.noteId} data-note={r.externalId}>
                    <td>{r.externalId}</td>
                    <td className="num">{r.reviews}</td>
                    <td>
                      <Link to={`/admin/preparation/${project.id}/settle/${r.noteId}`}>Settle</Link>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <p className="row">
              {differing.after !== null ? <Link to="?#settlements">First</Link> : null}
              {differing.nextAfter !== null ? <Link to={`?after=${differing.nextAfter}#settlements`}>Next</Link> : null}
            </p>
          </>
        )}
      </div>
      <div className="card" data-testid="prep-release">
        <h2 style={{ marginTop: 0 }}>Release</h2>
        <p>
          {release.ready} notes ready in English, excluded cases left out: {release.excluded}
          {release.missing ? `, ${release.missing} not ready:` : "."}
        </p>
        {release.lines.length ? <MissingList lines={release.lines} total={release.missing} /> : null}
        <Form method="post" className="row">
          <Csrf />
          <label htmlFor="study">New study</label>
          <input id="study" name="study" type="text" required />
          <button type="submit" name="intent" value="release">
            Release as a Safe-Psych study
          </button>
        </Form>
        <p>
          <a href={`/admin/preparation/${project.id}/export?what=released`} download>
            Download the released CSV
          </a>
        </p>
        {result && "release" in result ? (
          <div className={`notice ${result.ok ? "ok" : "error"}`} role="status" data-testid="release-result">
            <p style={{ margin: 0 }}>{result.message}</p>
            {"lines" in result && result.lines?.length ? (
              <MissingList lines={result.lines} total={result.lines.length} />
            ) : null}
          </div>
        ) : null}
      </div>
      <div className="card" data-testid="prep-export">
        <h2 style={{ marginTop: 0 }}>Export the minimised notes</h2>
        <p>
          {exported.ready} notes after their final review, in the source language ({project.sourceLanguage}), excluded
          cases left out: {exported.excluded}
          {exported.missing ? `; ${exported.missing} not final:` : "."}
        </p>
        {exported.lines.length ? <MissingList lines={exported.lines} total={exported.missing} /> : null}
        {exported.missing === 0 ? (
          <p className="row">
            <a href={`/admin/preparation/${project.id}/export?format=csv`} download>
              Download CSV
            </a>
            <a href={`/admin/preparation/${project.id}/export?format=jsonl`} download>
              Download JSONL
            </a>
          </p>
        ) : null}
      </div>
      <div className="card table-wrap">
        <h2 style={{ marginTop: 0 }}>
          Notes <small className="muted">({project.notes})</small>
        </h2>
        <table data-testid="prep-project-notes">
          <thead>
            <tr>
              <th>Note</th>
              <th className="num">Proposals</th>
              <th className="num">Submitted reviews</th>
              <th className="num">Excluded</th>
            </tr>
          </thead>
          <tbody>
            {notes.map((n) => (
              <tr key={n.id} data-note={n.externalId}>
                <td>{n.externalId}</td>
                <td className="num">{n.proposals}</td>
                <td className="num">{n.submitted}</td>
                <td className="num">{n.excluded}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** The notes a release or an export waits for, one line each ("NOTE: what (detail)"). */
function MissingList({ lines, total }: { lines: string[]; total: number }) {
  return (
    <>
      <ul className="prep-missing" data-testid="prep-missing">
        {lines.map((l) => (
          <li key={l}>{l}</li>
        ))}
      </ul>
      {total > lines.length ? (
        <p className="muted">… and {total - lines.length} more (prep-release lists them all).</p>
      ) : null}
    </>
  );
}
