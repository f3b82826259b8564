/**
 * The progress page's cases, one window at a time (docs/architecture.md, "Pages are windows"): by position, filtered
 * by progress state (`cases.progress_state`, kept by the database: an index range of cases_study_state_pos_idx) and
 * case id prefix; the counts per state from `studyStateCounts`. Each row's state is what `listCaseProgress`
 * (app/gold/gold-export.server.ts) derives for it, checked by test/integration/list-windows.test.ts.
 */
import { settleDueLocks } from "../annotation/public.server";
import { and, count, eq, inArray, sql } from "drizzle-orm";
import { annotations, cases, workTime } from "../../db/schema";
import { CASE_STATES, type CaseProgressState } from "../annotation/public";
import { studyStateCounts } from "../annotation/public.server";
import type { Db } from "../platform/db.server";
import { notPending } from "../platform/import-runs.server";
import { finishWindow, prefixRange, readWindow, type ListWindow, type WindowSpec } from "../platform/list-window";
import { keyset } from "../platform/list-window.server";
import { median } from "../work-items/domain/active-time";
import type { CaseProgress } from "./gold-export.server";

export const PROGRESS_WINDOW = {
  prefix: "",
  sorts: ["position"],
  defaultSort: "position",
  filters: ["state", "q"],
} as const satisfies WindowSpec<string, string>;

export type ProgressRow = CaseProgress & { medianActiveMs: number | null };

export function progressWindow(
  db: Db,
  studyId: number,
  params: URLSearchParams,
): ListWindow<ProgressRow, "position", "state" | "q"> & { counts: Record<CaseProgressState, number> } {
  // A pair whose grace period is over counts as locked (docs/safe-psych.md, "Second chances").
  settleDueLocks(db);
  const w = readWindow(params, PROGRESS_WINDOW, 2);
  const state = (CASE_STATES as readonly string[]).includes(w.filters.state)
    ? (w.filters.state as CaseProgressState)
    : null;
  w.filters.state = state ?? "";
  const k = keyset(w, [cases.position, cases.id]);
  const [lo, hi] = prefixRange(w.filters.q);
  const filter = and(
    eq(cases.studyId, studyId),
    notPending(cases.importRun),
    state ? eq(cases.progressState, state) : undefined,
    w.filters.q ? sql`${cases.externalId} >= ${lo} and ${cases.externalId} < ${hi}` : undefined,
  );
  const rows = db
    .select({
      caseId: cases.id,
      externalId: cases.externalId,
      position: cases.position,
      state: cases.progressState,
      // Written out in full: drizzle names a lone table's columns unqualified, which the subquery would read as its own.
      assigned: sql<number>`(select count(*) from assignments x where x.case_id = cases.id)`,
      submitted: sql<number>`(select count(*) from annotations x where x.case_id = cases.id
        and x.status in ('submitted', 'locked'))`,
    })
    // eslint-disable-next-line concord/visible-rows -- the window's keyset and index need the table's own columns; `filter` hides an unfinished import's rows (notPending)
    .from(cases)
    .where(and(filter, k.where))
    .orderBy(...k.orderBy)
    .limit(k.limit)
    .all();
  const medians = caseMedians(
    db,
    rows.map((r) => r.caseId),
  );
  const counts = studyStateCounts(db, studyId);
  const total = w.filters.q
    ? // eslint-disable-next-line concord/visible-rows -- the window's keyset and index need the table's own columns; `filter` hides an unfinished import's rows (notPending)
      db.select({ n: count() }).from(cases).where(filter).get()!.n
    : state
      ? counts[state]
      : Object.values(counts).reduce((a, b) => a + b, 0);
  const window = finishWindow(
    w,
    rows.map((r) => ({ ...r, medianActiveMs: medians.get(r.caseId) ?? null })),
    total,
    (r) => [r.position, r.caseId],
  );
  return { ...window, counts };
}

/** The median active time of each case's submitted annotations (docs/statistics.md, "Time on task"). */
function caseMedians(db: Db, caseIds: number[]): Map<number, number | null> {
  if (!caseIds.length) return new Map();
  const times = new Map<number, number[]>();
  for (const r of db
    .select({ caseId: annotations.caseId, activeMs: workTime.activeMs })
    .from(annotations)
    .innerJoin(
      workTime,
      and(
        eq(workTime.entity, "annotation"),
        eq(workTime.itemId, annotations.caseId),
        eq(workTime.userId, annotations.annotatorId),
      ),
    )
    .where(and(inArray(annotations.caseId, caseIds), inArray(annotations.status, ["submitted", "locked"])))
    .all())
    times.set(r.caseId, [...(times.get(r.caseId) ?? []), r.activeMs]);
  return new Map([...times].map(([id, ms]) => [id, median(ms)]));
}
