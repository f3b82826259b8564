/** The parts of a screening study's admin page: next step, screen, rounds, release, import and settings. */
import { Form } from "@remix-run/react";
import { Csrf } from "~/ui/root-data";
import type { ScreeningImportReport } from "~/screening/screening-import.server";
import type { getStudyOverview } from "~/screening/screening-rounds.server";
import { RoundsTable } from "./screening-figures";
import { RuleFields } from "./rule-fields";

/** What the admin page shows of a study: its overview and a suggested seed for the next round. */
export type ScreeningOverviewView = NonNullable<Awaited<ReturnType<typeof getStudyOverview>>> & {
  suggestedSeed: number;
};

const FILE_TITLES = { items: "Items", labels: "Screen labels", tiers: "Recall tiers" } as const;

export function ImportReport({ report, dryRun }: { report: ScreeningImportReport; dryRun: boolean }) {
  return (
    <div
      className={`notice ${report.ok ? "ok" : "bad"}`}
      data-testid="import-report"
      role={report.ok ? "status" : "alert"}
    >
      <strong>
        {!report.ok
          ? "The files cannot be imported; nothing was written."
          : dryRun
            ? "The files are valid (check only; nothing was written)."
            : report.written
              ? "Imported."
              : "Nothing to change: everything in these files is already imported."}
      </strong>
      {report.files.map((f) => (
        <div key={f.kind}>
          <p style={{ margin: "0.4rem 0 0" }}>
            {FILE_TITLES[f.kind]} ({f.filename}): {f.records} records
            {f.errors.length === 0 ? ` — ${f.created} new, ${f.changed} changed, ${f.unchanged} unchanged` : ""}
            {f.kind === "tiers" && report.tiersForRound ? ` (for round ${report.tiersForRound})` : ""}
          </p>
          {f.errors.length ? (
            <ul className="issues">
              {f.errors.slice(0, 200).map((e, i) => (
                <li key={i}>{e.line > 0 ? `line ${e.line}: ${e.message}` : e.message}</li>
              ))}
              {f.errors.length > 200 ? <li>… and {f.errors.length - 200} more</li> : null}
            </ul>
          ) : null}
          {f.warnings.length ? (
            <ul className="issues">
              {f.warnings.map((e, i) => (
                <li key={i}>warning: {e.line > 0 ? `line ${e.line}: ${e.message}` : e.message}</li>
              ))}
            </ul>
          ) : null}
        </div>
      ))}
    </div>
  );
}

/** The next step of the screening cycle, in words. */
export function NextStep({ data }: { data: ScreeningOverviewView }) {
  const { next } = data;
  return (
    <>
      <div className="card" data-testid="next-step" data-next={next.kind}>
        <strong>Next: </strong>
        {next.kind === "import_items" && "import the corpus (below)."}
        {next.kind === "import_labels" && `import the screen's labels: ${next.unlabelled} items have none.`}
        {next.kind === "open_round" &&
          (next.round === 1
            ? "open round 1: every relevant and borderline item plus concealed controls from not_relevant."
            : `open recall round ${next.round}: the recall screen's clear and possible items plus fresh concealed controls from its “no” tier.`)}
        {next.kind === "in_review" && `round ${next.round} is in review; it closes by itself when every vote is in.`}
        {next.kind === "import_tiers" &&
          `the last round's control-inclusion rate is above the threshold: run a recall screen over the ${data.unusedItems} excluded items no round has used (download their ids below), import its tiers (clear / possible / no), then open round ${next.round}.`}
        {next.kind === "final" &&
          `the control-inclusion rate of round ${next.round} is at or below the threshold: the included set (${data.included} items) is final. Download the release below.`}
      </div>
    </>
  );
}

/** The screen's label counts, with the recall tiers once a recall round is due. */
export function ScreenCounts({ data }: { data: ScreeningOverviewView }) {
  const { screen, next, tiers } = data;
  return (
    <>
      <h2>Screen</h2>
      <dl className="kv card" data-testid="screen-counts">
        <dt>Items</dt>
        <dd>{screen.items}</dd>
        <dt>Relevant</dt>
        <dd>{screen.relevant}</dd>
        <dt>Borderline</dt>
        <dd>{screen.borderline}</dd>
        <dt>Not relevant</dt>
        <dd>{screen.not_relevant}</dd>
        {screen.unlabelled ? (
          <>
            <dt>Without a label</dt>
            <dd>{screen.unlabelled}</dd>
          </>
        ) : null}
        {next.kind === "import_tiers" || (next.kind === "open_round" && next.round > 1) ? (
          <>
            <dt>Recall tiers for round {next.round}</dt>
            <dd data-testid="tier-counts">
              {tiers.clear} clear, {tiers.possible} possible, {tiers.no} no
            </dd>
          </>
        ) : null}
      </dl>
    </>
  );
}

/** The rounds so far, and the open round's progress per reviewer. */
export function RoundsSection({ data }: { data: ScreeningOverviewView }) {
  const { study, rounds } = data;
  const current = rounds.find((r) => r.status === "open");
  return (
    <>
      <h2>Rounds</h2>
      {rounds.length ? <RoundsTable rounds={rounds} studyId={study.id} /> : <p className="muted">No round yet.</p>}
      {current ? (
        <div className="card" data-testid="round-progress">
          <h3 style={{ marginTop: 0 }}>Round {current.number}: progress</h3>
          <table>
            <thead>
              <tr>
                <th>Reviewer</th>
                <th className="num">Submitted</th>
              </tr>
            </thead>
            <tbody>
              {current.reviewers.map((r) => (
                <tr key={r.code}>
                  <td>
                    {r.code} ({r.username})
                  </td>
                  <td className="num">
                    {r.submitted} / {current.figures.items}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}

/** Opening the next round: its reviewers, seed and number of concealed controls. */
export function OpenRoundForm({ data, busy }: { data: ScreeningOverviewView; busy: boolean }) {
  const { study, screen, next, tiers } = data;
  const openRoundNumber = next.kind === "open_round" ? next.round : null;
  const defaultReviewers = new Set(
    data.previousReviewers.length
      ? data.previousReviewers
      : data.raters.slice(0, study.reviewersPerRound).map((r) => r.id),
  );
  return (
    <>
      {openRoundNumber !== null ? (
        <Form method="post" className="card" data-testid="open-round">
          <Csrf />
          <h3 style={{ marginTop: 0 }}>Open round {openRoundNumber}</h3>
          <p className="muted">
            Choose {study.reviewersPerRound} reviewers (users with the rater role). Every reviewer sees the same items
            in the same seeded order, without the screen's labels and without knowing which items are controls.
          </p>
          <fieldset>
            <legend>Reviewers</legend>
            {data.raters.length === 0 ? <p className="muted">No active user has the rater role yet.</p> : null}
            {data.raters.map((r) => (
              <label key={r.id} className="inline">
                <input type="checkbox" name="reviewers" value={r.id} defaultChecked={defaultReviewers.has(r.id)} />{" "}
                {r.username}
              </label>
            ))}
          </fieldset>
          <div className="row">
            <label htmlFor="seed">Seed</label>
            <input id="seed" name="seed" type="number" min={0} defaultValue={data.suggestedSeed} />
            <label htmlFor="controls">Concealed controls</label>
            <input
              id="controls"
              name="controls"
              type="number"
              min={1}
              defaultValue={
                openRoundNumber === 1
                  ? Math.min(study.controlsPerRound, screen.not_relevant)
                  : Math.min(study.controlsPerRound, tiers.no)
              }
            />
            <button type="submit" name="intent" value="open_round" disabled={busy}>
              Open round {openRoundNumber}
            </button>
          </div>
        </Form>
      ) : null}
    </>
  );
}

/** The release files, final or provisional. */
export function ReleaseCard({ data }: { data: ScreeningOverviewView }) {
  const { study, rounds, next } = data;
  const anyClosed = rounds.some((r) => r.status === "closed");
  const files = (suffix: string) =>
    ["included.jsonl", "included.csv", "subset.jsonl", "categories.csv", "manifest.json"].map((f) => (
      <a key={f} className="button secondary" href={`/admin/screening/${study.id}/files/${f}${suffix}`}>
        {f}
      </a>
    ));
  return (
    <>
      {anyClosed ? (
        <div className="card" data-testid="release">
          <h3 style={{ marginTop: 0 }}>Release</h3>
          {next.kind === "final" ? (
            <>
              <p>
                The included subset with per-item votes, consensus tier, modal category and round of inclusion; counts
                by category; a manifest with every round's figures, seeds and content hashes.
              </p>
              <div className="row">{files("")}</div>
            </>
          ) : (
            <>
              <p className="muted">
                The cycle is not finished; a provisional export is marked “final”: false in its manifest.
              </p>
              <div className="row">{files("?allowIncomplete=1")}</div>
            </>
          )}
        </div>
      ) : null}
    </>
  );
}

/** The import of items, screen labels and recall tiers. */
export function ImportForm({ data, busy }: { data: ScreeningOverviewView; busy: boolean }) {
  const { study, rounds, next } = data;
  const fixed = rounds.length > 0;
  return (
    <>
      <h2>Import</h2>
      <Form method="post" encType="multipart/form-data" className="card" data-testid="import-form">
        <Csrf />
        <p className="muted">
          Any of the three files, CSV or JSONL. <strong>Items</strong>: HealthBench JSONL (<code>prompt_id</code>,{" "}
          <code>prompt</code> messages, <code>example_tags</code>, <code>rubrics</code> — kept for the release, never
          shown to reviewers) or <code>id</code>, <code>text</code>. <strong>Screen labels</strong>: <code>id</code>,{" "}
          <code>label</code> (relevant / borderline / not_relevant), optional <code>category</code>,{" "}
          <code>confidence</code>, <code>rationale</code>. <strong>Recall tiers</strong> (after a round that calls for a
          recall round): <code>id</code>, <code>tier</code> (clear / possible / no), optional <code>rationale</code>.
          Every file is checked as a whole; a file with errors writes nothing.
          {fixed ? " The corpus and the screen labels are fixed now that review has started." : ""}
        </p>
        <div className="grid2">
          <div>
            <label htmlFor="items">Items</label>
            <input id="items" name="items" type="file" accept=".csv,.jsonl,.ndjson" />
            <label htmlFor="labels">Screen labels</label>
            <input id="labels" name="labels" type="file" accept=".csv,.jsonl,.ndjson" />
            <label htmlFor="tiers">Recall tiers</label>
            <input id="tiers" name="tiers" type="file" accept=".csv,.jsonl,.ndjson" />
          </div>
          <div>
            <label htmlFor="format">Format</label>
            <select id="format" name="format" defaultValue="auto">
              <option value="auto">From the file names (.csv, .jsonl)</option>
              <option value="csv">CSV</option>
              <option value="jsonl">JSONL</option>
            </select>
            {next.kind === "import_tiers" || (next.kind === "open_round" && next.round > 1) ? (
              <p>
                <a href={`/admin/screening/${study.id}/files/recall-pool.csv`} download>
                  Ids of the {data.unusedItems} items no round has used
                </a>{" "}
                (the recall screen's population).
              </p>
            ) : null}
          </div>
        </div>
        <div className="row" style={{ marginTop: "0.75rem" }}>
          <button type="submit" name="intent" value="check" className="secondary" disabled={busy}>
            Check only
          </button>
          <button type="submit" name="intent" value="import" disabled={busy}>
            Import
          </button>
        </div>
      </Form>
    </>
  );
}

/** The study's settings, until round 1 opens. */
export function SettingsForm({ data, busy }: { data: ScreeningOverviewView; busy: boolean }) {
  const { study, rounds } = data;
  const fixed = rounds.length > 0;
  return (
    <>
      {!fixed ? (
        <details className="card">
          <summary>Settings (fixed once round 1 opens)</summary>
          <Form method="post">
            <Csrf />
            <label htmlFor="s-description">Description</label>
            <input
              id="s-description"
              name="description"
              type="text"
              defaultValue={study.description}
              style={{ width: "100%" }}
            />
            <label htmlFor="s-categories">Category vocabulary, one per line</label>
            <textarea id="s-categories" name="categories" rows={8} defaultValue={study.categories.join("\n")} />
            <div className="row">
              <RuleFields
                values={study}
                idPrefix="s-"
                labels={{
                  reviewersPerRound: { id: "reviewers", label: "Reviewers per round" },
                  inclusionVotes: { id: "votes", label: "Inclusion votes" },
                  controlThreshold: { id: "threshold", label: "Control threshold" },
                  controlsPerRound: { id: "controls", label: "Controls per round" },
                }}
              />
            </div>
            <p>
              <button type="submit" name="intent" value="settings" disabled={busy}>
                Save settings
              </button>
            </p>
          </Form>
        </details>
      ) : null}
    </>
  );
}
