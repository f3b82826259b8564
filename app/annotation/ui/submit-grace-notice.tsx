import { useFetcher, useRevalidator } from "@remix-run/react";
import { useEffect } from "react";
import { Csrf } from "~/ui/root-data";
import { Time } from "~/ui/time";

/**
 * The notice after the submission that completed a case's pair (docs/safe-psych.md, "Second chances"): the values
 * shown are final, and "Undo submit" turns the submission back into a draft until the grace period ends; then the
 * page reloads and shows the case locked. A form with the CSRF token, so it works with the keyboard and without
 * scripts.
 */
export function SubmitGraceNotice({ undoUntil, version }: { undoUntil: number; version: number }) {
  const fetcher = useFetcher<{ ok: boolean; message?: string }>();
  const { revalidate } = useRevalidator();
  useEffect(() => {
    const t = setTimeout(revalidate, Math.max(0, undoUntil - Date.now()) + 500);
    return () => clearTimeout(t);
  }, [undoUntil, revalidate]);
  const refused = fetcher.data && !fetcher.data.ok ? fetcher.data.message : null;
  return (
    <div className="notice ok" role="status" data-testid="submit-grace">
      <fetcher.Form method="post">
        <Csrf />
        <input type="hidden" name="intent" value="undo" />
        <input type="hidden" name="version" value={version} />
        <span>
          Submitted — you can undo until <Time at={undoUntil} style="time" />.{" "}
        </span>
        <button type="submit" className="secondary" disabled={fetcher.state !== "idle"}>
          Undo submit
        </button>
      </fetcher.Form>
      {refused ? (
        <p role="alert" className="muted">
          {refused}
        </p>
      ) : null}
    </div>
  );
}
