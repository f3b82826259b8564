/**
 * The bank fit as a background job (docs/mentat.md, "Fits in the background"), on a real temporary SQLite database:
 * start → running with progress → done, the stored fit identical to the one-thread runBankFit of the same ratings
 * (itself checked against the Python reference in test/unit/bradley-terry*.test.ts); a second start refused while one
 * runs; cancellation; a job left running by a stopped server marked interrupted at the next start, then started
 * again; the bank page's action answering before the fit ends; the progress route for admins only.
 */
import { readFileSync } from "node:fs";
import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { events, jobs, mentatFits } from "../../db/schema";
import type { Db } from "../../app/platform/db.server";
import { addBankRaters } from "../../app/mentat/panel.server";
import {
  fitJobEnded,
  getLatestFit,
  latestFitJob,
  runBankFit,
  startBankFitJob,
  cancelBankFitJob,
} from "../../app/mentat/fits.server";
import { getRaterQuestion, listRaterQuestions, saveOptionRating } from "../../app/mentat/ratings.server";
import { importQuestionBank } from "../../app/mentat/banks.server";
import { createJob, INTERRUPTED_MESSAGE, interruptStaleJobs, markJobRunning } from "../../app/platform/jobs.server";
import { login } from "../../app/accounts/users.server";
import { requireUser } from "../../app/accounts/guard.server";
import { loader as jobLoader } from "../../app/routes/admin.mentat.$bankId.fit-job";
import { action as bankAction } from "../../app/routes/admin.mentat.$bankId._index";
import { freshDb, makeUser, TEST_PASSWORD } from "../support/db";
import type { UserView } from "../../app/accounts/users.server";

const BANK = readFileSync(new URL("../fixtures/expert-ratings/questions.csv", import.meta.url), "utf8");

let db: Db;
let cleanup: () => void;
let boss: UserView;
let raters: UserView[];

beforeEach(async () => {
  ({ db, cleanup } = freshDb());
  boss = await makeUser(db, "boss", ["admin"]);
  raters = [
    await makeUser(db, "ann", ["rater"]),
    await makeUser(db, "ben", ["rater"]),
    await makeUser(db, "cat", ["rater"]),
  ];
});
afterEach(() => cleanup());

/** The pilot bank, every question rated by three experts who disagree a little. */
function ratedBank(): number {
  const r = importQuestionBank(db, { bankName: "Mentat pilot", text: BANK, actorId: boss.id, seed: 5 });
  if (!r.ok) throw new Error(JSON.stringify(r));
  const bankId = r.bankId!;
  addBankRaters(db, { bankId, raterIds: raters.map((u) => u.id), actorId: boss.id });
  const prefs = [
    [95, 30, 20, 5, 0],
    [80, 60, 10, 10, 0],
    [70, 75, 20, 0, 5],
  ];
  raters.forEach((u, k) => {
    for (const q of listRaterQuestions(db, u.id)) {
      const view = getRaterQuestion(db, { userId: u.id, questionId: q.questionId })!;
      const saved = saveOptionRating(db, {
        userId: u.id,
        questionId: q.questionId,
        values: { scores: view.question.options.map((_, i) => prefs[k]![(i + q.questionId) % 5]!), comment: "" },
        version: 0,
        intent: "submit",
      });
      expect(saved.ok).toBe(true);
    }
  });
  return bankId;
}

describe("a fit as a background job", () => {
  it("runs, reports progress, and stores the same fit as the one-thread path", async () => {
    const bankId = ratedBank();
    const options = { bootstrap: 300, seed: 3 };
    const started = startBankFitJob(db, { bankId, options, actorId: boss.id, workers: 2 });
    // startBankFitJob returns at once: the fit is not stored yet, the job runs.
    expect(started).toMatchObject({ status: "running", done: 0, total: 300, fitId: null, startedBy: boss.id });
    expect(getLatestFit(db, bankId)).toBeNull();
    expect(() => startBankFitJob(db, { bankId, options, actorId: boss.id })).toThrow(/already running/);

    const seen: number[] = [];
    let ended = false;
    void fitJobEnded(started.id).then(() => (ended = true));
    while (!ended) {
      seen.push(latestFitJob(db, bankId)!.done);
      await new Promise((r) => setTimeout(r, 2));
    }
    const job = latestFitJob(db, bankId)!;
    expect(job).toMatchObject({ status: "done", done: 300, total: 300, error: null });
    expect(job.finishedAt).toBeGreaterThanOrEqual(job.startedAt!);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect(seen.some((d) => d > 0 && d < 300)).toBe(true);

    const background = getLatestFit(db, bankId)!;
    expect(background.id).toBe(job.fitId);
    const direct = runBankFit(db, { bankId, options, actorId: boss.id });
    expect(background.result).toEqual(direct.result);
    expect(background.params).toEqual(direct.params);
    expect(background.inputHash).toBe(direct.inputHash);
    const actions = db
      .select()
      .from(events)
      .where(eq(events.entity, "job"))
      .all()
      .map((e) => e.action);
    expect(actions).toEqual(["start"]);

    // Ended, so a new fit of the bank may start.
    const again = startBankFitJob(db, { bankId, options: { bootstrap: 0 }, actorId: boss.id });
    await fitJobEnded(again.id);
    expect(latestFitJob(db, bankId)).toMatchObject({ id: again.id, status: "done" });
  });

  it("refuses a bank without submitted ratings, and records no job", () => {
    const r = importQuestionBank(db, { bankName: "Empty", text: BANK, actorId: boss.id, seed: 5 });
    const bankId = r.ok ? r.bankId! : 0;
    expect(() => startBankFitJob(db, { bankId, actorId: boss.id })).toThrow(/nothing to fit/);
    expect(db.select().from(jobs).all()).toEqual([]);
  });

  it("cancels a running fit: workers stopped, nothing saved, a new start allowed", async () => {
    const bankId = ratedBank();
    const job = startBankFitJob(db, { bankId, options: { bootstrap: 5000, seed: 1 }, actorId: boss.id, workers: 2 });
    await cancelBankFitJob(db, { bankId, actorId: boss.id });
    expect(latestFitJob(db, bankId)).toMatchObject({ id: job.id, status: "cancelled", fitId: null });
    expect(latestFitJob(db, bankId)!.error).toMatch(/Cancelled/);
    expect(db.select().from(mentatFits).all()).toEqual([]);
    await expect(cancelBankFitJob(db, { bankId, actorId: boss.id })).rejects.toThrow(/No fit of this bank is running/);
  });

  it("marks a job left running by a stopped server as interrupted, and lets it start again", async () => {
    const bankId = ratedBank();
    // What a server killed mid-fit leaves behind: a running job row and no process working on it.
    const id = createJob(db, {
      kind: "mentat-fit",
      subject: `mentat_bank:${bankId}`,
      params: { bankId },
      total: 200,
      actorId: boss.id,
      now: 1,
    });
    markJobRunning(db, id, 2);
    expect(() => startBankFitJob(db, { bankId, actorId: boss.id })).toThrow(/already running/);
    expect(interruptStaleJobs(db, 3)).toBe(1);
    expect(latestFitJob(db, bankId)).toMatchObject({ id, status: "failed", error: INTERRUPTED_MESSAGE, finishedAt: 3 });
    const again = startBankFitJob(db, { bankId, options: { bootstrap: 10 }, actorId: boss.id });
    await fitJobEnded(again.id);
    expect(latestFitJob(db, bankId)).toMatchObject({ id: again.id, status: "done", done: 10 });
  });
});

describe("the bank page and its progress route", () => {
  async function cookieFor(username: string): Promise<string> {
    const r = await login(db, { username, password: TEST_PASSWORD, ip: "192.0.2.9" });
    if (!r.ok) throw new Error(r.error);
    return r.sessionCookie.split(";")[0]!;
  }
  async function thrown(p: Promise<unknown>): Promise<Response> {
    try {
      await p;
    } catch (e) {
      if (e instanceof Response) return e;
      throw e;
    }
    throw new Error("expected a thrown Response");
  }
  const csrfOf = async (cookie: string) =>
    (await requireUser(new Request("http://concord.test/", { headers: { Cookie: cookie } }))).csrf;

  it("starts the fit from the page and answers before it ends; the route shows it to admins only", async () => {
    const bankId = ratedBank();
    const admin = await cookieFor("boss");
    const form = new URLSearchParams({
      csrf: await csrfOf(admin),
      intent: "fit",
      bootstrap: "200",
      seed: "0",
      raterEffects: "slope+offset",
    });
    const post = () =>
      bankAction({
        request: new Request(`http://concord.test/admin/mentat/${bankId}`, {
          method: "POST",
          headers: { Cookie: admin, "Content-Type": "application/x-www-form-urlencoded" },
          body: form,
        }),
        params: { bankId: String(bankId) },
        context: {},
      });
    const first = await post();
    expect(first).toMatchObject({ ok: true });
    expect((first as { message: string }).message).toMatch(/Fit started/);
    expect(getLatestFit(db, bankId)).toBeNull();
    expect(await post()).toMatchObject({ ok: false, message: expect.stringMatching(/already running/) });

    const get = (cookie?: string) =>
      jobLoader({
        request: new Request(`http://concord.test/admin/mentat/${bankId}/fit-job`, {
          headers: cookie ? { Cookie: cookie } : {},
        }),
        params: { bankId: String(bankId) },
        context: {},
      });
    const body = (await (await get(admin)).json()) as { job: { status: string; total: number } };
    expect(body.job).toMatchObject({ status: "running", total: 200 });
    expect((await thrown(get(await cookieFor("ann")))).status).toBe(403);
    expect((await thrown(get())).status).toBe(302);

    await fitJobEnded(latestFitJob(db, bankId)!.id);
    const done = (await (await get(admin)).json()) as { job: { status: string; fitId: number } };
    expect(done.job).toMatchObject({ status: "done", fitId: getLatestFit(db, bankId)!.id });
  });
});
