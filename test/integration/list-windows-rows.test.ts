/**
 * A list's window reads only its rows, and each row from what is kept (docs/architecture.md, "What still grows in
 * the lists"): counted here by the statements the request thread runs, not by time.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Db } from "../../app/platform/db.server";
import { freshDb, makeUser } from "../support/db";
import { writeBigReviewSet, writeBigScreeningRound } from "../support/big-lists";
import { reviewSeedsWindow } from "../../app/case-review/review-windows.server";
import { getReviewReport } from "../../app/case-review/case-review.server";
import type { ListWindow } from "../../app/platform/list-window";
import { screeningStudiesWindow } from "../../app/screening/round-figures.server";
import { listScreeningStudies } from "../../app/screening/screening.server";

let db: Db;
let cleanup: () => void;
beforeEach(() => ({ db, cleanup } = freshDb()));
afterEach(() => cleanup());

/** The rows every statement the request thread runs returns while `load` runs, in all. */
function rowsReadBy(load: () => unknown): number {
  const client = db.$client;
  let n = 0;
  const prepare = client.prepare;
  client.prepare = ((source: string) => {
    const st = prepare.call(client, source);
    const all = st.all.bind(st) as (...a: unknown[]) => unknown[];
    const get = st.get.bind(st) as (...a: unknown[]) => unknown;
    (st as unknown as Record<string, unknown>).all = (...args: unknown[]) => {
      const rows = all(...args);
      n += rows.length;
      return rows;
    };
    (st as unknown as Record<string, unknown>).get = (...args: unknown[]) => {
      const row = get(...args);
      if (row !== undefined) n += 1;
      return row;
    };
    return st;
  }) as typeof client.prepare;
  try {
    load();
  } finally {
    client.prepare = prepare;
  }
  return n;
}

/** Every row of a window, walked forward from the top. */
function walkAll<T>(read: (p: URLSearchParams) => ListWindow<T>, base: Record<string, string>): T[] {
  const rows: T[] = [];
  let w = read(new URLSearchParams(base));
  rows.push(...w.rows);
  while (w.next) {
    w = read(new URLSearchParams({ ...base, s_after: w.next }));
    rows.push(...w.rows);
  }
  return rows;
}

/** The SQL of every statement the request thread runs while `load` runs. */
async function statementsOf(load: () => Promise<unknown>): Promise<string[]> {
  const client = db.$client;
  const runs: string[] = [];
  const prepare = client.prepare;
  client.prepare = ((source: string) => {
    const st = prepare.call(client, source);
    for (const m of ["all", "get", "run", "iterate"] as const) {
      const call = (st[m] as (...a: unknown[]) => unknown).bind(st);
      (st as unknown as Record<string, unknown>)[m] = (...args: unknown[]) => {
        runs.push(source.replace(/\s+/g, " "));
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
  return runs;
}

describe("the admin's list of screening studies", () => {
  it("summarises each study from its rounds' kept figures: no vote is read on the request thread", async () => {
    const [a, b] = await Promise.all(["sl-a", "sl-b"].map((u) => makeUser(db, u, ["rater"])));
    for (let i = 0; i < 3; i++) {
      const r = writeBigScreeningRound(db, { name: `Study ${i}`, items: 60, reviewerIds: [a!.id, b!.id] });
      writeBigScreeningRound(db, { name: "", items: 40, reviewerIds: [a!.id], roundNumber: 2, studyId: r.studyId });
    }
    const expected = listScreeningStudies(db);
    for (let pass = 0; pass < 2; pass++) {
      let rows: unknown[] = [];
      const statements = await statementsOf(async () => {
        rows = (await screeningStudiesWindow(db, new URLSearchParams())).rows;
      });
      expect(rows).toEqual(expected);
      expect(statements.filter((s) => /screening_votes/i.test(s))).toEqual([]);
    }
  });
});

describe("the review set's seed outcomes", () => {
  /** A review set of `items` items, a quarter seeds: the first rater accepts some, the second rejects some with a reason. */
  async function seededSet(items: number, name: string) {
    const raters = await Promise.all([`${name}-a`, `${name}-b`].map((u) => makeUser(db, u, ["rater"])));
    const setId = writeBigReviewSet(db, { name, items, raterIds: raters.map((r) => r!.id) });
    const c = db.$client;
    c.prepare(
      `UPDATE review_judgements SET decision = CASE WHEN item_id % 3 = 0 THEN 'reject' ELSE 'accept' END,
         reason = CASE WHEN item_id % 3 = 0 THEN ' too vague ' ELSE '' END
       WHERE status = 'submitted' AND item_id IN (SELECT id FROM review_items WHERE set_id = ? AND kind = 'seed')`,
    ).run(setId);
    c.prepare(
      `INSERT OR REPLACE INTO review_judgements (item_id, rater_id, status, decision, reason, updated_at)
       SELECT id, ?, 'submitted', 'reject', 'not a seed', 0 FROM review_items
       WHERE set_id = ? AND kind = 'seed' AND id % 5 = 0`,
    ).run(raters[1]!.id, setId);
    return setId;
  }

  it("pages the outcomes by keyset, each status filter and its count as the report has them, reading the window only", async () => {
    const small = await seededSet(400, "small");
    const large = await seededSet(4_000, "large");
    const report = getReviewReport(db, small);
    const read = (p: URLSearchParams) => reviewSeedsWindow(db, small, p);
    expect(walkAll(read, {})).toEqual(report.seeds);
    for (const status of ["accepted", "rejected", "pending"] as const) {
      const wanted = report.seeds.filter((x) => x.status === status);
      expect(walkAll(read, { s_status: status })).toEqual(wanted);
      expect(read(new URLSearchParams({ s_status: status })).total).toBe(wanted.length);
    }
    // One window of a set of 1,000 seeds reads its 51 seeds, their reasons (two raters at most) and the count only.
    const rowsOf = (setId: number) => rowsReadBy(() => reviewSeedsWindow(db, setId, new URLSearchParams()));
    expect(rowsOf(small)).toBeLessThanOrEqual(51 * 3 + 1);
    expect(rowsOf(large)).toBeLessThanOrEqual(51 * 3 + 1);
  });
});
