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
  DEFAULT_TRANSLATION_CONCURRENCY,
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

/** Admins only (docs/security.md, "Source text"): the project's notes by id and count, its reviewers. */
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
  const { project, notes, agreement, translation, quality } = useLoaderData<typeof loader>();
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
        {result ? (
          <p className={`notice ${result.ok ? "ok" : "error"}`} role="status">
            {result.message}
          </p>
        ) : null}
      </div>
      <div className="card" data-testid="prep-agreement">
        <h2 style={{ marginTop: 0 }}>Agreement between reviewers</h2>
        <p>
          {agreement.proposals} proposals decided by two or more reviewers: percent agreement{" "}
          {pct(agreement.percentAgreement)}, Cohen&apos;s κ{" "}
          {agreement.kappa === null ? `– (${agreement.kappaReason})` : agreement.kappa.toFixed(3)}. Exclusion decided
          alike on {agreement.exclusionAgreed} of {agreement.notesReviewedTwice} notes reviewed twice.
        </p>
      </div>
      <TranslationCard {...translation} busy={busy} />
      <QualityCard projectId={project.id} state={quality} />
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
