/**
 * Pages are windows (docs/architecture.md, "Pages are windows"): the study page, the progress page and the
 * annotator's list show a window of their list, read by keyset from the indexes, with counts the database keeps
 * (migration 0016's triggers). Checked here: the kept counts and states equal what the rows say after every kind of
 * write; paging forward and back walks the whole list once in order; the bulk reassignment acts on its filter, with
 * the confirmed count checked in the write's transaction; and a page's data does not grow with its study.
 */
import { and, eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { annotations, assignments, caseOutcomes, cases, events, referenceLabels } from "../../db/schema";
import type { Db } from "../../app/platform/db.server";
import {
  assignmentsWindow,
  bulkReassign,
  bulkReassignPlan,
  listStudyAnnotators,
  reassign,
} from "../../app/annotation/assignments.server";
import { listStudyCases, studyCasesWindow } from "../../app/annotation/studies.server";
import { countByState, listCaseProgress } from "../../app/gold/gold-export.server";
import { progressWindow } from "../../app/gold/progress-window.server";
import { studyStateCounts } from "../../app/annotation/study-counts.server";
import { saveDraft, submitAnnotation } from "../../app/annotation/annotations.server";
import { myCasesPage } from "../../app/annotation/my-cases-window.server";
import { loader as studyLoader } from "../../app/routes/admin.studies.$studyId._index";
import { loader as progressLoader } from "../../app/routes/admin.studies.$studyId.progress";
import { loader as annotateLoader } from "../../app/routes/annotate._index";
import { loader as casePageLoader } from "../../app/routes/annotate.$caseId";
import { loader as studiesLoader } from "../../app/routes/admin._index";
import { loader as statsLoader } from "../../app/routes/admin.studies.$studyId.stats";
import { freshDb, makeUser } from "../support/db";
import { signedIn } from "../support/route-calls";
import { studyForPair, sufficient } from "../support/labels";
import { writeBigStudy } from "../support/big-study";
import { MAX_PAGE_BATCHES } from "../../app/study-report/domain/rater-agreement";

let db: Db;
let cleanup: () => void;
beforeEach(() => ({ db, cleanup } = freshDb()));
afterEach(() => cleanup());

const q = (o: Record<string, string> = {}) => new URLSearchParams(o);

/** Every annotator's work in the study, counted from the rows themselves. */
function countedFromRows(studyId: number) {
  const rows = db
    .select({ annotatorId: assignments.annotatorId, status: annotations.status })
    .from(assignments)
    .leftJoin(annotations, eq(annotations.assignmentId, assignments.id))
    .where(eq(assignments.studyId, studyId))
    .all();
  const out = new Map<string, { assigned: number; started: number; submitted: number }>();
  for (const r of rows) {
    const c = out.get(r.annotatorId) ?? { assigned: 0, started: 0, submitted: 0 };
    c.assigned++;
    if (r.status) c.started++;
    if (r.status === "submitted" || r.status === "locked") c.submitted++;
    out.set(r.annotatorId, c);
  }
  return out;
}

function expectKeptCountsTrue(studyId: number) {
  const progress = listCaseProgress(db, studyId);
  expect(studyStateCounts(db, studyId)).toEqual(countByState(progress));
  const states = new Map(progress.map((p) => [p.caseId, p.state]));
  let after: string | null = null;
  do {
    const w = progressWindow(db, studyId, q(after ? { after } : {}));
    for (const r of w.rows) {
      expect(r.state).toBe(states.get(r.caseId));
      const p = progress.find((x) => x.caseId === r.caseId)!;
      expect([r.assigned, r.submitted]).toEqual([p.assigned, p.submitted]);
    }
    after = w.next;
  } while (after);
  // Each assignment's copied position and work state are its case's and its annotation's (migration 0021).
  const drift = db.$client
    .prepare(
      `SELECT count(*) FROM assignments a JOIN cases c ON c.id = a.case_id LEFT JOIN annotations n ON n.assignment_id = a.id
       WHERE a.position IS NOT c.position OR a.work_state IS NOT coalesce(n.status, 'not_started')`,
    )
    .pluck()
    .get();
  expect(drift).toBe(0);
  const counted = countedFromRows(studyId);
  for (const a of listStudyAnnotators(db, studyId)) {
    const c = counted.get(a.id) ?? { assigned: 0, started: 0, submitted: 0 };
    expect({ assigned: a.assigned, started: a.started, submitted: a.submitted }).toEqual(c);
  }
}

describe("the counts the database keeps", () => {
  it("equal what the rows say after assigning, drafts, submissions, outcomes, reference labels, reassigning and deleting", async () => {
    const [a, b, c] = await Promise.all([
      makeUser(db, "ann-a", ["annotator"]),
      makeUser(db, "ann-b", ["annotator"]),
      makeUser(db, "ann-c", ["annotator"]),
    ]);
    const admin = await makeUser(db, "boss", ["admin"]);
    const { study, caseIds } = studyForPair(db, { name: "Kept", cases: 12, annotatorIds: [a.id, b.id] });
    expectKeptCountsTrue(study.id);
    // Drafts, and both annotations of some cases (agreed and disputed outcomes).
    saveDraft(db, { userId: a.id, caseId: caseIds[0]!, values: sufficient("F32.1", 2), version: 0 });
    for (const [i, code] of [
      [1, "F32.1"],
      [2, "F20.0"],
      [3, "F41.1"],
    ] as const) {
      expect(
        submitAnnotation(db, { userId: a.id, caseId: caseIds[i]!, values: sufficient("F32.1", 2), version: 0 }).ok,
      ).toBe(true);
      expect(
        submitAnnotation(db, { userId: b.id, caseId: caseIds[i]!, values: sufficient(code, 2), version: 0 }).ok,
      ).toBe(true);
    }
    expectKeptCountsTrue(study.id);
    expect(studyStateCounts(db, study.id).agreed).toBe(1);
    expect(studyStateCounts(db, study.id).disputed).toBe(2);
    // A reference label on an unannotated case; then removed again.
    db.insert(referenceLabels).values({ caseId: caseIds[5]!, diagnosisSufficiency: "1", diagnosis: "F32" }).run();
    expectKeptCountsTrue(study.id);
    expect(studyStateCounts(db, study.id).reference).toBe(1);
    db.delete(referenceLabels).where(eq(referenceLabels.caseId, caseIds[5]!)).run();
    // A reassignment of unstarted work, and an outcome removed.
    const moved = db
      .select()
      .from(assignments)
      .where(and(eq(assignments.caseId, caseIds[6]!), eq(assignments.annotatorId, a.id)))
      .get()!;
    reassign(db, { assignmentId: moved.id, toAnnotatorId: c.id, actorId: admin.id, studyId: study.id });
    db.delete(caseOutcomes).where(eq(caseOutcomes.caseId, caseIds[1]!)).run();
    expectKeptCountsTrue(study.id);
    // A case moved in the study: its assignments move with it.
    db.update(cases).set({ position: 1000 }).where(eq(cases.id, caseIds[2]!)).run();
    expectKeptCountsTrue(study.id);
    // An annotation deleted: its assignment is unstarted again.
    db.delete(annotations).where(eq(annotations.caseId, caseIds[0]!)).run();
    expectKeptCountsTrue(study.id);
    // An assignment deleted: its case has one annotator left.
    db.delete(assignments).where(eq(assignments.id, moved.id)).run();
    expectKeptCountsTrue(study.id);
    expect(studyStateCounts(db, study.id).unassigned).toBe(1);
  });
});

describe("a window", () => {
  it("pages through the whole list once, in order, forward and back, and sorts and filters on the server", async () => {
    const ids = [(await makeUser(db, "p1", ["annotator"])).id, (await makeUser(db, "p2", ["annotator"])).id];
    const { studyId } = writeBigStudy(db, { name: "Paged", cases: 123, annotatorIds: ids });
    const all = listStudyCases(db, studyId).map((c) => c.externalId);
    const seen: string[] = [];
    let w = studyCasesWindow(db, studyId, q());
    expect(w.previous).toBeNull();
    for (;;) {
      expect(w.total).toBe(123);
      seen.push(...w.rows.map((r) => r.externalId));
      if (!w.next) break;
      w = studyCasesWindow(db, studyId, q({ after: w.next }));
    }
    expect(seen).toEqual(all);
    // Back from the last window.
    const back: string[] = [...w.rows.map((r) => r.externalId)];
    while (w.previous) {
      w = studyCasesWindow(db, studyId, q({ before: w.previous }));
      back.unshift(...w.rows.map((r) => r.externalId));
    }
    expect(back).toEqual(all);
    // Sorted by case id, descending; filtered by a prefix of the case id.
    const desc = studyCasesWindow(db, studyId, q({ sort: "externalId", dir: "desc" }));
    expect(desc.rows.map((r) => r.externalId)).toEqual([...all].sort().reverse().slice(0, 50));
    const prefixed = studyCasesWindow(db, studyId, q({ q: "big-00011" }));
    expect(prefixed.rows.map((r) => r.externalId)).toEqual(all.filter((x) => x.startsWith("big-00011")));
    expect(prefixed.total).toBe(10);
    // A cursor that is not one this list wrote starts at the top.
    expect(studyCasesWindow(db, studyId, q({ after: "garbage" })).rows[0]!.externalId).toBe(all[0]);
    // The assignments window, filtered by annotator and state, pages through exactly those.
    const unstarted: number[] = [];
    let after: string | null = null;
    do {
      const a = assignmentsWindow(
        db,
        studyId,
        q({ a_annotator: ids[0]!, a_state: "unstarted", ...(after ? { a_after: after } : {}) }),
      );
      expect(a.total).toBe(
        countedFromRows(studyId).get(ids[0]!)!.assigned - countedFromRows(studyId).get(ids[0]!)!.started,
      );
      unstarted.push(...a.rows.map((r) => r.assignmentId));
      for (const r of a.rows) expect([r.annotatorId, r.state]).toEqual([ids[0], "unstarted"]);
      after = a.next;
    } while (after);
    expect(new Set(unstarted).size).toBe(
      countedFromRows(studyId).get(ids[0]!)!.assigned - countedFromRows(studyId).get(ids[0]!)!.started,
    );
    // The annotator's list: one study's window, the counts and the next open case of the whole list.
    const mine = myCasesPage(db, ids[0]!, q());
    expect(mine.window.rows).toHaveLength(50);
    expect(Object.values(mine.counts).reduce((x, y) => x + y, 0)).toBe(countedFromRows(studyId).get(ids[0]!)!.assigned);
    expect(mine.window.rows.find((r) => r.state === "not_started" || r.state === "draft")?.key).toBe(mine.next);
  });
});

describe("moving one annotator's unstarted work", () => {
  it("counts first, moves exactly what the filter names, refuses a stale count and audits each move", async () => {
    const [a, b, c] = await Promise.all([
      makeUser(db, "mv-a", ["annotator"]),
      makeUser(db, "mv-b", ["annotator"]),
      makeUser(db, "mv-c", ["annotator"]),
    ]);
    const admin = await makeUser(db, "mv-admin", ["admin"]);
    const { study, caseIds } = studyForPair(db, { name: "Move", cases: 8, annotatorIds: [a.id, b.id] });
    saveDraft(db, { userId: a.id, caseId: caseIds[0]!, values: sufficient("F32.1", 2), version: 0 });
    // To b: every case of a's already has b on it, so nothing moves; to c: all 7 unstarted.
    expect(bulkReassignPlan(db, { studyId: study.id, from: a.id, to: b.id })).toEqual({ move: 0, blocked: 7 });
    expect(bulkReassignPlan(db, { studyId: study.id, from: a.id, to: c.id })).toEqual({ move: 7, blocked: 0 });
    // Meanwhile a starts one more case: the confirmed 7 is stale, and nothing moves.
    saveDraft(db, { userId: a.id, caseId: caseIds[1]!, values: sufficient("F32.1", 2), version: 0 });
    expect(() => bulkReassign(db, { studyId: study.id, from: a.id, to: c.id, expected: 7, actorId: admin.id })).toThrow(
      /now names 6/,
    );
    expect(countedFromRows(study.id).get(c.id)).toBeUndefined();
    expect(bulkReassign(db, { studyId: study.id, from: a.id, to: c.id, expected: 6, actorId: admin.id })).toEqual({
      moved: 6,
      blocked: 0,
    });
    expect(countedFromRows(study.id).get(a.id)).toEqual({ assigned: 2, started: 2, submitted: 0 });
    expect(countedFromRows(study.id).get(c.id)).toEqual({ assigned: 6, started: 0, submitted: 0 });
    expect(db.select().from(events).where(eq(events.action, "reassign")).all()).toHaveLength(6);
    expectKeptCountsTrue(study.id);
  });
});

describe("a list page's size", () => {
  /** The loaders' data of the three list pages for a study of `n` cases (ten annotators, 30 % annotated). */
  async function pageSizes(n: number) {
    const { db: here, cleanup: done } = freshDb();
    try {
      await makeUser(here, "size-admin", ["admin"]);
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) ids.push((await makeUser(here, `size-ann${i}`, ["annotator"])).id);
      const { studyId } = writeBigStudy(here, { name: "Sized", cases: n, annotatorIds: ids });
      const admin = await signedIn(here, "size-admin");
      const annotator = await signedIn(here, "size-ann0");
      const get = (cookieOf: typeof admin, path: string) =>
        new Request(`http://concord.test${path}`, { headers: cookieOf.post(path, {}).headers });
      const params = { studyId: String(studyId) };
      const size = (data: unknown) => JSON.stringify(data).length;
      return {
        study: size(await studyLoader({ request: get(admin, `/admin/studies/${studyId}`), params, context: {} })),
        progress: size(
          await progressLoader({ request: get(admin, `/admin/studies/${studyId}/progress`), params, context: {} }),
        ),
        annotate: size(await annotateLoader({ request: get(annotator, "/annotate"), params: {}, context: {} })),
      };
    } finally {
      done();
    }
  }

  /** The statistics page's data for a study of `n` cases (ten annotators, 30 % annotated), as JSON bytes, per query. */
  async function statsSizes(n: number, queries: string[]) {
    const { db: here, cleanup: done } = freshDb();
    try {
      await makeUser(here, "stats-admin", ["admin"]);
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) ids.push((await makeUser(here, `stats-ann${i}`, ["annotator"])).id);
      const { studyId } = writeBigStudy(here, { name: "Sized", cases: n, annotatorIds: ids });
      const admin = await signedIn(here, "stats-admin");
      const out: { bytes: number; batches: number; svg: boolean }[] = [];
      for (const query of queries) {
        const path = `/admin/studies/${studyId}/stats${query}`;
        const request = new Request(`http://concord.test${path}`, { headers: admin.post(path, {}).headers });
        const data = await statsLoader({ request, params: { studyId: String(studyId) }, context: {} });
        const json = JSON.stringify(data);
        out.push({ bytes: json.length, batches: data.agreement.over_time.by_batch.length, svg: json.includes("<svg") });
      }
      return out;
    } finally {
      done();
    }
  }

  it("stays within 1.2× from 1,000 to 100,000 cases for the statistics page, whatever batch size is asked", async () => {
    const [small] = await statsSizes(1_000, [""]);
    // The page's own batches, and the smallest batch one may ask for.
    const large = await statsSizes(100_000, ["", "?batch=2"]);
    for (const l of large) {
      expect(l.batches).toBeLessThanOrEqual(MAX_PAGE_BATCHES);
      expect(l.bytes / small!.bytes).toBeLessThan(1.2);
    }
    // Each chart is an image asked for by the page, its SVG sent once: none of it in the data, which stays small
    // (360 KB at 1,000 cases when every chart's SVG went in the HTML and again in the data).
    for (const page of [small!, ...large]) {
      expect(page.svg).toBe(false);
      expect(page.bytes).toBeLessThan(80_000);
    }
  }, 300_000);

  it("stays within 1.5× from 1,000 to 10,000 cases for the study page, the progress page and the annotator's list", async () => {
    const small = await pageSizes(1_000);
    const large = await pageSizes(10_000);
    for (const page of ["study", "progress", "annotate"] as const) {
      expect({ page, ratio: large[page] / small[page] < 1.5 }).toEqual({ page, ratio: true });
    }
  }, 240_000);
});

describe("what a list page reads", () => {
  /** The tables that grow with a study: a page may look rows of them up by key or read a window, never walk them. */
  const BIG = ["cases", "visible_cases", "assignments", "annotations", "case_sections", "case_outcomes", "work_time"];

  /**
   * Every statement the request thread runs while `load` runs, with its arguments, and its query plan
   * (EXPLAIN QUERY PLAN): a plan is deterministic where a time is not.
   */
  async function plansOf(load: () => Promise<unknown>) {
    const client = db.$client;
    const runs: { sql: string; args: unknown[] }[] = [];
    const prepare = client.prepare;
    client.prepare = ((source: string) => {
      const st = prepare.call(client, source);
      for (const m of ["all", "get", "run", "iterate"] as const) {
        const call = (st[m] as (...a: unknown[]) => unknown).bind(st);
        (st as unknown as Record<string, unknown>)[m] = (...args: unknown[]) => {
          runs.push({ sql: source, args });
          return call(...args);
        };
      }
      return st;
    }) as typeof client.prepare;
    try {
      await load();
    } finally {
      client.prepare = prepare;
    }
    return runs.map((r) => ({
      sql: r.sql.replace(/\s+/g, " "),
      plan: (client.prepare(`EXPLAIN QUERY PLAN ${r.sql}`).all(...r.args) as { detail: string }[]).map((p) => p.detail),
    }));
  }

  /**
   * The plan steps that read a table that grows with the study other than by key or by the page's own window: a
   * scan; on an annotator's page, a search by anything but the annotator or a key; on any page, a count or grouping
   * over such a search.
   */
  function walks(plans: { sql: string; plan: string[] }[], perAnnotator: boolean) {
    const out: string[] = [];
    for (const { sql, plan } of plans) {
      // A count or a grouping over rows of the study reads every one of them: no page counts a study itself.
      const counts = /group by/i.test(sql) || /^select count\(/i.test(sql.trim());
      // Aliases of the big tables in this statement ("cases c", "visible_cases c", "assignments a" …).
      const big = new Set(BIG);
      for (const m of sql.matchAll(/\b(\w+)\s+(?:AS\s+)?(\w+)\s+(?:ON|WHERE|JOIN|CROSS|LEFT|INNER|,)/gi))
        if (BIG.includes(m[1]!.replace(/"/g, ""))) big.add(m[2]!);
      for (const step of plan) {
        const [, kind, table] = /^(SCAN|SEARCH) (\S+)/.exec(step) ?? [];
        if (!kind || !big.has(table!.replace(/"/g, ""))) continue;
        // The grace-period check of every reader reads a partial index that holds only the submissions still in
        // their grace period (minutes of work), never the study (docs/safe-psych.md, "Second chances").
        if (/USING (?:COVERING )?INDEX \w+_locks_at_idx /.test(step)) continue;
        // A whole table (or a whole index of it) read: the page grows with the study.
        if (kind === "SCAN") out.push(`${step} ← ${sql}`);
        // An annotator's page reads that annotator's rows or rows looked up by key, never a range of the study;
        // nor does any page count a range of the study.
        else if (
          (perAnnotator || counts) &&
          !/[( ](?:rowid|id|case_id|assignment_id|annotator_id|item_key)=\?/.test(step)
        )
          out.push(`${step} ← ${sql}`);
      }
    }
    return out;
  }

  it("has no plan that walks the study's cases, assignments or annotations on the list pages and the case page", async () => {
    await makeUser(db, "eq-admin", ["admin"]);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await makeUser(db, `eq-ann${i}`, ["annotator"])).id);
    // Most of the study done: the annotator's next open case lies after a long run of finished ones.
    const { studyId } = writeBigStudy(db, { name: "Planned", cases: 600, annotatorIds: ids, annotatedShare: 0.8 });
    const admin = await signedIn(db, "eq-admin");
    const annotator = await signedIn(db, "eq-ann0");
    const get = (who: typeof admin, path: string) =>
      new Request(`http://concord.test${path}`, { headers: who.post(path, {}).headers });
    const params = { studyId: String(studyId) };
    const mine = myCasesPage(db, ids[0]!, q());
    const done = mine.window.rows[0]!.key;
    expect(mine.window.rows[0]!.state).toBe("locked");
    expect(mine.next).not.toBeNull();

    const admins = await plansOf(async () => {
      await studiesLoader({ request: get(admin, "/admin"), params: {}, context: {} });
      await studyLoader({ request: get(admin, `/admin/studies/${studyId}`), params, context: {} });
      await progressLoader({ request: get(admin, `/admin/studies/${studyId}/progress`), params, context: {} });
      await progressLoader({
        request: get(admin, `/admin/studies/${studyId}/progress?state=in_annotation`),
        params,
        context: {},
      });
      // The statistics page: its figures come from the statistics worker, kept with the study's summary version.
      await statsLoader({ request: get(admin, `/admin/studies/${studyId}/stats`), params, context: {} });
    });
    const annotators = await plansOf(async () => {
      for (const state of ["", "not_started", "draft", "submitted", "locked"])
        await annotateLoader({ request: get(annotator, `/annotate?state=${state}`), params: {}, context: {} });
      // A finished case early in the list: its next open case is far after it.
      await casePageLoader({ request: get(annotator, `/annotate/${done}`), params: { caseId: done }, context: {} });
      await casePageLoader({
        request: get(annotator, `/annotate/${mine.next}`),
        params: { caseId: mine.next! },
        context: {},
      });
    });
    expect(admins.length).toBeGreaterThan(5);
    expect(annotators.length).toBeGreaterThan(5);
    expect(walks(admins, false)).toEqual([]);
    expect(walks(annotators, true)).toEqual([]);
    // The next open case is the first entry of the open assignments' index, not a walk over the finished ones.
    expect(annotators.some(({ plan }) => plan.some((p) => p.includes("assignments_open_pos_idx")))).toBe(true);
  });
});

describe("the grace-period index", () => {
  it("is partial: it holds only submissions still in their grace period, so the check every reader makes stays small", () => {
    const { db, cleanup } = freshDb();
    try {
      const rows = db.$client
        .prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND name LIKE '%locks_at_idx'`)
        .all() as { name: string; sql: string }[];
      expect(rows.map((r) => r.name).sort()).toEqual(["annotations_locks_at_idx", "quality_items_locks_at_idx"]);
      for (const r of rows) expect(r.sql).toMatch(/WHERE status = 'submitted' AND locks_at IS NOT NULL$/);
    } finally {
      cleanup();
    }
  });
});
