/**
 * The quality check's card on a preparation project's page (docs/preparation.md, "Quality"): the thresholds and
 * test names, the button that scores the back-translations, the COMET import and the link to the report. Its forms
 * post to /admin/preparation/<id>/quality.
 */
import { Link, useFetcher } from "@remix-run/react";
import type { PrepQualitySettings } from "../../../db/vocabulary";
import { CommandLines } from "../../ui/command-lines";
import { Csrf } from "../../ui/root-data";

export interface QualityAnswer {
  ok: boolean;
  summary: string;
  lines: string[];
}

export function QualityCard({
  projectId,
  state,
}: {
  projectId: number;
  state: { settings: PrepQualitySettings; translatedNotes: number; scored: number; needsCorrection: number };
}) {
  const check = useFetcher<QualityAnswer>();
  const comet = useFetcher<QualityAnswer>();
  const action = `/admin/preparation/${projectId}/quality`;
  const s = state.settings;
  const value = (x: number | null) => (x === null ? "" : String(x));
  return (
    <div className="card" data-testid="prep-quality">
      <h2 style={{ marginTop: 0 }}>Quality of the translations</h2>
      <p>
        {state.translatedNotes} notes translated, {state.scored} scored, {state.needsCorrection} needing correction.{" "}
        <Link to={`/admin/preparation/${projectId}/report`}>The preparation report</Link>
      </p>
      <check.Form method="post" action={action} className="stack">
        <Csrf />
        <p className="muted">
          A note below a threshold, or whose back-translation loses a test name or score, needs correction. Leave a
          threshold empty not to check it.
        </p>
        <div className="row">
          <label>
            BLEU at least{" "}
            <input name="minBleu" type="number" min={0} max={100} step="any" defaultValue={value(s.minBleu)} />
          </label>
          <label>
            chrF at least{" "}
            <input name="minChrf" type="number" min={0} max={100} step="any" defaultValue={value(s.minChrf)} />
          </label>
          <label>
            COMET at least <input name="minComet" type="number" step="any" defaultValue={value(s.minComet)} />
          </label>
        </div>
        <label>
          Test names to keep (one a line, matched as written)
          <textarea name="tests" rows={3} defaultValue={s.tests.join("\n")} />
        </label>
        <p>
          <button type="submit" name="intent" value="quality" disabled={check.state !== "idle"}>
            {check.state !== "idle" ? "Checking…" : "Check quality"}
          </button>
        </p>
      </check.Form>
      {check.data ? <CommandLines testId="prep-quality-answer" {...check.data} /> : null}
      <comet.Form method="post" action={action} encType="multipart/form-data" className="row">
        <Csrf />
        <label>
          COMET scores (CSV or JSONL: note_id, section, score) <input name="file" type="file" accept=".csv,.jsonl" />
        </label>
        <button type="submit" name="intent" value="comet" disabled={comet.state !== "idle"}>
          Import COMET scores
        </button>
      </comet.Form>
      {comet.data ? <CommandLines testId="prep-comet-answer" {...comet.data} /> : null}
    </div>
  );
}
