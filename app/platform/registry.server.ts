/**
 * What shared code needs from the protocols, registered by them instead of imported (docs/architecture.md,
 * "Registration"): a shared folder never imports a protocol folder. The composition root app/protocols.server.ts
 * fills it once, before the server starts; reading it before then is a programming error, not an empty list.
 */
import type { GuidelineScope, Role } from "../../db/vocabulary";
import type { Db, DbOrTx } from "./db.server";
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

/**
 * A kind of study with guidelines (docs/guidelines.md), registered by its protocol: how to tell that one of its
 * studies exists, and the study of an item of each of its workspaces (named as the workspace's route names it).
 */
export interface GuidelineScopeRegistration {
  scope: GuidelineScope;
  studyExists(db: DbOrTx, studyId: number): boolean;
  /** The workspaces whose items belong to this kind of study. */
  workspaces: readonly string[];
  /** The study of a workspace item; null when no item has that id. */
  studyOfItem(db: DbOrTx, workspace: string, itemId: number): number | null;
  /**
   * Whether the study's audit events carry its id, so a guidelines edit is recorded under the study and an export's
   * manifest can count the submissions made under each version (`submissionsByVersion`).
   */
  submissionsByVersion?(db: DbOrTx, studyId: number): Record<string, number>;
}

/** A link of the header's menu (docs/architecture.md, "Registration"), shown to the users who have `role`. */
export interface NavEntry {
  to: string;
  label: string;
  role: Role;
  /** When the link is marked as the current page, if not only at `to` and below: a regular expression's source. */
  activePattern?: string;
  /**
   * The protocol's list, offered first on an error page under one of these first path segments (a missing
   * screening item offers the screening list), with its own words.
   */
  listOf?: { segments: readonly string[]; label: string };
}

export interface Registration {
  /** Every kind of parent an import creates hidden (docs/reliability.md, "Bulk imports"): the start removes leftovers. */
  hiddenParents: readonly HiddenParent[];
  demo: DemoRegistration;
  periodic: readonly PeriodicTask[];
  /** Every kind of study with guidelines, one registration each. */
  guidelines: readonly GuidelineScopeRegistration[];
  /** The protocols' links of the header's menu, in each role's order. */
  nav: readonly NavEntry[];
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

/** The header's order of the roles' links: a worker's lists first, then the admin's pages. */
const NAV_ROLE_ORDER: readonly Role[] = ["annotator", "adjudicator", "rater", "admin"];

/**
 * The registered links a user with `roles` sees, grouped by role in the header's order, each group as registered; a
 * link registered for two of the user's roles is shown once, at its first place.
 */
export function navEntriesFor(roles: readonly Role[]): NavEntry[] {
  const seen = new Set<string>();
  return NAV_ROLE_ORDER.filter((r) => roles.includes(r))
    .flatMap((r) => registered().nav.filter((e) => e.role === r))
    .filter((e) => !seen.has(e.to) && Boolean(seen.add(e.to)));
}

/** The registration of a kind of study's guidelines. Throws for a kind nobody registered: a programming error. */
export function guidelineScope(scope: GuidelineScope): GuidelineScopeRegistration {
  const found = registered().guidelines.find((g) => g.scope === scope);
  if (!found) throw new Error(`No protocol registered the guidelines of ${scope} studies.`);
  return found;
}

/** The registration whose workspaces include `workspace`. Throws for an unknown workspace: a programming error. */
export function guidelineScopeOfWorkspace(workspace: string): GuidelineScopeRegistration {
  const found = registered().guidelines.find((g) => g.workspaces.includes(workspace));
  if (!found) throw new Error(`No protocol registered the guidelines of the ${workspace} workspace.`);
  return found;
}
