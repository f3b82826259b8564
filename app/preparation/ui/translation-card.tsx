/**
 * The translation card of a preparation project's page (docs/preparation.md, "Translation"): where the translation
 * stands, the sections whose last call failed (with the reason's codes, never the text), the latest job, and the
 * form that starts a job on a configured provider. Counts and codes only.
 */
import { Form, Link } from "@remix-run/react";
import { Csrf } from "~/ui/root-data";

export interface TranslationCardProps {
  status: {
    notes: number;
    finalNotes: number;
    excluded: number;
    notFinal: number;
    sections: number;
    translated: number;
    backTranslated: number;
    changed: number;
    failing: number;
    failedCalls: number;
  };
  failures: { note: string; section: number; reason: string; errors: number }[];
  moreFailures: number;
  job: { id: number; status: string; done: number; total: number } | null;
  providers: { name: string; model: string; keyAvailable: boolean }[];
  providersProblem: string | null;
  defaults: { concurrency: number; maxTokens: number };
  busy: boolean;
}

const running = (status: string | undefined) => status === "queued" || status === "running";

export function TranslationCard(props: TranslationCardProps) {
  const { status: s, failures, job, providers } = props;
  const usable = providers.filter((p) => p.keyAvailable);
  return (
    <div className="card" data-testid="prep-translation">
      <h2 style={{ marginTop: 0 }}>Translation</h2>
      <p>
        {s.finalNotes} of {s.notes} notes have a final text ({s.excluded} excluded, {s.notFinal} not final yet: not
        translated). Of their {s.sections} sections, <strong>{s.translated}</strong> are translated into English and{" "}
        <strong>{s.backTranslated}</strong> back-translated.
        {s.changed > 0
          ? ` ${s.changed} were translated from a final text that has changed since: the next run translates them again.`
          : ""}
      </p>
      {s.failing > 0 ? (
        <div className="notice warn" role="status">
          <p>
            {s.failing} section{s.failing === 1 ? "" : "s"} failed at the last try ({s.failedCalls} failed call
            {s.failedCalls === 1 ? "" : "s"} in all): the next run asks them again.
          </p>
          <table data-testid="prep-translation-failures">
            <thead>
              <tr>
                <th>Note</th>
                <th className="num">Section</th>
                <th>Reason</th>
                <th className="num">Failed calls</th>
              </tr>
            </thead>
            <tbody>
              {failures.map((f) => (
                <tr key={`${f.note}:${f.section}`}>
                  <td>{f.note}</td>
                  <td className="num">{f.section + 1}</td>
                  <td>
                    <code>{f.reason}</code>
                  </td>
                  <td className="num">{f.errors}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {props.moreFailures > 0 ? <p>… and {props.moreFailures} more.</p> : null}
        </div>
      ) : null}
      {job ? (
        <p data-testid="prep-translation-job">
          Latest job: <Link to={`/admin/eval-jobs/${job.id}`}>job {job.id}</Link>, {job.status} ({job.done} of{" "}
          {job.total} sections).
        </p>
      ) : null}
      {props.providersProblem ? (
        <p className="notice warn" role="alert">
          {props.providersProblem}
        </p>
      ) : usable.length === 0 ? (
        <p className="muted">
          No model provider can be used: name one in the server&apos;s providers file (docs/deploying.md, &ldquo;Model
          providers&rdquo;).
        </p>
      ) : (
        <Form method="post" className="stacked" aria-label="Start a translation">
          <Csrf />
          <p className="muted">
            The paper&apos;s prompt (Safe-Psych, appendix 8.1), one section at a time, temperature 0; then each
            translation back into the notes&apos; language. Only what is missing is asked.
          </p>
          <label>
            Model
            <select name="provider" required>
              {providers.map((p) => (
                <option key={p.name} value={p.name} disabled={!p.keyAvailable}>
                  {p.name} ({p.model}){p.keyAvailable ? "" : " — key missing on the server"}
                </option>
              ))}
            </select>
          </label>
          <label>
            Longest answer (tokens)
            <input name="maxTokens" type="text" inputMode="numeric" defaultValue={props.defaults.maxTokens} />
          </label>
          <label>
            Calls in flight
            <input name="concurrency" type="text" inputMode="numeric" defaultValue={props.defaults.concurrency} />
          </label>
          <label className="inline">
            <input type="checkbox" name="backTranslateOnly" value="on" /> Back-translations only
          </label>
          <button type="submit" name="intent" value="translate" disabled={props.busy || running(job?.status)}>
            Start the translation
          </button>
          {running(job?.status) ? <span className="muted"> A translation job of this project is running.</span> : null}
        </Form>
      )}
    </div>
  );
}
