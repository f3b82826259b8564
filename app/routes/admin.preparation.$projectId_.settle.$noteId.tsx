import type { ActionFunctionArgs, LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { useState } from "react";
import { z } from "zod";
import styles from "~/preparation/ui/preparation.css?url";
import { getDb } from "~/platform/db.server";
import { requireById, requireForm, requireRole } from "~/accounts/guard.server";
import { ServiceError } from "~/platform/service-error";
import { Csrf } from "~/ui/root-data";
import { Time } from "~/ui/time";
import { getProject, getSettlementView, settleNote } from "~/preparation/public.server";
import { CATEGORY_LABELS, SettlementChoiceSchema, wholeReviewChoice } from "~/preparation/public";

export const meta: MetaFunction = () => [{ title: "Settle two reviews · Concord" }];
export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];

/** Admins only (docs/security.md, "Source text"): a note of the project with its submitted reviews side by side. */
export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  const project = requireById(params.projectId, (id) => getProject(db, id));
  const view = requireById(params.noteId, (id) => getSettlementView(db, project.id, id));
  return view;
}

const PostSchema = z.object({
  /** "settle" with the choices of the form, or "take-<i>": reviewer i's whole review. */
  intent: z.string().regex(/^(settle|take-\d{1,2})$/, "Unknown form action. Reload the page."),
  seen: z.string().regex(/^\d+(,\d+)*$/, "Reload the page."),
});

/**
 * The settlement: per proposal, marked text and exclusion the reviewer chosen, or one reviewer's whole review. The
 * reviews' versions the page showed are checked in the settlement's transaction (settleNote).
 */
export async function action({ request, params }: ActionFunctionArgs) {
  const user = await requireRole(request, "admin");
  const form = await requireForm(request, user);
  const db = getDb();
  const project = requireById(params.projectId, (id) => getProject(db, id));
  const view = requireById(params.noteId, (id) => getSettlementView(db, project.id, id));
  const post = PostSchema.safeParse(Object.fromEntries([...form.entries()].filter(([k]) => !k.startsWith("p:"))));
  if (!post.success) return { ok: false as const, message: post.error.issues[0]!.message };
  const num = (v: FormDataEntryValue | null) => (typeof v === "string" && /^\d+$/.test(v) ? Number(v) : undefined);
  const raw =
    post.data.intent !== "settle"
      ? wholeReviewChoice(view.note.proposals, Number(post.data.intent.slice("take-".length)))
      : {
          proposals: Object.fromEntries(view.note.proposals.map((p) => [p.id, num(form.get(`p:${p.id}`))])),
          missed: num(form.get("missed")),
          exclusion: num(form.get("exclusion")),
        };
  const choice = SettlementChoiceSchema.safeParse(raw);
  if (!choice.success)
    return { ok: false as const, message: "Choose a reviewer for every proposal, the marked text and the exclusion." };
  try {
    settleNote(db, {
      projectId: project.id,
      noteId: view.note.id,
      choice: choice.data,
      seen: post.data.seen.split(",").map(Number),
      actorId: user.id,
    });
  } catch (e) {
    if (e instanceof ServiceError) return { ok: false as const, message: e.message };
    throw e;
  }
  return redirect(`/admin/preparation/${project.id}?settled=${encodeURIComponent(view.note.externalId)}#settlements`);
}

type View = ReturnType<typeof useLoaderData<typeof loader>>;

const decisionText = (view: View, reviewer: number, id: string) => {
  const r = view.reviews[reviewer]!.values;
  if (r.excluded) return "(excluded the case)";
  const d = r.decisions[id];
  const p = view.note.proposals.find((x) => x.id === id)!;
  if (!d) return "(undecided)";
  if (d.action === "reject") return "reject: kept";
  const text = d.action === "edit" ? (d.text ?? "") : p.replacement;
  return `${d.action} → ${text || "(removed)"}`;
};

export default function SettleNote() {
  const view = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const n = view.reviews.length;
  const [chosen, setChosen] = useState<Record<string, number>>(() => ({
    ...Object.fromEntries(view.note.proposals.map((p) => [p.id, 0])),
    missed: 0,
    exclusion: 0,
  }));
  const differs = (values: string[]) => values.some((v) => v !== values[0]);
  const options = (field: string, texts: string[]) => (
    <div className="prep-settle-grid" role="radiogroup">
      {texts.map((t, i) => (
        <label key={i} className={chosen[field] === i ? "chosen" : ""}>
          <input
            type="radio"
            name={field === "missed" || field === "exclusion" ? field : `p:${field}`}
            value={i}
            checked={chosen[field] === i}
            onChange={() => setChosen({ ...chosen, [field]: i })}
          />{" "}
          <strong>{view.reviews[i]!.letter}</strong> <span data-testid="settle-option">{t}</span>
        </label>
      ))}
    </div>
  );
  const original = (p: View["note"]["proposals"][number]) =>
    view.note.sections[p.section]?.content.slice(p.start, p.end) ?? "";
  return (
    <section>
      <p>
        <Link to={`/admin/preparation/${view.note.projectId}#settlements`}>← {view.note.projectName}</Link>
      </p>
      <h1>
        Settle note {view.note.externalId} <small className="muted">({n} reviews)</small>
      </h1>
      <p className="muted">
        {view.reviews.map((r) => (
          <span key={r.letter}>
            Reviewer {r.letter}: {r.username}
            {r.submittedAt ? (
              <>
                {" "}
                (submitted <Time at={r.submittedAt} style="datetime" />)
              </>
            ) : null}
            {". "}
          </span>
        ))}
      </p>
      {result && !result.ok ? (
        <p className="notice error" role="alert">
          {result.message}
        </p>
      ) : null}
      {view.state === "settled" ? (
        <p className="notice ok" data-testid="settled">
          Settled by {view.settled?.by ?? "the command line"} on{" "}
          {view.settled ? <Time at={view.settled.at} style="datetime" /> : null}: this is the note&apos;s final review.
        </p>
      ) : view.state === "not differing" ? (
        <p className="notice">This note&apos;s reviews do not differ: there is nothing to settle.</p>
      ) : (
        <Form method="post" className="card" data-testid="settle-form">
          <Csrf />
          <input type="hidden" name="seen" value={view.reviews.map((r) => r.version).join(",")} />
          <div className="row">
            {view.reviews.map((r, i) => (
              <button
                key={r.letter}
                type="submit"
                name="intent"
                value={`take-${i}`}
                className="secondary"
                data-testid={`take-${r.letter}`}
              >
                Take {r.letter}&apos;s whole review
              </button>
            ))}
          </div>
          <h2>Exclusion</h2>
          <div
            className={`prep-settle-row${differs(view.reviews.map((r) => String(r.values.excluded))) ? " differs" : ""}`}
            data-testid="settle-exclusion"
          >
            {options(
              "exclusion",
              view.reviews.map((r) => (r.values.excluded ? `excluded: ${r.values.exclusionReason}` : "kept")),
            )}
          </div>
          <h2>Proposals</h2>
          <ol className="prep-proposals" style={{ maxHeight: "none" }}>
            {view.note.proposals.map((p) => {
              const texts = view.reviews.map((_, i) => decisionText(view, i, p.id));
              return (
                <li
                  key={p.id}
                  className={`prep-settle-row${differs(texts) ? " differs" : ""}`}
                  data-proposal-row={p.id}
                >
                  <div className="prep-row-head">
                    <span className={`prep-cat cat-${p.category}`}>{CATEGORY_LABELS[p.category]}</span>{" "}
                    <small className="muted">{view.sectionTitles[p.section]}</small> <q>{original(p)}</q> →{" "}
                    <strong>{p.replacement || "(removed)"}</strong>
                  </div>
                  {options(p.id, texts)}
                </li>
              );
            })}
          </ol>
          <h2>Marked text (missed by the detectors)</h2>
          <div
            className={`prep-settle-row${differs(view.reviews.map((r) => JSON.stringify(r.values.missed))) ? " differs" : ""}`}
            data-testid="settle-missed"
          >
            {options(
              "missed",
              view.reviews.map((r) =>
                r.values.excluded
                  ? "(excluded the case)"
                  : r.values.missed.length === 0
                    ? "nothing marked"
                    : r.values.missed
                        .map(
                          (m) =>
                            `“${view.note.sections[m.section]?.content.slice(m.start, m.end) ?? ""}” → ${m.replacement || "(removed)"}`,
                        )
                        .join("; "),
              ),
            )}
          </div>
          <p>
            <button type="submit" name="intent" value="settle">
              Settle with these choices
            </button>
          </p>
        </Form>
      )}
      <div className="card">
        <h2 style={{ marginTop: 0 }}>The note</h2>
        {view.note.sections.map((s, i) => (
          <section key={s.order}>
            <h3>{view.sectionTitles[i]}</h3>
            <p className="prep-text">{s.content}</p>
          </section>
        ))}
      </div>
    </section>
  );
}
