/**
 * The grace period after the submission that completes a case's pair (docs/safe-psych.md, "Second chances"): for this
 * long the submitter sees their final values and may undo the submission; then the pair locks and the dispute rule
 * runs, in one transaction. Set with CONCORD_SUBMIT_GRACE_SECONDS (0 locks at once, as before there was a grace
 * period; at most one hour); the default is two minutes.
 */
export const DEFAULT_SUBMIT_GRACE_SECONDS = 120;
export const MAX_SUBMIT_GRACE_SECONDS = 3600;

/** Why CONCORD_SUBMIT_GRACE_SECONDS cannot be used, or null (checked at start-up: app/platform/startup.server.ts). */
export function submitGraceProblem(raw: string | undefined = process.env.CONCORD_SUBMIT_GRACE_SECONDS): string | null {
  if (raw === undefined || raw === "") return null;
  if (!/^[0-9]{1,4}$/.test(raw) || Number(raw) > MAX_SUBMIT_GRACE_SECONDS)
    return `CONCORD_SUBMIT_GRACE_SECONDS: expected a whole number of seconds from 0 to ${MAX_SUBMIT_GRACE_SECONDS}, got "${raw}"`;
  return null;
}

/** The grace period in milliseconds (the default when the setting is absent or unusable; start-up refuses the latter). */
export function submitGraceMs(): number {
  const raw = process.env.CONCORD_SUBMIT_GRACE_SECONDS;
  if (raw === undefined || raw === "" || submitGraceProblem(raw)) return DEFAULT_SUBMIT_GRACE_SECONDS * 1000;
  return Number(raw) * 1000;
}
