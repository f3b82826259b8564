/**
 * What shared code needs from the protocols, registered by them instead of imported (docs/architecture.md,
 * "Registration"): a shared folder never imports a protocol folder. The composition root app/protocols.server.ts
 * fills it once, before the server starts; reading it before then is a programming error, not an empty list.
 */
import type { Db } from "./db.server";
import type { HiddenParent } from "./hidden-parents.server";

/** The demo a fresh database is seeded with (docs/deploying.md). */
export interface DemoRegistration {
  seed(db: Db): Promise<unknown>;
  isDemoDatabase(db: Db): boolean;
  accounts: readonly { username: string; roles: readonly string[] }[];
  password: string;
}

/**
 * Work a protocol needs done at the server's start and every `everyMs` after (e.g. locking the pairs whose grace
 * period ended: docs/safe-psych.md, "Second chances"). `problem` is checked first: a reason not to start, or null.
 */
export interface PeriodicTask {
  name: string;
  problem?: () => string | null;
  run(db: Db): void;
  everyMs: number;
}

export interface Registration {
  /** Every kind of parent an import creates hidden (docs/reliability.md, "Bulk imports"): the start removes leftovers. */
  hiddenParents: readonly HiddenParent[];
  demo: DemoRegistration;
  periodic: readonly PeriodicTask[];
}

let registration: Registration | null = null;

/** Called once by the composition root; a second call replaces the first (tests may register their own). */
export function register(r: Registration): void {
  registration = r;
}

/** What the protocols registered. Throws when nothing was: a start-up that skipped the composition root. */
export function registered(): Registration {
  if (!registration)
    throw new Error("No protocols registered: import app/protocols.server.ts before using the registry.");
  return registration;
}
