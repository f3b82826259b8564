/**
 * What a check or an import started from a page answered, as the command line prints it: a summary, then its lines
 * (`FILE:LINE: reason` for each refused line, `warning: FILE:LINE: …`), in a notice that is a status when all went
 * well and an alert otherwise (docs/reliability.md, "The import contract").
 */
export function CommandLines({
  ok,
  summary,
  lines,
  testId,
}: {
  ok: boolean;
  summary: string;
  lines: readonly string[];
  testId: string;
}) {
  return (
    <div className={`notice ${ok ? "ok" : "warn"}`} role={ok ? "status" : "alert"} data-testid={testId}>
      <p>{summary}</p>
      {lines.length ? (
        <ul>
          {lines.map((l, i) => (
            <li key={i}>
              <code>{l}</code>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
