/**
 * A list's window reads only its rows, and each row from what is kept (docs/architecture.md, "What still grows in
 * the lists"): counted here by the statements the request thread runs, not by time.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Db } from "../../app/platform/db.server";
import { freshDb, makeUser } from "../support/db";
import { writeBigScreeningRound } from "../support/big-lists";
import { screeningStudiesWindow } from "../../app/screening/round-figures.server";
import { listScreeningStudies } from "../../app/screening/screening.server";

let db: Db;
let cleanup: () => void;
beforeEach(() => ({ db, cleanup } = freshDb()));
afterEach(() => cleanup());

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
