/**
 * The evaluation pages' import of run folders (docs/evaluation.md, "Runs in the app"): paths under the deployment's
 * runs folder, a preview (the runs found, or every refusal as FILE:LINE: reason) and then the import.
 */
import { Form, useNavigation } from "@remix-run/react";
import { Csrf } from "~/ui/root-data";

export interface ImportPreview {
  problems: string[];
  moreProblems: number;
  runs: { path: string; model: string; strategy: string; seed: number | null; trajectories: number; status: string }[];
  trajectories: number;
  dryRun: boolean;
}

export function ImportResultView({ result }: { result: ImportPreview | { error: string } | null | undefined }) {
  if (!result) return null;
  if ("error" in result)
    return (
      <div className="notice error" role="alert" data-testid="import-refused">
        {result.error}
      </div>
    );
  if (result.problems.length > 0)
    return (
      <div className="notice error" role="alert" data-testid="import-refused">
        <p>Nothing was imported:</p>
        <ul>
          {result.problems.map((p, i) => (
            <li key={i}>
              <code>{p}</code>
            </li>
          ))}
          {result.moreProblems > 0 && <li>… and {result.moreProblems} more</li>}
        </ul>
      </div>
    );
  return (
    <div className="notice" data-testid="import-preview">
      <p>
        {result.dryRun ? "Preview: " : "Imported: "}
        {result.runs.length} runs, {result.trajectories} trajectories.
        {result.dryRun && " Nothing is written until you import."}
      </p>
      <table>
        <thead>
          <tr>
            <th>Model</th>
            <th>Strategy</th>
            <th className="num">Seed</th>
            <th className="num">Cases</th>
            <th>Status</th>
          </tr>
        </thead>
        <tbody>
          {result.runs.map((r) => (
            <tr key={r.path}>
              <td>{r.model}</td>
              <td>{r.strategy}</td>
              <td className="num">{r.seed ?? "—"}</td>
              <td className="num">{r.trajectories}</td>
              <td>{r.status}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function ImportForm({
  root,
  evaluation,
  studies,
  defaults,
}: {
  /** The runs folder, or null when the deployment configured none. */
  root: string | null;
  /** The evaluation runs are added to; null for a new evaluation (name, gold file and study asked). */
  evaluation: string | null;
  studies?: { id: number; name: string }[];
  defaults?: Record<string, string>;
}) {
  const busy = useNavigation().state !== "idle";
  if (root === null)
    return (
      <p className="card">
        No runs folder is configured on the server (<code>CONCORD_RUNS_DIR</code>). Import from the command line:{" "}
        <code>npm run concord -- eval-import --evaluation NAME --gold data_gt.json --runs DIR</code>.
      </p>
    );
  return (
    <Form method="post" className="card stack" data-testid="import-form">
      <Csrf />
      <p className="muted">
        Folders and files under the runs folder <code>{root}</code>: a run folder, or a folder of run folders (one a
        line).
      </p>
      {evaluation === null && (
        <>
          <label>
            Evaluation name <input name="name" required defaultValue={defaults?.name} />
          </label>
          <label>
            Gold labels (data_gt.json) <input name="gold" required defaultValue={defaults?.gold} />
          </label>
          <label>
            Study of these cases{" "}
            <select name="study" defaultValue={defaults?.study ?? ""}>
              <option value="">(none)</option>
              {studies?.map((s) => (
                <option key={s.id} value={s.id}>
                  {s.name}
                </option>
              ))}
            </select>
          </label>
        </>
      )}
      <label>
        Run folders <textarea name="runs" rows={2} required defaultValue={defaults?.runs} />
      </label>
      <div className="row">
        <button type="submit" name="intent" value="preview" disabled={busy}>
          Preview
        </button>
        <button type="submit" name="intent" value="import" className="primary" disabled={busy}>
          Import
        </button>
      </div>
    </Form>
  );
}
