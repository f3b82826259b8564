/**
 * The bank page's view of a fit running in the background (docs/mentat.md, "Fits in the background"): a progress
 * bar of the bootstrap refits, polled once a second from the fit-job route while the job runs; when it ends, the page
 * reloads its data once, so the new labels appear without a click. A failed or cancelled fit says why.
 */
import { Form, useFetcher, useRevalidator } from "@remix-run/react";
import { useEffect } from "react";
import { Csrf } from "~/ui/root-data";
import type { FitJobView } from "~/mentat/fits.server";
import { Time } from "~/ui/time";

const POLL_MS = 1000;
const active = (job: FitJobView | null | undefined) => job?.status === "queued" || job?.status === "running";

export function FitJobProgress({ bankId, job }: { bankId: number; job: FitJobView | null }) {
  const fetcher = useFetcher<{ job: FitJobView | null }>();
  const revalidator = useRevalidator();
  // The freshest view: the poll's answer when it is about the job the page shows, else the page's own.
  const polled = fetcher.data?.job;
  const current = polled && job && polled.id >= job.id ? polled : job;
  const running = active(job);

  useEffect(() => {
    if (!running) return;
    if (polled && job && polled.id >= job.id && !active(polled)) {
      if (revalidator.state === "idle") revalidator.revalidate();
      return;
    }
    const timer = setTimeout(() => {
      if (fetcher.state === "idle") fetcher.load(`/admin/mentat/${bankId}/fit-job`);
    }, POLL_MS);
    return () => clearTimeout(timer);
    // fetcher and revalidator change identity on every render; their states are what matters.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [running, polled, job, bankId, fetcher.state, revalidator.state]);

  if (!current) return null;
  if (active(current)) {
    const { done, total } = current;
    const label =
      current.status === "queued" || (done === 0 && total > 0)
        ? `Fitting: the full-data fit, then ${total} bootstrap refits…`
        : `Fitting: ${done} of ${total} bootstrap refits`;
    return (
      <div className="card" data-testid="fit-job" data-status={current.status}>
        <div className="row">
          <strong>{label}</strong>
          <span className="spacer" />
          <Form method="post">
            <Csrf />
            <button type="submit" name="intent" value="cancel_fit" className="secondary">
              Cancel the fit
            </button>
          </Form>
        </div>
        <div
          className="progress"
          role="progressbar"
          aria-label="Bootstrap refits"
          aria-valuemin={0}
          aria-valuemax={Math.max(total, 1)}
          aria-valuenow={done}
          aria-valuetext={`${done} of ${total} refits`}
        >
          <div style={{ width: `${total ? (100 * done) / total : 0}%` }} />
        </div>
        <p className="muted">
          The fit runs in the background: you may leave this page and come back. Started{" "}
          <Time at={current.createdAt} style="seconds" />.
        </p>
      </div>
    );
  }
  if (current.status === "failed" || current.status === "cancelled")
    return (
      <p className="card stale" data-testid="fit-job" data-status={current.status}>
        The last fit (job {current.id}) {current.status === "failed" ? "failed" : "was cancelled"}: {current.error} The
        labels below are from the fit before it, if any.
      </p>
    );
  return null;
}
