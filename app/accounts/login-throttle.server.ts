/**
 * Login throttling by (account, address) with growing delays (docs/security.md, "Password guessing").
 *
 * Why not a lock: a lock on a username lets anyone keep its owner out with a few wrong passwords, and a lock on an
 * address keeps out every clinician behind one NAT or proxy. Here each pair gets FREE_FAILURES failures within the
 * window; each further one doubles the wait before that pair may try again, up to MAX_DELAY_MS. The owner, from their
 * own address, is never slowed by someone else's guesses.
 *
 * Only finished failures count (a wrong password found wrong). So that a burst of parallel guesses cannot all pass
 * before the first is counted, a pair runs at most as many checks at once as it has free failures left (one, once the
 * delays have begun); further attempts wait their turn in this process rather than being refused.
 */
import { and, count, eq, gt, lt, max } from "drizzle-orm";
import { loginFailures } from "../../db/schema";
import type { Db } from "../platform/db.server";

export const THROTTLE_WINDOW_MS = 15 * 60 * 1000;
export const FREE_FAILURES = 5;
const FIRST_DELAY_MS = 1000;
export const MAX_DELAY_MS = 5 * 60 * 1000;

/** The wait after `failures` failures of one pair within the window: 0 while free, then 1 s, 2 s, 4 s … at most 5 min. */
export function retryDelayMs(failures: number): number {
  if (failures < FREE_FAILURES) return 0;
  return Math.min(FIRST_DELAY_MS * 2 ** Math.min(failures - FREE_FAILURES, 30), MAX_DELAY_MS);
}

function recentFailures(db: Db, username: string, ip: string, now: number): { n: number; last: number | null } {
  const since = now - THROTTLE_WINDOW_MS;
  db.delete(loginFailures).where(lt(loginFailures.at, since)).run();
  const row = db
    .select({ n: count(), last: max(loginFailures.at) })
    .from(loginFailures)
    .where(and(eq(loginFailures.username, username), eq(loginFailures.ip, ip), gt(loginFailures.at, since)))
    .get()!;
  return { n: row.n, last: row.last ?? null };
}

const inFlight = new Map<string, { running: number; waiting: (() => void)[] }>();

/**
 * Runs one login attempt for (username, ip) under the throttle: `check` returns whether the password was wrong
 * (a finished failure), which is then recorded. Returns `{ waitMs }` instead when the pair must wait first.
 */
export async function throttled<T extends { failed: boolean }>(
  db: Db,
  input: { username: string; ip: string; now?: number },
  check: () => Promise<T>,
): Promise<T | { waitMs: number }> {
  const key = JSON.stringify([input.username, input.ip]);
  let slot = inFlight.get(key);
  if (!slot) inFlight.set(key, (slot = { running: 0, waiting: [] }));
  const clock = () => input.now ?? Date.now();
  for (;;) {
    const { n } = recentFailures(db, input.username, input.ip, clock());
    if (slot.running < Math.max(1, FREE_FAILURES - n)) break;
    await new Promise<void>((resolve) => slot!.waiting.push(resolve));
  }
  slot.running++;
  try {
    const now = clock();
    const { n, last } = recentFailures(db, input.username, input.ip, now);
    const delay = retryDelayMs(n);
    if (delay > 0 && last !== null && now < last + delay) return { waitMs: last + delay - now };
    const result = await check();
    if (result.failed) db.insert(loginFailures).values({ username: input.username, ip: input.ip, at: clock() }).run();
    else
      db.delete(loginFailures)
        .where(and(eq(loginFailures.username, input.username), eq(loginFailures.ip, input.ip)))
        .run();
    return result;
  } finally {
    slot.running--;
    const woken = slot.waiting.splice(0);
    for (const wake of woken) wake();
    if (slot.running === 0 && woken.length === 0) inFlight.delete(key);
  }
}
