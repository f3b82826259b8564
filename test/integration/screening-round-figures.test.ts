/**
 * A screening round's figures are kept with the round's version (docs/screening.md, "Round figures at scale"): the
 * round and study pages read one version row and a window of items on the request thread, and every vote is tallied
 * on a worker thread only when the version has moved (migration 0032's triggers). Checked here: what the request
 * thread reads — rows returned and query plans — does not grow with the round's votes, and the figures follow every
 * kind of write that changes them.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Db } from "../../app/platform/db.server";
import { freshDb, makeUser } from "../support/db";
import { signedIn } from "../support/route-calls";
import { writeBigScreeningRound } from "../support/big-lists";
import { loader as roundLoader } from "../../app/routes/admin.screening.$studyId.rounds.$number";
import { loader as overviewLoader } from "../../app/routes/admin.screening.$studyId._index";
import { getRoundDetail } from "../../app/screening/screening-rounds.server";
import { computeRoundSummary, roundVersion } from "../../app/screening/round-figures.server";

let db: Db;
let cleanup: () => void;
beforeEach(() => ({ db, cleanup } = freshDb()));
afterEach(() => cleanup());

/** Every statement the request thread runs while `load` runs: its SQL, its plan and the rows it returned. */
async function readsOf(here: Db, load: () => Promise<unknown>) {
  const client = here.$client;
  const runs: { sql: string; args: unknown[]; rows: number }[] = [];
  const prepare = client.prepare;
  client.prepare = ((source: string) => {
    const st = prepare.call(client, source);
    for (const m of ["all", "get", "run"] as const) {
      const call = (st[m] as (...a: unknown[]) => unknown).bind(st);
      (st as unknown as Record<string, unknown>)[m] = (...args: unknown[]) => {
        const out = call(...args);
        runs.push({ sql: source, args, rows: Array.isArray(out) ? out.length : out === undefined ? 0 : 1 });
        return out;
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
    rows: r.rows,
    plan: /^\s*select/i.test(r.sql)
      ? (client.prepare(`EXPLAIN QUERY PLAN ${r.sql}`).all(...r.args) as { detail: string }[]).map((p) => p.detail)
      : [],
  }));
}

/** A round of `items` items with every one of three reviewers' votes submitted; the pages' reads, cold and warm. */
async function roundReads(items: number) {
  const { db: here, cleanup: done } = freshDb();
  try {
    await makeUser(here, "fig-admin", ["admin"]);
    const reviewers = await Promise.all(["r1", "r2", "r3"].map((u) => makeUser(here, `fig-${u}`, ["rater"])));
    const { studyId, roundId } = writeBigScreeningRound(here, {
      name: "Figures",
      items,
      reviewerIds: reviewers.map((r) => r.id),
    });
    // Every reviewer's vote on every item: relevant on every third item for the second and third reviewers.
    here.$client.prepare(`DELETE FROM screening_votes WHERE round_id = ?`).run(roundId);
    here.$client
      .prepare(
        `INSERT INTO screening_votes (round_item_id, round_id, reviewer_id, status, relevant, updated_at, submitted_at)
         SELECT ri.id, ri.round_id, r.reviewer_id, 'submitted', CASE WHEN r.reviewer_id = ? OR ri.position % 3 = 0
           THEN 1 ELSE 0 END, 0, 0
         FROM screening_round_items ri JOIN screening_reviewers r ON r.round_id = ri.round_id WHERE ri.round_id = ?`,
      )
      .run(reviewers[0]!.id, roundId);
    const admin = await signedIn(here, "fig-admin");
    const get = (path: string) => new Request(`http://concord.test${path}`, { headers: admin.post(path, {}).headers });
    const pages = async () => {
      await roundLoader({
        request: get(`/admin/screening/${studyId}/rounds/1`),
        params: { studyId: String(studyId), number: "1" },
        context: {},
      });
      await roundLoader({
        request: get(`/admin/screening/${studyId}/rounds/1?show=included`),
        params: { studyId: String(studyId), number: "1" },
        context: {},
      });
      await overviewLoader({
        request: get(`/admin/screening/${studyId}`),
        params: { studyId: String(studyId) },
        context: {},
      });
    };
    const cold = await readsOf(here, pages);
    const warm = await readsOf(here, pages);
    const detail = (await getRoundDetail(here, { studyId, number: 1 }))!;
    return { cold, warm, detail, roundId, here };
  } finally {
    done();
  }
}

const rowsOf = (reads: { rows: number }[]) => reads.reduce((n, r) => n + r.rows, 0);

describe("a screening round's figures", () => {
  it("cost the request thread the same rows with ten times the votes, and no plan reads the round's votes", async () => {
    const small = await roundReads(150);
    const large = await roundReads(1_500);
    expect(small.detail.round.figures.votesIn).toBe(450);
    expect(large.detail.round.figures.votesIn).toBe(4_500);
    expect(large.detail.round.figures.includedCandidates).toBe(500);
    for (const phase of ["cold", "warm"] as const) {
      const s = rowsOf(small[phase]);
      const l = rowsOf(large[phase]);
      expect({ phase, ratio: l / s < 1.2 }).toEqual({ phase, ratio: true });
      // Votes are read only by round item (the window's and the included controls'), never the round's.
      const votesRead = large[phase].flatMap((r) =>
        r.plan
          .filter((p) => /screening_votes|\bv\b/.test(p) && !/round_item_id=\?/.test(p))
          .map((p) => `${p} ← ${r.sql}`),
      );
      expect(votesRead).toEqual([]);
      const scans = large[phase].flatMap((r) =>
        r.plan
          .filter((p) => /^SCAN (screening_votes|screening_round_items|v|ri)\b/.test(p))
          .map((p) => `${p} ← ${r.sql}`),
      );
      expect(scans).toEqual([]);
    }
  }, 120_000);

  it("follow every write that changes them: a vote, its change and deletion, the round closed", async () => {
    const [a, b] = await Promise.all(["fw-a", "fw-b"].map((u) => makeUser(db, u, ["rater"])));
    const { studyId, roundId } = writeBigScreeningRound(db, { name: "Follow", items: 30, reviewerIds: [a!.id, b!.id] });
    const shown = async () => (await getRoundDetail(db, { studyId, number: 1 }))!.round;
    // What the page shows is what tallying every vote on this thread gives, at every step.
    const same = async () => {
      const { submittedBy: _s, pairwise, ...want } = computeRoundSummary(db, { studyId, roundId })!;
      const round = await shown();
      expect(round.figures).toEqual(want);
      expect(round.pairwise.map((p) => [p.nItems, p.ac1, p.percentAgreement])).toEqual(
        pairwise.map((p) => [p.nItems, p.ac1, p.percentAgreement]),
      );
    };
    await same();
    const v0 = roundVersion(db, roundId);
    const c = db.$client;
    const item = c.prepare(`SELECT id FROM screening_round_items WHERE round_id = ? AND position = 25`).pluck();
    c.prepare(
      `INSERT INTO screening_votes (round_item_id, round_id, reviewer_id, status, relevant, updated_at)
       VALUES (?, ?, ?, 'submitted', 1, 0)`,
    ).run(item.get(roundId), roundId, b!.id);
    expect(roundVersion(db, roundId)).toBeGreaterThan(v0);
    await same();
    c.prepare(`UPDATE screening_votes SET relevant = 0 WHERE round_id = ? AND reviewer_id = ?`).run(roundId, a!.id);
    await same();
    c.prepare(`DELETE FROM screening_votes WHERE round_id = ? AND reviewer_id = ?`).run(roundId, b!.id);
    await same();
    const v1 = roundVersion(db, roundId);
    c.prepare(`UPDATE screening_rounds SET status = 'closed', closed_at = 1 WHERE id = ?`).run(roundId);
    expect(roundVersion(db, roundId)).toBeGreaterThan(v1);
    expect((await shown()).status).toBe("closed");
    await same();
  });
});
