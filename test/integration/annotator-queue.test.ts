/**
 * The annotator's queue on the case page (docs/architecture.md, "The annotator's queue"): "next open case",
 * "previous case" and the progress come from index seeks on columns the database's triggers keep on each assignment.
 * The reference is the list itself: the home page's rows (listAnnotatorCases, studies by name, cases by position)
 * walked by the work-item rules nextOpenItem / previousItem / progressOf (app/work-items/domain/work-item.ts), which
 * is how the page computed them before. After every step of a reproducible mix of drafts, submissions, revisions and
 * locks, over two studies whose names sort against their creation order, each of the annotator's cases must agree.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fromRoot } from "../../app/platform/paths.server";
import type { Db } from "../../app/platform/db.server";
import {
  getAnnotatorCase,
  listAnnotatorCases,
  saveDraft,
  submitAnnotation,
} from "../../app/annotation/annotations.server";
import { nextOpenItem, previousItem, progressOf } from "../../app/work-items/domain/work-item";
import type { UserView } from "../../app/accounts/users.server";
import { freshDb, makeUser } from "../support/db";
import { studyForPair, sufficient } from "../support/labels";

let db: Db;
let cleanup: () => void;
let alice: UserView;
let bruno: UserView;
const prepared: string[] = [];

beforeAll(async () => {
  ({ db, cleanup } = freshDb());
  alice = await makeUser(db, "alice", ["annotator"]);
  bruno = await makeUser(db, "bruno", ["annotator"]);
  // Created first but listed second: the list is ordered by study name, not by id.
  studyForPair(db, { name: "Zeta study", cases: 7, annotatorIds: [alice.id, bruno.id] });
  studyForPair(db, { name: "Alpha study", cases: 5, annotatorIds: [alice.id, bruno.id] });
  // Record the SQL the case page prepares on this connection (its statements are prepared at the first use).
  const prepare = db.$client.prepare.bind(db.$client);
  db.$client.prepare = ((source: string) => (prepared.push(source), prepare(source))) as typeof db.$client.prepare;
});
afterAll(() => cleanup());

/** What the page must show for each of alice's cases, from the list and the work-item rules. */
function expected(userId: string) {
  const rows = listAnnotatorCases(db, userId);
  return rows.map((r, at) => ({
    caseId: r.caseId,
    nextCaseId: nextOpenItem(rows, at)?.caseId ?? null,
    previousCaseId: previousItem(rows, at)?.caseId ?? null,
    progress: progressOf(rows),
  }));
}

function shown(userId: string) {
  return listAnnotatorCases(db, userId).map((r) => {
    const v = getAnnotatorCase(db, { userId, caseId: r.caseId })!;
    return { caseId: r.caseId, nextCaseId: v.nextCaseId, previousCaseId: v.previousCaseId, progress: v.progress };
  });
}

/** mulberry32, so the mix of steps is the same on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("the annotator's queue", () => {
  it("agrees with the list after every draft, submission, revision and lock", () => {
    const random = prng(19);
    const versions = new Map<string, number>();
    const cases = listAnnotatorCases(db, alice.id).map((r) => r.caseId);
    expect(cases).toHaveLength(12);
    expect(shown(alice.id)).toEqual(expected(alice.id));
    let locked = 0;
    for (let step = 0; step < 40; step++) {
      const who = random() < 0.7 ? alice : bruno;
      const caseId = cases[Math.floor(random() * cases.length)]!;
      const key = `${who.id}:${caseId}`;
      const version = versions.get(key) ?? 0;
      const values = sufficient("F32.1", 1, `step ${step}`);
      const input = { userId: who.id, caseId, values, version };
      const r = random() < 0.5 ? saveDraft(db, input) : submitAnnotation(db, input);
      if (r.ok) {
        versions.set(key, r.version);
        if (r.state === "locked") locked++;
      }
      expect(shown(alice.id)).toEqual(expected(alice.id));
      expect(shown(bruno.id)).toEqual(expected(bruno.id));
    }
    // The mix reached every kind of state, so the comparison covered them.
    const states = new Set(listAnnotatorCases(db, alice.id).map((r) => r.state));
    expect(locked).toBeGreaterThan(0);
    expect([...states].sort()).toEqual(["draft", "locked", "not_started", "submitted"]);
  });

  it("the migration's backfill gives existing assignments the values the triggers keep", () => {
    const columns = "SELECT id, queue_study_id, queue_position, queue_open FROM assignments ORDER BY id";
    const kept = db.$client.prepare(columns).all();
    expect(kept.some((r) => (r as { queue_open: number }).queue_open === 0)).toBe(true);
    const migration = readFileSync(fromRoot("db", "migrations", "0007_annotator_queue.sql"), "utf8");
    const backfill = migration
      .split("--> statement-breakpoint")
      .find((s) => /^\s*(--.*\n)*UPDATE `assignments`/.test(s))!;
    // Before the migration: no queue columns filled in (and every assignment counted open).
    db.$client.exec("UPDATE assignments SET queue_study_id = NULL, queue_position = NULL, queue_open = 1");
    db.$client.exec(backfill);
    expect(db.$client.prepare(columns).all()).toEqual(kept);
  });

  it("answers from indexes: no temporary sort and no scan of the assignments", () => {
    getAnnotatorCase(db, { userId: alice.id, caseId: listAnnotatorCases(db, alice.id)[0]!.caseId });
    const queueStatements = prepared.filter((s) => /from "assignments"/.test(s) && /queue_/.test(s));
    expect(queueStatements.length).toBeGreaterThanOrEqual(4);
    for (const source of queueStatements) {
      const plan = db.$client
        .prepare(`EXPLAIN QUERY PLAN ${source}`)
        .all(
          ...source
            .split("?")
            .slice(1)
            .map(() => 1),
        )
        .map((r) => (r as { detail: string }).detail)
        .join("\n");
      expect(plan, source).not.toMatch(/TEMP B-TREE/);
      expect(plan, source).not.toMatch(/SCAN "?assignments"?(?! USING)/);
    }
  });
});
