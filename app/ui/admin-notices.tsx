/** The notices at the top of an admin page: what the last action did, and what an import just wrote. */

export function ActionResult({
  result,
  testId = "action-result",
}: {
  result: { ok: boolean; message: string } | null | undefined;
  testId?: string;
}) {
  if (!result) return null;
  return (
    <p className={`notice ${result.ok ? "ok" : "bad"}`} role={result.ok ? "status" : "alert"} data-testid={testId}>
      {result.message}
    </p>
  );
}

/** The counts an import page passes back in the address: new, changed and unchanged rows. */
export function ImportedNotice({ counts }: { counts: readonly (string | null | undefined)[] | null | undefined }) {
  if (!counts) return null;
  return (
    <p className="notice ok" role="status">
      Imported: {counts[0]} new, {counts[1]} changed, {counts[2]} unchanged.
    </p>
  );
}
