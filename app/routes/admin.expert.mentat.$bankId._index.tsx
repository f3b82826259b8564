import type { ActionFunctionArgs, LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useNavigation, useSearchParams } from "@remix-run/react";
import { useMemo } from "react";
import { z } from "zod";
import { ActionResult, ImportedNotice } from "~/ui/admin-notices";
import { columnHelper, DataTable } from "~/ui/data-table";
import { ExpertPanel } from "~/expert-panel/ui/expert-panel";
import styles from "~/expert-panel/ui/expert-ratings.css?url";
import { DEFAULT_AGES, DEFAULT_RACES, OPTION_LETTERS, VARIANT_DIMENSIONS } from "~/expert-panel/domain/expert-scales";
import { getDb } from "~/platform/db.server";
import { parseIntent } from "~/platform/intent";
import { requireById, requireForm, requireRole } from "~/accounts/guard.server";
import { Csrf } from "~/root";
import {
  addBankRaters,
  expandBank,
  FitOptionsSchema,
  getBank,
  getLatestFit,
  listBankPanel,
  listBankQuestions,
  listDatasets,
  removeBankRater,
  runBankFit,
  type QuestionRow,
} from "~/mentat/mentat.server";
import { ServiceError } from "~/accounts/users.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `${data?.bank.name ?? "Question bank"} · Concord` },
];
export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];

function bankOr404(param: string | undefined) {
  return requireById(param, (id) => getBank(getDb(), id), "No such question bank.");
}

export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const bank = bankOr404(params.bankId);
  const db = getDb();
  const fit = getLatestFit(db, bank.id);
  return {
    bank,
    questions: listBankQuestions(db, bank.id),
    panel: listBankPanel(db, bank.id),
    datasets: listDatasets(db, bank.id),
    fit: fit && {
      id: fit.id,
      createdAt: fit.createdAt,
      params: fit.params,
      stale: fit.stale,
      nRows: fit.result.nRows,
      objective: fit.result.labels.objective,
      converged: fit.result.labels.converged,
      notConverged: fit.result.labels.bootstrap.notConverged,
      raters: fit.result.labels.raters,
      questions: fit.result.labels.questions,
      agreement: fit.result.agreement,
    },
  };
}

const ListSchema = z
  .string()
  .optional()
  .transform((s) => (s?.trim() ? s.split(",").map((x) => x.trim()) : undefined));

const ActionSchema = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal("add_rater"), raterId: z.string().min(1) }),
  z.object({ intent: z.literal("remove_rater"), raterId: z.string().min(1) }),
  z.object({
    intent: z.literal("expand"),
    dimension: z.enum([...VARIANT_DIMENSIONS, "all"]),
    ages: ListSchema,
    races: ListSchema,
  }),
  z.object({
    intent: z.literal("fit"),
    bootstrap: z.coerce
      .number()
      .int()
      .min(0)
      .max(1000, "At most 1000 refits from the web page; use the mentat-fit command for more."),
    seed: z.string(),
    raterEffects: z.string(),
  }),
]);

export async function action({ request, params }: ActionFunctionArgs) {
  const me = await requireRole(request, "admin");
  const form = await requireForm(request, me);
  const bank = bankOr404(params.bankId);
  const parsed = parseIntent(form, ActionSchema);
  if (!parsed.ok) return { ok: false as const, message: parsed.message };
  const db = getDb();
  const a = parsed.data;
  try {
    if (a.intent === "add_rater") {
      addBankRaters(db, { bankId: bank.id, raterIds: [a.raterId], actorId: me.id });
      return { ok: true as const, message: "Added to the panel." };
    }
    if (a.intent === "remove_rater") {
      removeBankRater(db, { bankId: bank.id, raterId: a.raterId, actorId: me.id });
      return { ok: true as const, message: "Removed from the panel; their submitted ratings are kept." };
    }
    if (a.intent === "expand") {
      const ages = a.ages?.map(Number);
      if (ages?.some((x) => !Number.isInteger(x)))
        return { ok: false as const, message: "Ages must be whole numbers, separated by commas." };
      const done = (a.dimension === "all" ? VARIANT_DIMENSIONS : [a.dimension]).map((dimension) => {
        const r = expandBank(db, { bankId: bank.id, dimension, params: { ages, races: a.races }, actorId: me.id });
        return `${dimension}: ${r.count}${r.unchanged ? " (unchanged)" : ""}`;
      });
      return { ok: true as const, message: `Variant sets — ${done.join(", ")}.` };
    }
    const options = FitOptionsSchema.safeParse({ bootstrap: a.bootstrap, seed: a.seed, raterEffects: a.raterEffects });
    if (!options.success) return { ok: false as const, message: options.error.issues[0]!.message };
    const fit = runBankFit(db, { bankId: bank.id, options: options.data, actorId: me.id });
    return {
      ok: true as const,
      message: `Fitted ${fit.result.labels.questions.length} questions from ${fit.result.nRows} ratings (${options.data.bootstrap} bootstrap refits).`,
    };
  } catch (e) {
    if (e instanceof ServiceError) return { ok: false as const, message: e.message };
    throw e;
  }
}

const col = columnHelper<QuestionRow & { labels: string; intervals: string; alpha: string }>();
const pct = (p: number) => `${Math.round(p * 100)}%`;

export default function BankPage() {
  const { bank, questions, panel, datasets, fit } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const busy = useNavigation().state !== "idle";
  const [search] = useSearchParams();
  const imported = search.get("imported")?.split("-");
  const labelOf = useMemo(() => new Map((fit?.questions ?? []).map((q) => [q.question, q])), [fit]);
  const alphaOf = useMemo(() => new Map((fit?.agreement ?? []).map((q) => [q.question, q])), [fit]);
  const rows = questions.map((q) => {
    const l = labelOf.get(q.externalId);
    const a = alphaOf.get(q.externalId);
    return {
      ...q,
      labels: l ? l.labels.map((p, i) => `${OPTION_LETTERS[i]} ${pct(p)}`).join(" · ") : "",
      intervals: l
        ? l.labels
            .map((_, i) => `${OPTION_LETTERS[i]}: 95% interval ${pct(l.lower[i]!)}–${pct(l.upper[i]!)}`)
            .join("\n")
        : "",
      alpha: a?.alpha === null || a?.alpha === undefined ? "" : a.alpha.toFixed(2),
    };
  });
  const columns = useMemo(
    () => [
      col.accessor((r) => r.position + 1, { id: "position", header: "#" }),
      col.accessor("externalId", { header: "Question" }),
      col.accessor("domain", { header: "Domain" }),
      col.accessor((r) => (r.preference ? "preference" : "intended answer"), { id: "label", header: "Label from" }),
      col.accessor(
        (r) =>
          [r.genders.length ? r.genders.join("/") : "neutral", r.hasAge ? "<AGE>" : "", r.hasRace ? "<NAT>" : ""]
            .filter(Boolean)
            .join(" "),
        {
          id: "variables",
          header: "Variables",
        },
      ),
      col.accessor("submitted", { header: "Ratings" }),
      col.accessor("alpha", { header: "α (interval)" }),
      col.accessor("labels", {
        header: "Preference label",
        cell: (info) => (
          <span className="labels" title={info.row.original.intervals}>
            {info.getValue()}
          </span>
        ),
      }),
    ],
    [],
  );
  return (
    <section>
      <p>
        <Link to="/admin/expert">Expert ratings</Link> ›
      </p>
      <div className="row">
        <h1>{bank.name}</h1>
        <span className="spacer" />
        <span className="muted">
          {bank.numQuestions} questions · preference labels for {bank.preferenceDomains.join(", ") || "no domain"} (
          {bank.numRated} questions) · seed {bank.seed}
        </span>
      </div>
      <ImportedNotice counts={imported} />
      <ActionResult result={result} />

      <h2>Experts</h2>
      <ExpertPanel
        panel={panel}
        total={bank.numRated}
        busy={busy}
        emptyText="Nobody rates this bank yet."
        everyoneText="Every active user with the rater role is on the panel. Give more users the rater role on the Users page."
        markDeactivated
      />

      <h2>Preference labels</h2>
      <div className="grid2">
        <div>
          {fit ? (
            <>
              <p>
                Fit {fit.id} of {new Date(fit.createdAt).toISOString().slice(0, 16).replace("T", " ")} UTC: {fit.nRows}{" "}
                ratings, {fit.params.raterEffects}, penalty {fit.params.penalty}, ridge {fit.params.strengthPenalty},{" "}
                {fit.params.bootstrap} bootstrap refits (seed {fit.params.seed}), objective {fit.objective.toFixed(3)},{" "}
                {fit.converged ? "converged" : <strong className="stale">not converged</strong>}
                {fit.notConverged ? ` (${fit.notConverged} refits not converged)` : ""}.
              </p>
              {fit.stale ? (
                <p className="stale">Ratings changed since this fit: run it again before exporting.</p>
              ) : null}
              <table>
                <thead>
                  <tr>
                    <th>Expert</th>
                    <th className="num">Ratings</th>
                    <th className="num">Slope</th>
                    <th className="num">Offset</th>
                  </tr>
                </thead>
                <tbody>
                  {fit.raters.map((r) => (
                    <tr key={r.rater}>
                      <td>{r.rater}</td>
                      <td className="num">{r.nAnnotations}</td>
                      <td className="num">{r.slope.toFixed(3)}</td>
                      <td className="num">{r.offset.toFixed(3)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          ) : (
            <p className="card">No fit yet. Fit once the experts have submitted ratings.</p>
          )}
        </div>
        <Form method="post" className="card">
          <Csrf />
          <h3 style={{ marginTop: 0 }}>Fit the hierarchical Bradley–Terry model</h3>
          <p className="muted">
            From the submitted ratings: one strength vector per question, a slope and an offset per expert; labels =
            softmax of the strengths, with percentile bootstrap intervals. Krippendorff's α (interval) per question.
          </p>
          <label htmlFor="bootstrap">Bootstrap refits</label>
          <input id="bootstrap" name="bootstrap" type="number" min={0} max={1000} defaultValue={200} />
          <label htmlFor="fit-seed">Seed</label>
          <input id="fit-seed" name="seed" type="number" min={0} defaultValue={0} />
          <label htmlFor="rater-effects">Expert effects</label>
          <select id="rater-effects" name="raterEffects" defaultValue="slope+offset">
            <option value="slope+offset">slope and offset (MENTAT)</option>
            <option value="slope">slope only</option>
            <option value="none">none (plain Bradley–Terry)</option>
          </select>
          <p>
            <button type="submit" name="intent" value="fit" disabled={busy}>
              {busy ? "Fitting…" : "Fit labels"}
            </button>
          </p>
        </Form>
      </div>

      <h2>Variant sets and export</h2>
      <div className="grid2">
        <table>
          <thead>
            <tr>
              <th>Set</th>
              <th className="num">Variants</th>
              <th>Content hash</th>
              <th>Evaluation records</th>
            </tr>
          </thead>
          <tbody>
            {datasets.length === 0 ? (
              <tr>
                <td colSpan={4} className="muted">
                  Not expanded yet.
                </td>
              </tr>
            ) : (
              datasets.map((d) => (
                <tr key={d.id} data-dataset={d.dimension}>
                  <td>{d.dimension}</td>
                  <td className="num">{d.count}</td>
                  <td>
                    <code>{d.contentHash.slice(0, 12)}</code>
                  </td>
                  <td>
                    <a href={`/admin/expert/mentat/${bank.id}/export?set=${d.dimension}`} download>
                      {d.dimension}.jsonl
                    </a>{" "}
                    <small>
                      (
                      <a href={`/admin/expert/mentat/${bank.id}/export?set=${d.dimension}&allowIntended=1`}>
                        with intended answers where unfitted
                      </a>
                      )
                    </small>
                  </td>
                </tr>
              ))
            )}
          </tbody>
        </table>
        <Form method="post" className="card">
          <Csrf />
          <h3 style={{ marginTop: 0 }}>Expand demographic variants</h3>
          <label htmlFor="dimension">Set</label>
          <select id="dimension" name="dimension" defaultValue="all">
            <option value="all">all four</option>
            {VARIANT_DIMENSIONS.map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </select>
          <label htmlFor="ages">Ages</label>
          <input id="ages" name="ages" type="text" defaultValue={DEFAULT_AGES.join(", ")} />
          <label htmlFor="races">Races / nationalities</label>
          <input
            id="races"
            name="races"
            type="text"
            defaultValue={DEFAULT_RACES.join(", ")}
            style={{ width: "100%" }}
          />
          <p>
            <button type="submit" name="intent" value="expand" disabled={busy}>
              Expand
            </button>
          </p>
        </Form>
      </div>

      <h2>Questions ({questions.length})</h2>
      <DataTable
        data={rows}
        columns={columns}
        filterLabel="Filter questions"
        rowProps={(r) => ({ "data-question": r.externalId })}
      />
    </section>
  );
}
