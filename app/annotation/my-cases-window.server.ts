/**
 * The annotator's list page, one window at a time (docs/architecture.md, "Pages are windows"): one study of their
 * list (by name, as the list orders them), and in it a window of their items in the list's order. A study without
 * rater quality is read from the indexes: the annotator's assignments in it by position and state (assignedIn), and
 * its counts from `study_annotator_counts`. A study with rater quality keeps the
 * list exactly as `listAnnotatorCases` (app/annotation/annotations.server.ts) orders, keys and labels it (retest and
 * calibration items among the cases, opaque keys, a training round first: docs/rater-quality.md); the window is cut
 * from it. The next open item is the list's (the first not submitted, from the top), asked of the same sources.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../platform/db.server";
import { finishWindow, readWindow, type ListWindow, type WindowSpec } from "../platform/list-window";
import { keyset } from "../platform/list-window.server";
import { WORK_STATE_LABELS, type WorkState } from "../work-items/domain/work-item";
import { qualityOn } from "./domain/rater-quality";
import { listAnnotatorCases, nextCaseId, settleDueLocks, type MyCaseRow } from "./annotations.server";
import { byStudyName } from "./case-queue.server";
import { qualitySettingsOf } from "./rater-quality.server";
import { annotatorCounts } from "./study-counts.server";

export const MY_CASES_WINDOW = {
  prefix: "",
  sorts: ["position"],
  defaultSort: "position",
  filters: ["study", "state"],
} as const satisfies WindowSpec<string, string>;

const WORK_STATES = Object.keys(WORK_STATE_LABELS) as WorkState[];
/** Written as the partial index assignments_open_pos_idx says it, so that the planner reads that index. */
const OPEN = sql.raw(`a.work_state in ('not_started', 'draft')`);

interface Row {
  caseId: number;
  externalId: string;
  position: number;
  numSections: number;
  status: WorkState | null;
  updatedAt: number | null;
}

export interface MyCasesPage {
  studies: { id: number; name: string }[];
  /** The study shown, or null when the annotator has none. */
  studyId: number | null;
  window: ListWindow<MyCaseRow, "position", "study" | "state">;
  /** Items of the whole list in each state. */
  counts: Record<WorkState, number>;
  /** The key of the list's first open item. */
  next: string | null;
}

export function myCasesPage(db: Db, userId: string, params: URLSearchParams): MyCasesPage {
  // A pair whose grace period is over shows as locked (docs/safe-psych.md, "Second chances").
  settleDueLocks(db);
  const studies = db
    .all<{ id: number; name: string }>(
      sql`SELECT s.id AS id, s.name AS name FROM visible_studies s
        WHERE EXISTS (SELECT 1 FROM assignments a WHERE a.study_id = s.id AND a.annotator_id = ${userId})`,
    )
    .sort((a, b) => byStudyName(a.name, b.name));
  const settings = qualitySettingsOf(
    db,
    studies.map((s) => s.id),
  );
  const blind = (id: number) => qualityOn(settings.get(id) ?? null);
  // The list as listAnnotatorCases has it, built once and only when a study has rater quality.
  let listed: MyCaseRow[] | undefined;
  const listOf = (studyId: number) => (listed ??= listAnnotatorCases(db, userId)).filter((r) => r.studyId === studyId);

  const counts = Object.fromEntries(WORK_STATES.map((s) => [s, 0])) as Record<WorkState, number>;
  const kept = annotatorCounts.bind(null, db);
  for (const s of studies) {
    if (blind(s.id)) {
      for (const r of listOf(s.id)) counts[r.state]++;
      continue;
    }
    const c = kept(s.id).get(userId);
    if (!c) continue;
    counts.not_started += c.assigned - c.started;
    counts.draft += c.started - c.done;
    counts.submitted += c.done - c.locked;
    counts.locked += c.locked;
  }

  let next: string | null = null;
  for (const s of studies) {
    next = blind(s.id)
      ? nextCaseId(listOf(s.id), null)
      : (db
          .all<{ id: number }>(
            sql`SELECT a.case_id AS id ${assignedIn(userId, s.id)} AND ${OPEN} ORDER BY a.position, a.case_id LIMIT 1`,
          )[0]
          ?.id.toString() ?? null);
    if (next !== null) break;
  }

  const w = readWindow(params, MY_CASES_WINDOW, 2);
  const study = studies.find((s) => String(s.id) === w.filters.study) ?? studies[0];
  const state = (WORK_STATES as readonly string[]).includes(w.filters.state) ? (w.filters.state as WorkState) : null;
  w.filters.study = study ? String(study.id) : "";
  w.filters.state = state ?? "";
  let window: MyCasesPage["window"];
  if (!study) window = finishWindow(w, [], 0, () => []);
  else if (blind(study.id)) {
    // Cut from the list: rows by their place (position is the row's place in a study with rater quality).
    const all = listOf(study.id).filter((r) => state === null || r.state === state);
    const cursor = (w.after ?? w.before)?.[0];
    const asc = w.dir === "asc";
    const ordered = asc ? all : [...all].reverse();
    const from =
      cursor === undefined
        ? ordered
        : w.after
          ? ordered.filter((r) => (asc ? r.position > Number(cursor) : r.position < Number(cursor)))
          : ordered.filter((r) => (asc ? r.position < Number(cursor) : r.position > Number(cursor))).reverse();
    window = finishWindow(w, from.slice(0, w.size + 1), all.length, (r) => [r.position, 0]);
  } else {
    const k = keyset(w, [sql`a.position`, sql`a.case_id`]);
    const rows = db.all<Row>(
      sql`SELECT c.id AS caseId, c.external_id AS externalId, c.position AS position, c.num_sections AS numSections,
          n.status AS status, n.updated_at AS updatedAt
        ${assignedIn(userId, study.id)} AND ${state ? sql`a.work_state = ${state}` : sql`1`} AND ${k.where}
        ORDER BY ${sql.join(k.orderBy, sql`, `)} LIMIT ${k.limit}`,
    );
    const c = kept(study.id).get(userId);
    const total = !c
      ? 0
      : state === "not_started"
        ? c.assigned - c.started
        : state === "draft"
          ? c.started - c.done
          : state === "submitted"
            ? c.done - c.locked
            : state === "locked"
              ? c.locked
              : c.assigned;
    window = finishWindow(
      w,
      rows.map((r) => ({
        key: String(r.caseId),
        studyId: study.id,
        studyName: study.name,
        externalId: r.externalId,
        position: r.position,
        numSections: r.numSections,
        state: r.status ?? "not_started",
        updatedAt: r.updatedAt,
      })),
      total,
      (r) => [r.position, Number(r.key)],
    );
  }
  return { studies, studyId: study?.id ?? null, window, counts, next };
}

/**
 * The annotator's assignments in one study, read in list order from their own index range (the case's position and
 * work state are copied onto the assignment and kept by triggers, migration 0023): assignments_annotator_study_pos_idx
 * for the whole list, assignments_annotator_study_state_pos_idx for one state, assignments_open_pos_idx for the open
 * ones. CROSS JOIN keeps the assignments the outer loop; each row's case is then one lookup (and leaves out a case of
 * an unfinished import).
 */
function assignedIn(userId: string, studyId: number) {
  return sql`FROM assignments a CROSS JOIN visible_cases c ON c.id = a.case_id
    LEFT JOIN annotations n ON n.assignment_id = a.id WHERE a.annotator_id = ${userId} AND a.study_id = ${studyId}`;
}
