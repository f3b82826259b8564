/**
 * The case page's place in the annotator's list (docs/architecture.md, "Cheaper pages"): the previous item, the next
 * open item and the progress, asked of the database for the one item shown instead of building the whole list.
 *
 * The list it answers for is `listAnnotatorCases` (app/annotation/annotations.server.ts): studies by name, in each
 * study the annotator's assignments (by the case's position, then case id) and, where the study has rater quality,
 * their quality items among them (by sort key, then id; an assignment before a quality item at the same place;
 * docs/rater-quality.md), a study whose training round is not done showing only its training cases. An item is the
 * triple (place, 0 for an assignment or 1 for a quality item, id), and every question below is a range over that
 * order within one study, read from the indexes (the annotator's assignments by study and position, their open ones
 * alone, the annotator's quality items by study and sort key), so the common case — the
 * previous and next items in the same study — costs a few index steps whatever the size of the list. Only crossing
 * into another study (the first item of a study, nothing open after this one, wrapping around) and a study in its
 * training round read the annotator's assignments once. Checked against the list by
 * test/integration/case-page-queue.test.ts.
 */
import { preparedOn, type DbOrTx } from "../platform/db.server";
import { QUALITY_OFF, qualityOn } from "./domain/rater-quality";

/** What the list and the pages say of an item in a study with rater quality: derived from its opaque key only. */
export const blindLabel = (key: string) => key.slice(1, 6).toUpperCase();

/** The annotator's list is ordered by study name as JavaScript compares strings (UTF-16 units), here and there. */
import { byStudyName } from "../platform/list-window";
export { byStudyName };

/** The item a page shows, as the database has it. */
export type QueueItemRef = { kind: "assignment"; caseId: number } | { kind: "quality"; id: number };

export interface QueuePlace {
  key: string;
  externalId: string;
  studyId: number;
  studyName: string;
  previousKey: string | null;
  nextOpenKey: string | null;
  progress: { done: number; total: number };
}

const OPEN = "(status IS NULL OR status = 'draft')";
const DONE = "status IN ('submitted', 'locked')";
/** Beyond any case id, position or sort key (training items sit at −1,000,000 + i). */
const FAR = 9e15;

const statements = preparedOn((db) => {
  const c = db.$client;
  // One study's assignments of the annotator, read in list order from their own index range (position copied onto
  // the assignment: assignments_annotator_study_pos_idx), the open ones from assignments_open_pos_idx (work state
  // kept by triggers, migration 0023), so that the next open case is found without stepping over finished ones.
  // CROSS JOIN keeps the assignments the outer loop; the case is one lookup and hides an unfinished import's case.
  const assigned = (open = false) => `FROM assignments a CROSS JOIN visible_cases c ON c.id = a.case_id
    WHERE a.annotator_id = @user AND a.study_id = @study${open ? ` AND a.work_state in ('not_started', 'draft')` : ""}`;
  const quality = `FROM quality_items WHERE annotator_id = @user AND study_id = @study
    AND (@trainingOnly = 0 OR kind = 'training')`;
  return {
    assignment: c
      .prepare(
        `SELECT c.study_id, c.position, a.item_key, c.external_id
         FROM assignments a JOIN visible_cases c ON c.id = a.case_id WHERE a.case_id = ? AND a.annotator_id = ?`,
      )
      .raw(),
    qualityItem: c
      .prepare(`SELECT study_id, sort_key, item_key, kind FROM quality_items WHERE id = ? AND annotator_id = ?`)
      .raw(),
    /** Per study: the annotator's quality items, done, training items, training done. */
    qualityCounts: c
      .prepare(
        `SELECT study_id, count(*), count(CASE WHEN ${DONE} THEN 1 END), count(CASE WHEN kind = 'training' THEN 1 END),
           count(CASE WHEN kind = 'training' AND ${DONE} THEN 1 END)
         FROM quality_items WHERE annotator_id = ? GROUP BY study_id`,
      )
      .raw(),
    study: c
      .prepare(
        `SELECT s.name, q.retest_fraction, q.calibration_rate, q.training
         FROM visible_studies s LEFT JOIN study_quality_settings q ON q.study_id = s.id WHERE s.id = ?`,
      )
      .raw(),
    inStudy: c.prepare(`SELECT 1 ${assigned()} LIMIT 1`).pluck(),
    // The annotator's assignments and done ones in all their studies, from the counts the database keeps per study
    // and annotator (study_annotator_counts, migration 0016): a few rows, however long the list.
    assignedDone: c
      .prepare(
        `SELECT coalesce(sum(assigned), 0), coalesce(sum(done), 0) FROM study_annotator_counts WHERE annotator_id = ?`,
      )
      .raw(),
    /** One study's assignments of the annotator and how many of them are done (a study in its training round). */
    studyCounts: c
      .prepare(
        `SELECT count(*), count(CASE WHEN n.${DONE} THEN 1 END)
         FROM assignments a JOIN visible_cases c ON c.id = a.case_id AND c.study_id = @study
         LEFT JOIN annotations n ON n.assignment_id = a.id WHERE a.annotator_id = @user`,
      )
      .raw(),
    /**
     * The annotator's studies (those they have an assignment in: the list's studies), one index probe per study
     * (assignments_study_annotator_idx), not a pass over all their assignments.
     */
    studies: c
      .prepare(
        `SELECT s.id, s.name FROM visible_studies s
         WHERE EXISTS (SELECT 1 FROM assignments a WHERE a.study_id = s.id AND a.annotator_id = ?)`,
      )
      .raw(),
    // Before @place: a place lower, or the same place and an id below @below. After: higher, or an id above @above.
    assignedBefore: c
      .prepare(
        `SELECT a.position, a.case_id, a.item_key ${assigned()}
           AND a.position <= @place AND (a.position < @place OR a.case_id < @below)
         ORDER BY a.position DESC, a.case_id DESC LIMIT 1`,
      )
      .raw(),
    assignedOpenAfter: c
      .prepare(
        `SELECT a.position, a.case_id, a.item_key ${assigned(true)}
           AND a.position >= @place AND (a.position > @place OR a.case_id > @above)
         ORDER BY a.position, a.case_id LIMIT 1`,
      )
      .raw(),
    assignedCountBefore: c
      .prepare(`SELECT count(*) ${assigned()} AND a.position <= @place AND (a.position < @place OR a.case_id < @below)`)
      .pluck(),
    qualityBefore: c
      .prepare(
        `SELECT sort_key, id, item_key ${quality} AND sort_key <= @place AND (sort_key < @place OR id < @below)
         ORDER BY sort_key DESC, id DESC LIMIT 1`,
      )
      .raw(),
    qualityOpenAfter: c
      .prepare(
        `SELECT sort_key, id, item_key ${quality} AND sort_key >= @place AND (sort_key > @place OR id > @above)
           AND ${OPEN} ORDER BY sort_key, id LIMIT 1`,
      )
      .raw(),
    qualityCountBefore: c
      .prepare(`SELECT count(*) ${quality} AND sort_key <= @place AND (sort_key < @place OR id < @below)`)
      .pluck(),
  };
});

type Statements = ReturnType<typeof statements>;

/** A place in one study's list: (place, 0 assignment / 1 quality item, id). */
interface Mark {
  place: number;
  rank: 0 | 1;
  id: number;
}
interface Found extends Mark {
  key: string;
}

const before = (a: Mark, b: Mark) =>
  a.place !== b.place ? a.place < b.place : a.rank !== b.rank ? a.rank < b.rank : a.id < b.id;

interface StudyView {
  id: number;
  name: string;
  /** Rater quality on: opaque keys, quality items listed. */
  blind: boolean;
  /** Training round not done: only its training items are listed. */
  gated: boolean;
}

/**
 * Where the annotator's item stands in their list: its key and label, the previous item, the next open item (the
 * first not submitted after it, wrapping around) and the progress; null when it is not theirs, `gated` when their
 * list does not show it now (real work of a study whose training round is not done).
 */
export function queuePlace(db: DbOrTx, userId: string, item: QueueItemRef): QueuePlace | { gated: true } | null {
  const q = statements(db);
  let at: Mark;
  let studyId: number;
  let training = false;
  let itemKey: string | null;
  let externalId = "";
  if (item.kind === "assignment") {
    const row = q.assignment.get(item.caseId, userId) as [number, number, string | null, string] | undefined;
    if (!row) return null;
    [studyId, , itemKey, externalId] = row;
    at = { place: row[1], rank: 0, id: item.caseId };
  } else {
    const row = q.qualityItem.get(item.id, userId) as [number, number, string, string] | undefined;
    if (!row) return null;
    [studyId, , itemKey] = row;
    training = row[3] === "training";
    at = { place: row[1], rank: 1, id: item.id };
  }

  // The studies the annotator has quality items in, and this one: settings, and whether the list shows them.
  const counts = new Map(
    (q.qualityCounts.all(userId) as [number, number, number, number, number][]).map(([s, ...n]) => [s, n]),
  );
  const views = new Map<number, StudyView | null>();
  const view = (id: number, assignedHere = false): StudyView | null => {
    if (views.has(id)) return views.get(id)!;
    const row = q.study.get(id) as [string, number | null, number | null, number | null] | undefined;
    const blind =
      row !== undefined &&
      qualityOn({ ...QUALITY_OFF, retestFraction: row[1] ?? 0, calibrationRate: row[2] ?? 0, training: !!row[3] });
    // A study is in the list when the annotator has an assignment in it; its quality items only with rater quality.
    const listed = row !== undefined && (assignedHere || q.inStudy.get({ user: userId, study: id }) === 1);
    const n = counts.get(id);
    const v = listed ? { id, name: row[0], blind, gated: blind && n !== undefined && n[2] > n[3] } : null;
    views.set(id, v);
    return v;
  };
  const here = view(studyId, item.kind === "assignment");
  if (!here) return item.kind === "quality" ? { gated: true } : null;
  if (item.kind === "assignment" ? here.gated : !here.blind || (here.gated && !training)) return { gated: true };

  const [assignedAll, doneAll] = q.assignedDone.get(userId) as [number, number];
  const progress = { done: doneAll, total: assignedAll };
  for (const [id, [all, done, trainingAll, trainingDone]] of counts) {
    const v = view(id);
    if (!v || !v.blind) continue;
    progress.total += v.gated ? trainingAll : all;
    progress.done += v.gated ? trainingDone : done;
    if (v.gated) {
      const [assigned, assignedDone] = q.studyCounts.get({ study: id, user: userId }) as [number, number];
      progress.total -= assigned;
      progress.done -= assignedDone;
    }
  }

  const key = item.kind === "quality" ? itemKey! : here.blind && itemKey ? itemKey : String(item.caseId);
  if (training) {
    const n = counts.get(studyId)!;
    const position = shownBefore(q, userId, here, at) + 1;
    externalId = `training ${position} of ${n[2]}`;
  } else if (here.blind && itemKey) externalId = blindLabel(key);

  // The annotator's other studies, in list order, read only when the answer lies outside this study.
  let order: StudyView[] | undefined;
  const others = () =>
    (order ??= (q.studies.all(userId) as [number, string][])
      .sort((a, b) => byStudyName(a[1], b[1]))
      .map(([id]) => view(id, true)!));
  const TOP: Mark = { place: -FAR, rank: 0, id: -FAR };
  const END: Mark = { place: FAR, rank: 1, id: FAR };

  let previous = lastBefore(q, userId, here, at);
  if (!previous) {
    const list = others();
    const i = list.findIndex((s) => s.id === studyId);
    for (let j = i - 1; j >= 0 && !previous; j--) previous = lastBefore(q, userId, list[j]!, END);
  }
  let next = firstOpenAfter(q, userId, here, at);
  if (!next) {
    const list = others();
    const i = list.findIndex((s) => s.id === studyId);
    for (const s of [...list.slice(i + 1), ...list.slice(0, i)]) if ((next = firstOpenAfter(q, userId, s, TOP))) break;
    if (!next) {
      const first = firstOpenAfter(q, userId, here, TOP);
      next = first && before(first, at) ? first : null;
    }
  }
  return {
    key,
    externalId,
    studyId,
    studyName: here.name,
    previousKey: previous?.key ?? null,
    nextOpenKey: next?.key ?? null,
    progress,
  };
}

/** The bounds of the statements for "before `m`" and "after `m`" on each side. */
function bounds(study: StudyView, userId: string, m: Mark) {
  const common = { user: userId, study: study.id, place: m.place, trainingOnly: study.gated ? 1 : 0 };
  return {
    // Assignments at the same place come before quality items, by case id among themselves.
    assigned: { ...common, below: m.rank === 1 ? FAR : m.id, above: m.rank === 1 ? FAR : m.id },
    quality: { ...common, below: m.rank === 0 ? -FAR : m.id, above: m.rank === 0 ? -FAR : m.id },
  };
}

const assignmentKey = (study: StudyView, caseId: number, itemKey: string | null) =>
  study.blind && itemKey ? itemKey : String(caseId);

/** The last item of the study's list before `m`. */
function lastBefore(q: Statements, userId: string, study: StudyView, m: Mark): Found | null {
  const b = bounds(study, userId, m);
  const a = study.gated ? undefined : (q.assignedBefore.get(b.assigned) as [number, number, string | null] | undefined);
  const k = study.blind ? (q.qualityBefore.get(b.quality) as [number, number, string] | undefined) : undefined;
  const fa: Found | null = a ? { place: a[0], rank: 0, id: a[1], key: assignmentKey(study, a[1], a[2]) } : null;
  const fk: Found | null = k ? { place: k[0], rank: 1, id: k[1], key: k[2] } : null;
  return fa && fk ? (before(fa, fk) ? fk : fa) : (fa ?? fk);
}

/** The first open item of the study's list after `m`. */
function firstOpenAfter(q: Statements, userId: string, study: StudyView, m: Mark): Found | null {
  const b = bounds(study, userId, m);
  const a = study.gated
    ? undefined
    : (q.assignedOpenAfter.get(b.assigned) as [number, number, string | null] | undefined);
  const k = study.blind ? (q.qualityOpenAfter.get(b.quality) as [number, number, string] | undefined) : undefined;
  const fa: Found | null = a ? { place: a[0], rank: 0, id: a[1], key: assignmentKey(study, a[1], a[2]) } : null;
  const fk: Found | null = k ? { place: k[0], rank: 1, id: k[1], key: k[2] } : null;
  return fa && fk ? (before(fa, fk) ? fa : fk) : (fa ?? fk);
}

/** How many items the study's list shows before `m`. */
function shownBefore(q: Statements, userId: string, study: StudyView, m: Mark): number {
  const b = bounds(study, userId, m);
  return (
    (study.gated ? 0 : (q.assignedCountBefore.get(b.assigned) as number)) +
    (study.blind ? (q.qualityCountBefore.get(b.quality) as number) : 0)
  );
}
