/** Pieces shared by the judge-validation admin pages: the responses upload fields and the list of import problems. */

interface Issue {
  file: string;
  line: number;
  message: string;
}

export function ResponsesUploadFields() {
  return (
    <div className="grid2">
      <div>
        <label htmlFor="file">Responses file (JSONL)</label>
        <input id="file" name="file" type="file" accept=".jsonl,.json,.txt,application/json" required />
        <label htmlFor="format">Format</label>
        <select id="format" name="format" defaultValue="auto">
          <option value="auto">detect from the first line</option>
          <option value="trajectories">trajectories.jsonl (the reference's runs, one case per line)</option>
          <option value="flattened">flattened steps (collect_trajectories.py rows)</option>
          <option value="simple">simple (id, model, strategy, step, is_last_section, response, features)</option>
        </select>
      </div>
      <div>
        <label htmlFor="run">Run folder (trajectories.jsonl only, optional)</label>
        <input id="run" name="run" type="text" placeholder="gemma-3-4b_sequential_…_seed-123_20250101_120000" />
        <small className="muted">
          Kept with each response as source_run_name (runs/&lt;name&gt;), as the reference's collection step does.
        </small>
      </div>
    </div>
  );
}

export function JudgeImportIssues({
  result,
}: {
  result: { ok: boolean; message?: string; errors?: Issue[]; warnings: Issue[] };
}) {
  const errors = result.errors ?? [];
  return (
    <div role={result.ok ? "status" : "alert"} data-testid="judge-import-result">
      {!result.ok && result.message ? <p className="notice bad">{result.message}</p> : null}
      {errors.length ? (
        <div className="notice bad" data-testid="import-errors">
          <strong>Errors ({errors.length})</strong>
          <ul className="issues">
            {errors.slice(0, 200).map((i, n) => (
              <li key={n}>{i.line > 0 ? `${i.file}, line ${i.line}: ${i.message}` : `${i.file}: ${i.message}`}</li>
            ))}
          </ul>
        </div>
      ) : null}
      {result.warnings.length ? (
        <div className="notice warn" data-testid="import-warnings">
          <strong>Warnings ({result.warnings.length})</strong>
          <ul className="issues">
            {result.warnings.slice(0, 200).map((i, n) => (
              <li key={n}>{i.line > 0 ? `${i.file}, line ${i.line}: ${i.message}` : `${i.file}: ${i.message}`}</li>
            ))}
          </ul>
        </div>
      ) : null}
    </div>
  );
}
