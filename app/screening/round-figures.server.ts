/**
 * A screening round's figures kept with the round's version (docs/screening.md, "Round figures at scale"). The
 * figures — counts, inclusion by stratum, the control-inclusion rate and decision, agreement overall and per pair of
 * reviewers, and each reviewer's submitted votes — need every vote of the round. They are computed on a worker
 * thread (`app/screening/round-figures-worker.ts`) and kept per connection with the round's version, which triggers
 * move on every write that may change them (migration 0032, `screening_round_versions`). A page reads that one row
 * first and asks the worker again only when it has moved; concurrent pages share one computation. So the request
 * thread's cost of a round's figures does not grow with its votes.
 */
import { and, count, eq, sql } from "drizzle-orm";
import { screeningReviewers, screeningRoundVersions, users } from "../../db/schema";
import { visibleScreeningStudies } from "../../db/schema-visible";
import { finishWindow, prefixRange, readWindow, type ListWindow, type WindowSpec } from "../platform/list-window";
import { keyset } from "../platform/list-window.server";
import { compareCodePoints } from "../python-compat/text";
import type { Db, DbOrTx } from "../platform/db.server";
import { runDbWorker } from "../platform/db-worker.server";
import type { RoundFigures } from "./domain/screening";
import {
  listRoundRows,
  loadRound,
  reviewerCodes,
  whatComesNext,
  type RoundReviewer,
  type RoundRow,
  type ScreeningStudyRow,
} from "./screening.server";

/** A round's figures without the per-item tally (the round page reads its window's items itself). */
export type RoundSummary = Omit<RoundFigures, "perItem"> & {
  /** Submitted votes per reviewer id. */
  submittedBy: Record<string, number>;
};

/** The worker's work: one round's figures. */
export interface RoundFiguresWork {
  studyId: number;
  roundId: number;
}

/** The figures of one round, on this connection (what the worker runs). */
export function computeRoundSummary(db: DbOrTx, work: RoundFiguresWork): RoundSummary | null {
  const round = listRoundRows(db, work.studyId).find((r) => r.id === work.roundId);
  if (!round) return null;
  const data = loadRound(db, round, new Map());
  const { perItem: _perItem, ...figures } = data.figures;
  return { ...figures, submittedBy: Object.fromEntries(data.reviewers.map((r) => [r.id, r.submitted])) };
}

/** The round's version: moved by the triggers of `screening_round_versions`. */
export function roundVersion(db: DbOrTx, roundId: number): number {
  return (
    db
      .select({ version: screeningRoundVersions.version })
      .from(screeningRoundVersions)
      .where(eq(screeningRoundVersions.roundId, roundId))
      .get()?.version ?? 0
  );
}

type Kept = { version: number; value: Promise<RoundSummary | null> };
const kept = new WeakMap<object, Map<number, Kept>>();

/**
 * The round's figures: the ones kept for its current version, else the worker's (kept with that version). A failed
 * computation is not kept, so the next page asks again.
 */
export function roundFiguresKept(db: Db, studyId: number, round: Pick<RoundRow, "id">): Promise<RoundSummary | null> {
  const version = roundVersion(db, round.id);
  let byRound = kept.get(db.$client);
  if (!byRound) kept.set(db.$client, (byRound = new Map()));
  const hit = byRound.get(round.id);
  if (hit && hit.version === version) return hit.value;
  const work: RoundFiguresWork = { studyId, roundId: round.id };
  const value = runDbWorker<RoundFiguresWork, RoundSummary | null>("screening-round", db, work, (here) =>
    computeRoundSummary(here, work),
  );
  byRound.set(round.id, { version, value });
  value.catch(() => {
    if (byRound.get(round.id)?.value === value) byRound.delete(round.id);
  });
  return value;
}

/** A round as the admin's pages show it: its row, its reviewers (with their submitted votes) and its kept figures. */
export interface KeptRound {
  round: RoundRow;
  reviewers: RoundReviewer[];
  figures: RoundSummary;
}

/** The round's reviewers with their codes, and their submitted votes from the kept figures (a few rows). */
function keptReviewers(db: DbOrTx, round: RoundRow, codes: Map<string, string>, figures: RoundSummary) {
  return db
    .select({ id: users.id, username: users.username })
    .from(screeningReviewers)
    .innerJoin(users, eq(users.id, screeningReviewers.reviewerId))
    .where(eq(screeningReviewers.roundId, round.id))
    .all()
    .map((r) => ({ ...r, code: codes.get(r.id) ?? "?", submitted: figures.submittedBy[r.id] ?? 0 }))
    .sort((a, b) => compareCodePoints(a.code.padStart(4), b.code.padStart(4)));
}

/**
 * The study's rounds with their kept figures, and what comes next: what the admin's study and round pages show
 * (`studyState` tallies every vote on this thread, for the writes that must check them in their transaction).
 */
export async function studyStateKept(db: Db, studyId: number) {
  const codes = reviewerCodes(db, studyId);
  const rows = listRoundRows(db, studyId);
  const figures = await Promise.all(rows.map((round) => roundFiguresKept(db, studyId, round)));
  const rounds: KeptRound[] = [];
  rows.forEach((round, i) => {
    const f = figures[i];
    if (f) rounds.push({ round, reviewers: keptReviewers(db, round, codes, f), figures: f });
  });
  return { rounds, ...whatComesNext(db, studyId, rounds), codes };
}

/**
 * One row of the admin's list of screening studies: its items, its rounds and what comes next, the rounds' decisions
 * read from their kept figures (`roundFiguresKept`), so a row does not tally its rounds' votes on the request thread.
 */
async function screeningStudyRowKept(
  db: Db,
  s: typeof visibleScreeningStudies.$inferSelect,
): Promise<ScreeningStudyRow> {
  const rows = listRoundRows(db, s.id);
  const figures = await Promise.all(rows.map((round) => roundFiguresKept(db, s.id, round)));
  const rounds = rows.flatMap((round, i) => {
    const f = figures[i];
    return f ? [{ round, figures: f }] : [];
  });
  const { screen, next } = whatComesNext(db, s.id, rounds);
  return { id: s.id, name: s.name, items: screen.items, rounds: rows.length, next: next.kind, createdAt: s.createdAt };
}

export const SCREENING_STUDIES_WINDOW = {
  prefix: "",
  sorts: ["name"],
  defaultSort: "name",
  filters: ["q"],
} as const satisfies WindowSpec<string, string>;

/**
 * A window of the screening studies (docs/architecture.md, "Pages are windows"): by name (its unique index) with a
 * name-prefix filter; only the window's studies are summarised, each from its rounds' kept figures.
 */
export async function screeningStudiesWindow(
  db: Db,
  params: URLSearchParams,
): Promise<ListWindow<ScreeningStudyRow, "name", "q">> {
  const w = readWindow(params, SCREENING_STUDIES_WINDOW, 2);
  const [lo, hi] = prefixRange(w.filters.q);
  const filter = w.filters.q
    ? sql`${visibleScreeningStudies.name} >= ${lo} and ${visibleScreeningStudies.name} < ${hi}`
    : undefined;
  const k = keyset(w, [visibleScreeningStudies.name, visibleScreeningStudies.id]);
  const studies = db
    .select()
    .from(visibleScreeningStudies)
    .where(and(filter, k.where))
    .orderBy(...k.orderBy)
    .limit(k.limit)
    .all();
  const rows = await Promise.all(studies.map((s) => screeningStudyRowKept(db, s)));
  const total = db.select({ n: count() }).from(visibleScreeningStudies).where(filter).get()!.n;
  return finishWindow(w, rows, total, (r) => [r.name, r.id]);
}
