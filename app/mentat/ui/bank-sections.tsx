/** The parts of a MENTAT question bank's admin page: the fitted labels, the fit, the variant sets, the questions. */
import { Form } from "@remix-run/react";
import { useMemo } from "react";
import { columnHelper } from "~/ui/data-table";
import {
  DEFAULT_AGES,
  DEFAULT_RACES,
  MENTAT_DOMAINS,
  OPTION_LETTERS,
  VARIANT_DIMENSIONS,
} from "~/expert-panel/domain/expert-scales";
import { WindowTable } from "~/ui/window-table";
import type { ListWindow } from "~/platform/list-window";
import { Csrf } from "~/ui/root-data";
import type { getLatestFit } from "~/mentat/fits.server";
import { CURRENT_MENTAT_FIT, MENTAT_FIT_VERSIONS } from "~/mentat/domain/bradley-terry";
import type { listDatasets, QuestionRow } from "~/mentat/questions.server";
import { Time } from "~/ui/time";

type LatestFit = NonNullable<ReturnType<typeof getLatestFit>>;

/** What the page shows of the latest fit (the loader's projection of it). */
export interface BankFitView {
  id: LatestFit["id"];
  createdAt: LatestFit["createdAt"];
  params: LatestFit["params"];
  stale: LatestFit["stale"];
  nRows: LatestFit["result"]["nRows"];
  objective: LatestFit["result"]["labels"]["objective"];
  converged: LatestFit["result"]["labels"]["converged"];
  notConverged: LatestFit["result"]["labels"]["bootstrap"]["notConverged"];
  raters: LatestFit["result"]["labels"]["raters"];
  /** Of the questions the page shows. */
  questions: LatestFit["result"]["labels"]["questions"];
  /** Every question whose fit is separated. */
  separated: string[];
  /** Of the questions the page shows. */
  agreement: LatestFit["result"]["agreement"];
}

/** The latest fit: its parameters and each expert's slope and offset. */
export function FitSummary({ fit }: { fit: BankFitView | null }) {
  return (
    <>
      {fit ? (
        <>
          <p>
            Fit {fit.id} of <Time at={fit.createdAt} />: {fit.nRows} ratings, {fit.params.raterEffects}, MENTAT&apos;s
            fit of {fit.params.fitVersion}, penalty {fit.params.penalty}, slopes {fit.params.slopeBounds[0]}–
            {fit.params.slopeBounds[1]}, ridge {fit.params.strengthPenalty}, {fit.params.bootstrap} bootstrap refits
            (seed {fit.params.seed}), objective {fit.objective.toFixed(3)},{" "}
            {fit.converged ? "converged" : <strong className="stale">not converged</strong>}
            {fit.notConverged ? ` (${fit.notConverged} refits not converged)` : ""}.
          </p>
          {fit.separated.length ? (
            <p className="stale">
              Separated, no finite maximum (an option never loses or never wins), labels not reliable:{" "}
              {fit.separated.join(", ")}.
            </p>
          ) : null}
          {fit.stale ? <p className="stale">Ratings changed since this fit: run it again before exporting.</p> : null}
          <div className="table-scroll">
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
          </div>
        </>
      ) : (
        <p className="card">No fit yet. Fit once the experts have submitted ratings.</p>
      )}
    </>
  );
}

/** Fitting the hierarchical Bradley–Terry model from the submitted ratings. */
export function FitForm({ busy, running }: { busy: boolean; running: boolean }) {
  return (
    <>
      <Form method="post" className="card">
        <Csrf />
        <h3 style={{ marginTop: 0 }}>Fit the hierarchical Bradley–Terry model</h3>
        <p className="muted">
          From the submitted ratings: one strength vector per question, a slope and an offset per expert; labels =
          softmax of the strengths, with percentile bootstrap intervals. Krippendorff's α (interval) per question.
        </p>
        <label htmlFor="bootstrap">Bootstrap refits</label>
        <input
          id="bootstrap"
          name="bootstrap"
          type="number"
          min={0}
          max={1000}
          defaultValue={MENTAT_FIT_VERSIONS[CURRENT_MENTAT_FIT].bootstrap}
        />
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
            {running ? "A fit is running…" : busy ? "Starting…" : "Fit labels"}
          </button>
        </p>
      </Form>
    </>
  );
}

/** The expanded variant sets, each with its evaluation-records export. */
export function DatasetsTable({ bankId, datasets }: { bankId: number; datasets: ReturnType<typeof listDatasets> }) {
  return (
    <>
      <div className="table-scroll">
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
                    <a href={`/admin/mentat/${bankId}/export?set=${d.dimension}`}>{d.dimension}.jsonl</a>{" "}
                    <small>
                      (
                      <a href={`/admin/mentat/${bankId}/export?set=${d.dimension}&allowIntended=1`}>
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
      </div>
    </>
  );
}

/** Expanding the demographic variants of the questions. */
export function ExpandForm({ busy }: { busy: boolean }) {
  return (
    <>
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
        <input id="races" name="races" type="text" defaultValue={DEFAULT_RACES.join(", ")} style={{ width: "100%" }} />
        <p>
          <button type="submit" name="intent" value="expand" disabled={busy}>
            Expand
          </button>
        </p>
      </Form>
    </>
  );
}

const col = columnHelper<QuestionRow & { labels: string; intervals: string; alpha: string }>();
const pct = (p: number) => `${Math.round(p * 100)}%`;

/** The bank's questions with their fitted preference labels and agreement. */
export function QuestionsTable({ questions, fit }: { questions: ListWindow<QuestionRow>; fit: BankFitView | null }) {
  const labelOf = useMemo(() => new Map((fit?.questions ?? []).map((q) => [q.question, q])), [fit]);
  const alphaOf = useMemo(() => new Map((fit?.agreement ?? []).map((q) => [q.question, q])), [fit]);
  const rows = questions.rows.map((q) => {
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
      col.accessor("externalId", { id: "externalId", header: "Question" }),
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
    <>
      <WindowTable
        window={{ ...questions, rows }}
        columns={columns}
        sortable={["position", "externalId"]}
        noun="questions"
        testId="questions"
        filterLabel="Question id starts with"
        filters={
          <select
            name="domain"
            aria-label="Domain"
            defaultValue={(questions.query.filters as Record<string, string>).domain}
          >
            <option value="">All domains</option>
            {MENTAT_DOMAINS.map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </select>
        }
        rowProps={(r) => ({ "data-question": r.externalId })}
      />
    </>
  );
}
