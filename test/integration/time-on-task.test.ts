/**
 * Time on task (docs/statistics.md, "Time on task"): the active time each save carries is added up by the work-item
 * engine per (item, user), only for saves it accepts, and the study's medians per annotator and per case are those
 * numpy computes (test/fixtures/time-on-task/make_medians.py).
 */
import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { users as usersTable, workTime } from "../../db/schema";
import type { Db } from "../../app/platform/db.server";
import { saveDraft, submitAnnotation } from "../../app/annotation/annotations.server";
import { getTimeOnTask } from "../../app/study-report/time-on-task.server";
import { getTimeOnTaskOffThread } from "../../app/study-report/study-report.server";
import { parseDraftPost } from "../../app/platform/forms";
import { AnnotationValuesSchema } from "../../app/annotation/annotations.server";
import type { UserView } from "../../app/accounts/users.server";
import { freshDb, makeUser } from "../support/db";
import { studyForPair, sufficient } from "../support/labels";

const expected = JSON.parse(
  readFileSync(new URL("../fixtures/time-on-task/medians.json", import.meta.url), "utf8"),
) as {
  work: [string, number, number[]][];
  n: number;
  median_ms: number;
  total_ms: number;
  per_annotator: Record<string, { n: number; median_ms: number; total_ms: number }>;
  per_case: Record<string, { n: number; median_ms: number }>;
};

let db: Db;
let cleanup: () => void;
let users: Record<string, UserView>;
let caseIds: number[];
let studyId: number;

beforeEach(async () => {
  ({ db, cleanup } = freshDb());
  const [alice, bruno] = await Promise.all([
    makeUser(db, "alice", ["annotator"]),
    makeUser(db, "bruno", ["annotator"]),
  ]);
  users = { alice, bruno };
  const s = studyForPair(db, { name: "Timed", cases: 4, annotatorIds: [alice.id, bruno.id] });
  caseIds = s.caseIds;
  studyId = s.study.id;
});
afterEach(() => cleanup());

/** Saves drafts with all but the last active time, then submits with the last. */
function work(userId: string, caseId: number, saves: number[]) {
  let version = 0;
  saves.forEach((activeMs, i) => {
    const values = sufficient("F32.1", 2, `notes ${i}`);
    const input = { userId, caseId, values, version, activeMs };
    const r = i === saves.length - 1 ? submitAnnotation(db, input) : saveDraft(db, input);
    if (!r.ok) throw new Error(r.message);
    version = r.version;
  });
}

describe("the engine stores active time", () => {
  it("adds up the active time of every accepted save of one item and user", () => {
    work(users.alice!.id, caseIds[0]!, [40_000, 20_000, 1_500]);
    const rows = db.select().from(workTime).all();
    expect(rows).toEqual([
      expect.objectContaining({
        entity: "annotation",
        itemId: caseIds[0],
        userId: users.alice!.id,
        activeMs: 61_500,
        saves: 3,
      }),
    ]);
  });

  it("a refused save adds nothing", () => {
    work(users.alice!.id, caseIds[0]!, [10_000]);
    const stale = saveDraft(db, {
      userId: users.alice!.id,
      caseId: caseIds[0]!,
      values: sufficient("F32.1", 3),
      version: 0,
      activeMs: 99_000,
    });
    expect(stale.ok).toBe(false);
    expect(
      db
        .select()
        .from(workTime)
        .all()
        .map((r) => r.activeMs),
    ).toEqual([10_000]);
  });

  it("a save without active time writes no time row", () => {
    saveDraft(db, { userId: users.alice!.id, caseId: caseIds[0]!, values: sufficient("F32.1", 2), version: 0 });
    expect(db.select().from(workTime).all()).toEqual([]);
  });
});

describe("the study's medians", () => {
  it("match numpy's per annotator, per case and overall, counting submitted annotations only", () => {
    for (const [who, c, saves] of expected.work) work(users[who]!.id, caseIds[c]!, saves);
    // A draft never submitted is not yet a data point of the plan.
    saveDraft(db, {
      userId: users.alice!.id,
      caseId: caseIds[3]!,
      values: sufficient("F32.1", 2),
      version: 0,
      activeMs: 1_000_000,
    });
    const t = getTimeOnTask(db, studyId);
    expect(t.n).toBe(expected.n);
    expect(t.median_ms).toBe(expected.median_ms);
    expect(t.total_ms).toBe(expected.total_ms);
    expect(Object.fromEntries(t.per_annotator.map(({ annotator, ...rest }) => [annotator, rest]))).toEqual(
      expected.per_annotator,
    );
    expect(
      Object.fromEntries(
        t.per_case.map((c) => [String(caseIds.indexOf(c.case_id)), { n: c.n, median_ms: c.median_ms }]),
      ),
    ).toEqual(expected.per_case);
  });
});

describe("the progress page's time on task", () => {
  /** What the page shows: the study's time on task, computed afresh, without its per-case list. */
  const fresh = () => {
    const { per_case: _perCase, ...rest } = getTimeOnTask(db, studyId);
    return rest;
  };

  it("is kept until a write that may change it, and is then the exact medians again", async () => {
    const { alice, bruno } = users as { alice: UserView; bruno: UserView };
    work(alice.id, caseIds[0]!, [10_000, 20_000]);
    const first = getTimeOnTaskOffThread(db, studyId);
    expect(await first).toEqual(fresh());
    // Nothing changed: the same computation answers (one row read, no worker).
    expect(getTimeOnTaskOffThread(db, studyId)).toBe(first);
    // A draft of work not submitted changes nothing the page shows, and keeps it.
    saveDraft(db, { userId: bruno.id, caseId: caseIds[1]!, values: sufficient("F32.1", 2), version: 0, activeMs: 5 });
    expect(getTimeOnTaskOffThread(db, studyId)).toBe(first);
    // A submission, active time added to submitted work, a renamed annotator: each is seen at once.
    work(bruno.id, caseIds[0]!, [7_000]);
    const second = getTimeOnTaskOffThread(db, studyId);
    expect(second).not.toBe(first);
    expect(await second).toEqual(fresh());
    expect((await second).n).toBe(2);
    db.update(workTime).set({ activeMs: 90_000 }).where(eq(workTime.userId, bruno.id)).run();
    expect((await getTimeOnTaskOffThread(db, studyId)).total_ms).toBe(fresh().total_ms);
    expect(fresh().total_ms).toBe(30_000 + 90_000);
    db.update(usersTable).set({ username: "bruna" }).where(eq(usersTable.id, bruno.id)).run();
    expect((await getTimeOnTaskOffThread(db, studyId)).per_annotator.map((a) => a.annotator)).toEqual([
      "alice",
      "bruna",
    ]);
    expect(await getTimeOnTaskOffThread(db, studyId)).toEqual(fresh());
  });
});

describe("the post's activeMs", () => {
  const form = (fields: Record<string, string>) => {
    const f = new FormData();
    for (const [k, v] of Object.entries({ intent: "draft", version: "0", values: "{}", ...fields })) f.set(k, v);
    return f;
  };
  const parse = (fields: Record<string, string>) =>
    parseDraftPost(form(fields), AnnotationValuesSchema, { id: "1", maxLength: 1000 });

  it("is read as whole milliseconds, 0 when a page sends none", () => {
    const a = parse({ activeMs: "12345" });
    expect(a.ok && a.activeMs).toBe(12_345);
    const b = parse({});
    expect(b.ok && b.activeMs).toBe(0);
  });

  it("a negative, fractional or implausibly large value makes the post malformed", () => {
    for (const activeMs of ["-1", "1.5", String(13 * 3600 * 1000), "soon"]) expect(parse({ activeMs }).ok).toBe(false);
  });
});
