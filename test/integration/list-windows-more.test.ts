/**
 * Every list is a window (docs/architecture.md, "Pages are windows"): the judge validation, screening, expert
 * ratings, adjudication, users and audit lists each read one window by keyset, page forward and back through the
 * whole list once in order, take their filters from the URL, and render the same number of rows, in about the same
 * bytes, whether their parent holds 3 or 30 windows' worth of rows. Each user's own list holds only their items.
 */
import type { LoaderFunctionArgs } from "@remix-run/node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Db } from "../../app/platform/db.server";
import type { ListWindow } from "../../app/platform/list-window";
import { listSampledItems } from "../../app/judge-validation/judge-set-export.server";
import { listRaterItems } from "../../app/judge-validation/judge-ratings.server";
import { judgeQueuePage, judgeSampleWindow } from "../../app/judge-validation/judge-windows.server";
import { loader as judgeSetLoader } from "../../app/routes/admin.judge-validation.$setId._index";
import { loader as judgeQueueLoader } from "../../app/routes/judge-validation._index";
import { freshDb, makeUser } from "../support/db";
import { signedIn } from "../support/route-calls";
import { writeBigBank, writeBigJudgeSet, writeBigReviewSet, writeBigScreeningRound } from "../support/big-lists";
import { bankQuestionsWindow, listBankQuestions } from "../../app/mentat/questions.server";
import { getBank } from "../../app/mentat/banks.server";
import {
  getReviewSet,
  listRaterItems as listReviewRaterItems,
  listReviewItems,
} from "../../app/case-review/case-review.server";
import { reviewItemsWindow } from "../../app/case-review/review-windows.server";
import { listRaterQuestions } from "../../app/mentat/ratings.server";
import { expertQueuePage } from "../../app/expert-panel/expert-queue-window.server";
import { loader as bankLoader } from "../../app/routes/admin.mentat.$bankId._index";
import { loader as reviewSetLoader } from "../../app/routes/admin.case-review.$setId._index";
import { loader as expertQueueLoader } from "../../app/routes/expert-ratings._index";
import { listAdjudicationQueue } from "../../app/adjudication/adjudication.server";
import { adjudicationQueuePage } from "../../app/adjudication/queue-window.server";
import { loader as adjudicationLoader } from "../../app/routes/adjudicate._index";
import { writeBigStudy } from "../support/big-study";
import { listUsers, usersWindow } from "../../app/accounts/users.server";
import { listStudies, studiesWindow } from "../../app/annotation/studies.server";
import { loader as adminHomeLoader } from "../../app/routes/admin._index";
import { loader as usersLoader } from "../../app/routes/admin.users";
import { caseEventsWindow, listCaseEvents } from "../../app/audit/audit.server";
import { loader as adminCaseLoader } from "../../app/routes/admin.cases.$caseId";
import { listReviewerEntries } from "../../app/screening/screening-review.server";
import { screeningQueuePage } from "../../app/screening/screening-windows.server";
import { loader as screeningQueueLoader } from "../../app/routes/screening._index";
import { getRoundDetail } from "../../app/screening/screening-rounds.server";
import { loader as screeningRoundLoader } from "../../app/routes/admin.screening.$studyId.rounds.$number";
import { judgeSetsWindow } from "../../app/judge-validation/judge-sets.server";
import { banksWindow } from "../../app/mentat/banks.server";
import { reviewSetsWindow } from "../../app/case-review/case-review.server";
import { screeningStudiesWindow } from "../../app/screening/round-figures.server";
import { loader as judgeSetsLoader } from "../../app/routes/admin.judge-validation._index";
import { loader as expertAdminLoader } from "../../app/routes/admin.expert-ratings._index";
import { loader as screeningStudiesLoader } from "../../app/routes/admin.screening._index";
import { gradingSetsWindow } from "../../app/rubric-grading/sets.server";
import { loader as gradingSetsLoader } from "../../app/routes/admin.grading._index";
import { mcReportsWindow } from "../../app/mc-evaluation/reports.server";
import { loader as mcReportsLoader } from "../../app/routes/admin.mc-evaluation._index";
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

let db: Db;
let cleanup: () => void;
beforeEach(() => ({ db, cleanup } = freshDb()));
afterEach(() => cleanup());

const q = (o: Record<string, string> = {}) => new URLSearchParams(o);

/**
 * The rows of a whole list, walked window by window with `next` from the top, and again with `previous` from the last
 * window back; `prefix` is the window's parameter prefix.
 */
function walk<T>(read: (p: URLSearchParams) => ListWindow<T>, base: Record<string, string> = {}, prefix = "") {
  const forward: T[] = [];
  let w = read(q(base));
  expect(w.previous).toBeNull();
  const totals = new Set<number>();
  for (;;) {
    expect(w.rows.length).toBeLessThanOrEqual(w.query.size);
    totals.add(w.total);
    forward.push(...w.rows);
    if (!w.next) break;
    w = read(q({ ...base, [`${prefix}after`]: w.next }));
  }
  const back: T[] = [...w.rows];
  while (w.previous) {
    w = read(q({ ...base, [`${prefix}before`]: w.previous }));
    back.unshift(...w.rows);
  }
  expect(totals.size).toBe(1);
  return { forward, back, total: [...totals][0]! };
}

/** `walk` for a window read asynchronously (a page whose figures come from a worker thread). */
async function walkAsync<T>(
  read: (p: URLSearchParams) => Promise<ListWindow<T>>,
  base: Record<string, string> = {},
  prefix = "",
) {
  const cached = new Map<string, ListWindow<T>>();
  // Read every window the synchronous walk will ask for first, then walk over what was read.
  let w = await read(q(base));
  cached.set(q(base).toString(), w);
  for (;;) {
    if (!w.next) break;
    const p = q({ ...base, [`${prefix}after`]: w.next });
    w = await read(p);
    cached.set(p.toString(), w);
  }
  while (w.previous) {
    const p = q({ ...base, [`${prefix}before`]: w.previous });
    w = await read(p);
    cached.set(p.toString(), w);
  }
  return walk((p) => cached.get(p.toString())!, base, prefix);
}

/** A loader's data, as JSON bytes, for a signed-in user's GET of `path`. */
async function loaderBytes(
  here: Db,
  username: string,
  loader: (args: LoaderFunctionArgs) => Promise<unknown>,
  path: string,
  params: Record<string, string> = {},
) {
  const who = await signedIn(here, username);
  const request = new Request(`http://concord.test${path}`, { headers: who.post(path, {}).headers });
  return JSON.stringify(await loader({ request, params, context: {} })).length;
}

/** The same page's bytes when its parent holds 3 windows' worth of rows and when it holds 30. */
async function smallAndLarge(build: (here: Db, n: number) => Promise<() => Promise<number>>) {
  const out: number[] = [];
  for (const n of [150, 1_500]) {
    const { db: here, cleanup: done } = freshDb();
    try {
      out.push(await (await build(here, n))());
    } finally {
      done();
    }
  }
  return { small: out[0]!, large: out[1]!, ratio: out[1]! / out[0]! };
}

describe("judge validation", () => {
  it("the admin's sample pages by position and by annotation id, forward and back, filtered by bucket and id prefix", async () => {
    const raters = await Promise.all(["j1", "j2", "j3"].map((u) => makeUser(db, u, ["rater"])));
    const setId = writeBigJudgeSet(db, { name: "Big set", items: 123, raterIds: raters.map((r) => r.id) });
    const all = listSampledItems(db, setId).map((r) => r.annotationId);
    const byPos = walk((p) => judgeSampleWindow(db, setId, p));
    expect(byPos.forward.map((r) => r.annotationId)).toEqual(all);
    expect(byPos.back.map((r) => r.annotationId)).toEqual(all);
    expect(byPos.total).toBe(123);
    expect(byPos.forward[0]!).toMatchObject({ assigned: 3, submitted: 1 });
    const byId = walk((p) => judgeSampleWindow(db, setId, p), { sort: "annotationId", dir: "desc" });
    expect(byId.forward.map((r) => r.annotationId)).toEqual([...all].sort().reverse());
    expect(byId.back.map((r) => r.annotationId)).toEqual([...all].sort().reverse());
    const refusals = walk((p) => judgeSampleWindow(db, setId, p), { bucket: "refusal" });
    expect(refusals.forward.map((r) => r.annotationId)).toEqual(
      listSampledItems(db, setId)
        .filter((r) => r.bucket === "refusal")
        .map((r) => r.annotationId),
    );
    expect(refusals.total).toBe(41);
    const prefixed = judgeSampleWindow(db, setId, q({ q: "ann_0" }));
    expect(prefixed.rows.map((r) => r.annotationId)).toEqual(all.filter((a) => a.startsWith("ann_0")).slice(0, 50));
  });

  it("the rater's list holds their own responses only, one set at a time, with the state filter and counts of the whole list", async () => {
    const raters = await Promise.all(["r1", "r2", "r3", "r4"].map((u) => makeUser(db, u, ["rater"])));
    const a = writeBigJudgeSet(db, { name: "A set", items: 130, raterIds: raters.slice(0, 3).map((r) => r.id) });
    const b = writeBigJudgeSet(db, {
      name: "B set",
      items: 60,
      raterIds: [raters[1]!.id, raters[3]!.id, raters[2]!.id],
    });
    const mine = listRaterItems(db, raters[0]!.id);
    const page = judgeQueuePage(db, raters[0]!.id, q());
    expect(page.sets.map((s) => s.id)).toEqual([a]);
    expect(page.counts).toEqual({ not_started: 74, draft: 12, submitted: 44, locked: 0 });
    expect(page.next).toBe(mine.find((r) => r.state !== "submitted")!.itemId);
    const walked = walk((p) => judgeQueuePage(db, raters[0]!.id, p).window);
    expect(walked.forward.map((r) => r.itemId)).toEqual(mine.map((r) => r.itemId));
    expect(walked.back.map((r) => r.itemId)).toEqual(mine.map((r) => r.itemId));
    // A set that is not theirs, named in the URL, shows their first set instead; never another rater's items.
    expect(judgeQueuePage(db, raters[0]!.id, q({ set: String(b) })).window.query.filters.set).toBe(String(a));
    const drafts = walk((p) => judgeQueuePage(db, raters[0]!.id, p).window, { state: "draft" });
    expect(drafts.forward.map((r) => r.itemId)).toEqual(mine.filter((r) => r.state === "draft").map((r) => r.itemId));
    expect(drafts.total).toBe(12);
    // The second rater's second set, chosen in the URL.
    const theirs = judgeQueuePage(db, raters[1]!.id, q({ set: String(b) }));
    expect(theirs.window.rows.every((r) => r.setName === "B set")).toBe(true);
    expect(theirs.window.total).toBe(60);
  });

  it("pages stay the same size when the set holds 30 windows of responses instead of 3", async () => {
    for (const page of ["admin", "rater"] as const) {
      const r = await smallAndLarge(async (here, n) => {
        await makeUser(here, "jv-admin", ["admin"]);
        const ids = await Promise.all(["jv1", "jv2", "jv3"].map(async (u) => (await makeUser(here, u, ["rater"])).id));
        const setId = writeBigJudgeSet(here, { name: "Sized", items: n, raterIds: ids });
        return page === "admin"
          ? () =>
              loaderBytes(here, "jv-admin", judgeSetLoader, `/admin/judge-validation/${setId}`, {
                setId: String(setId),
              })
          : () => loaderBytes(here, "jv1", judgeQueueLoader, "/judge-validation");
      });
      expect({ page, bounded: r.ratio < 1.2 }).toEqual({ page, bounded: true });
    }
  }, 60_000);
});

describe("screening", () => {
  it("the reviewer's list pages through each open round of theirs in the shared order, with the state filter", async () => {
    const [a, b, c] = await Promise.all(["s1", "s2", "s3"].map((u) => makeUser(db, u, ["rater"])));
    const one = writeBigScreeningRound(db, { name: "Alpha", items: 130, reviewerIds: [a!.id, b!.id] });
    const two = writeBigScreeningRound(db, {
      name: "Alpha",
      studyId: one.studyId,
      roundNumber: 2,
      items: 70,
      reviewerIds: [a!.id],
    });
    const other = writeBigScreeningRound(db, { name: "Beta", items: 20, reviewerIds: [c!.id] });
    const mine = listReviewerEntries(db, a!.id);
    const page = screeningQueuePage(db, a!.id, q());
    expect(page.rounds.map((r) => r.id)).toEqual([one.roundId, two.roundId]);
    expect(page.counts).toEqual({
      not_started: mine.filter((r) => r.state === "not_started").length,
      draft: mine.filter((r) => r.state === "draft").length,
      submitted: mine.filter((r) => r.state === "submitted").length,
      locked: 0,
    });
    expect(page.next).toBe(mine.find((r) => r.state !== "submitted")!.entryId);
    for (const round of [one, two]) {
      const walked = walk((p) => screeningQueuePage(db, a!.id, p).window, { round: String(round.roundId) });
      const expected = mine.filter((r) => r.round === (round === one ? 1 : 2));
      expect(walked.forward).toEqual(expected);
      expect(walked.back).toEqual(expected);
    }
    const drafts = walk((p) => screeningQueuePage(db, a!.id, p).window, { state: "draft" });
    expect(drafts.forward.map((r) => r.entryId)).toEqual(
      mine.filter((r) => r.round === 1 && r.state === "draft").map((r) => r.entryId),
    );
    // Another reviewer's round named in the URL is not read: the list shows the reviewer's own first round.
    const asked = screeningQueuePage(db, a!.id, q({ round: String(other.roundId) }));
    expect(asked.window.query.filters.round).toBe(String(one.roundId));
    expect(asked.window.rows.every((r) => r.studyName === "Alpha")).toBe(true);
    // b reviews round 1 only and has voted nothing.
    expect(screeningQueuePage(db, b!.id, q()).counts).toEqual({ not_started: 130, draft: 0, submitted: 0, locked: 0 });
  });

  it("the reviewer's page stays the same size when the round holds 30 windows of items instead of 3", async () => {
    const r = await smallAndLarge(async (here, n) => {
      const rev = await makeUser(here, "sz-rev", ["rater"]);
      writeBigScreeningRound(here, { name: "Sized", items: n, reviewerIds: [rev.id] });
      return () => loaderBytes(here, "sz-rev", screeningQueueLoader, "/screening");
    });
    expect(r.ratio).toBeLessThan(1.2);
  }, 60_000);
});

describe("a screening round's items, for the admin", () => {
  it("page by position and by item id, forward and back, filtered by included, controls and an id prefix", async () => {
    const [a, b] = await Promise.all(["rw-a", "rw-b"].map((u) => makeUser(db, u, ["rater"])));
    const r = writeBigScreeningRound(db, { name: "Round", items: 130, reviewerIds: [a!.id, b!.id] });
    const c = db.$client;
    c.prepare(`UPDATE screening_round_items SET is_control = 1 WHERE round_id = ? AND position % 10 = 0`).run(
      r.roundId,
    );
    // b votes relevant on the first 20 items, which a submitted too: two relevant votes include them.
    c.prepare(
      `INSERT INTO screening_votes (round_item_id, round_id, reviewer_id, status, relevant, updated_at)
       SELECT id, round_id, ?, 'submitted', 1, 0 FROM screening_round_items WHERE round_id = ? AND position <= 20`,
    ).run(b!.id, r.roundId);
    const read = async (p: URLSearchParams) => (await getRoundDetail(db, { studyId: r.studyId, number: 1 }, p))!.window;
    const all = await walkAsync(read);
    expect(all.total).toBe(130);
    expect(all.forward.map((i) => i.position)).toEqual(Array.from({ length: 130 }, (_, i) => i + 1));
    expect(all.back).toEqual(all.forward);
    expect((await read(q())).rows).toHaveLength(50);

    const ids = all.forward.map((i) => i.id).sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
    const byId = await walkAsync(read, { sort: "id" });
    expect(byId.forward.map((i) => i.id)).toEqual(ids);
    expect(byId.back).toEqual(byId.forward);
    expect((await walkAsync(read, { sort: "id", dir: "desc" })).forward.map((i) => i.id)).toEqual([...ids].reverse());

    const shown = (show: string) => walkAsync(read, { show });
    expect((await shown("included")).forward).toEqual(all.forward.filter((i) => i.included));
    expect((await shown("included")).forward.map((i) => i.position)).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
    expect((await shown("controls")).forward).toEqual(all.forward.filter((i) => i.isControl));
    expect((await shown("controls")).total).toBe(13);
    expect((await shown("included-controls")).forward.map((i) => i.position)).toEqual([10, 20]);
    const prefixed = await walkAsync(read, { q: "IT-12" });
    expect(prefixed.forward.map((i) => i.id)).toEqual([
      "it-12",
      "it-120",
      "it-121",
      "it-122",
      "it-123",
      "it-124",
      "it-125",
      "it-126",
      "it-127",
      "it-128",
      "it-129",
    ]);
    expect((await walkAsync(read, { q: "it-12", show: "controls" })).forward.map((i) => i.id)).toEqual(["it-120"]);
    // An unknown choice shows every item, and says so in the window's filters.
    const unknown = await read(q({ show: "secret" }));
    expect(unknown.total).toBe(130);
    expect(unknown.query.filters.show).toBe("");
    // The included controls, with their notes, are listed whole beside the window.
    const detail = (await getRoundDetail(db, { studyId: r.studyId, number: 1 }, q({ show: "controls" })))!;
    expect(detail.includedControls.map((i) => i.id)).toEqual(["it-10", "it-20"]);
  });

  it("the round page stays the same size when the round holds 30 windows of items instead of 3, and is the admin's only", async () => {
    const r = await smallAndLarge(async (here, n) => {
      await makeUser(here, "rw-admin", ["admin"]);
      const rev = await makeUser(here, "rw-rev", ["rater"]);
      const { studyId } = writeBigScreeningRound(here, { name: "Sized", items: n, reviewerIds: [rev.id] });
      const path = `/admin/screening/${studyId}/rounds/1`;
      const params = { studyId: String(studyId), number: "1" };
      await expect(loaderBytes(here, "rw-rev", screeningRoundLoader, path, params)).rejects.toMatchObject({
        status: 403,
      });
      return () => loaderBytes(here, "rw-admin", screeningRoundLoader, path, params);
    });
    expect(r.ratio).toBeLessThan(1.2);
  }, 60_000);
});

describe("expert banks and review sets", () => {
  it("a bank's questions page by position and question id, forward and back, filtered by domain and id prefix", async () => {
    const e = await makeUser(db, "e1", ["rater"]);
    const bankId = writeBigBank(db, { name: "Bank", questions: 133, raterIds: [e.id] });
    const bank = getBank(db, bankId)!;
    const all = listBankQuestions(db, bankId);
    const byPos = walk((p) => bankQuestionsWindow(db, bank, p));
    expect(byPos.forward).toEqual(all);
    expect(byPos.back).toEqual(all);
    expect(byPos.total).toBe(133);
    const ids = all.map((x) => x.externalId);
    const byId = walk((p) => bankQuestionsWindow(db, bank, p), { sort: "externalId" });
    expect(byId.forward.map((x) => x.externalId)).toEqual([...ids].sort());
    const triage = walk((p) => bankQuestionsWindow(db, bank, p), { domain: "triage" });
    expect(triage.forward).toEqual(all.filter((x) => x.domain === "triage"));
    expect(triage.total).toBe(all.filter((x) => x.domain === "triage").length);
    const prefixed = walk((p) => bankQuestionsWindow(db, bank, p), { q: "q-0" });
    expect(prefixed.forward).toEqual(all.filter((x) => x.externalId.startsWith("q-0")));
  });

  it("a review set's items page by position and item id, forward and back, filtered by kind", async () => {
    const e = await makeUser(db, "e2", ["rater"]);
    const setId = writeBigReviewSet(db, { name: "Set", items: 121, raterIds: [e.id] });
    const set = getReviewSet(db, setId)!;
    const all = listReviewItems(db, setId);
    const byPos = walk((p) => reviewItemsWindow(db, set, p));
    expect(byPos.forward).toEqual(all);
    expect(byPos.back).toEqual(all);
    expect(byPos.total).toBe(121);
    const byId = walk((p) => reviewItemsWindow(db, set, p), { sort: "externalId", dir: "desc" });
    expect(byId.back.map((x) => x.externalId)).toEqual(
      all
        .map((x) => x.externalId)
        .sort()
        .reverse(),
    );
    const seeds = walk((p) => reviewItemsWindow(db, set, p), { kind: "seed" });
    expect(seeds.forward).toEqual(all.filter((x) => x.kind === "seed"));
    expect(seeds.total).toBe(31);
  });

  it("a review set page's seed outcomes are a window of their own, by seed id, filtered by status", async () => {
    await makeUser(db, "cr-admin", ["admin"]);
    const e = await makeUser(db, "cr1", ["rater"]);
    const setId = writeBigReviewSet(db, { name: "Seeds", items: 400, raterIds: [e.id] });
    const read = async (params: Record<string, string>) => {
      const who = await signedIn(db, "cr-admin");
      const path = `/admin/case-review/${setId}?${new URLSearchParams(params)}`;
      const request = new Request(`http://concord.test${path}`, { headers: who.post(path, {}).headers });
      return reviewSetLoader({ request, params: { setId: String(setId) }, context: {} });
    };
    const seedIds = listReviewItems(db, setId)
      .filter((x) => x.kind === "seed")
      .map((x) => x.externalId)
      .sort();
    const seen: string[] = [];
    let page = await read({});
    for (;;) {
      seen.push(...page.seeds.rows.map((x) => x.id));
      if (!page.seeds.next) break;
      page = await read({ s_after: page.seeds.next });
    }
    expect(seen).toEqual(seedIds);
    expect(page.report.seeds).toEqual([]);
    const pending = await read({ s_status: "pending" });
    expect(pending.seeds.rows.length).toBeGreaterThan(0);
    expect(pending.seeds.rows.every((x) => x.status === "pending")).toBe(true);
  });

  it("the expert's list shows one bank or set of their own at a time, in the list's order, with state filter and counts", async () => {
    const [e, f] = await Promise.all([makeUser(db, "e3", ["rater"]), makeUser(db, "e4", ["rater"])]);
    const bankId = writeBigBank(db, { name: "Bank", questions: 260, raterIds: [e.id] });
    const setId = writeBigReviewSet(db, { name: "Set", items: 90, raterIds: [e.id] });
    const foreign = writeBigReviewSet(db, { name: "Other", items: 10, raterIds: [f.id] });
    const questions = listRaterQuestions(db, e.id);
    const items = listReviewRaterItems(db, e.id);
    const page = expertQueuePage(db, e.id, q());
    expect(page.collections.map((c) => c.key)).toEqual([`b${bankId}`, `s${setId}`]);
    const all = [...questions.map((x) => x.state), ...items.map((x) => x.state)];
    expect(page.counts).toEqual({
      not_started: all.filter((x) => x === "not_started").length,
      draft: all.filter((x) => x === "draft").length,
      submitted: all.filter((x) => x === "submitted").length,
      locked: 0,
    });
    expect(page.next).toBe(`/mentat/${questions.find((x) => x.state !== "submitted")!.questionId}`);
    const bankRows = walk((p) => expertQueuePage(db, e.id, p).window);
    expect(bankRows.forward.map((r) => [r.to, r.state])).toEqual(
      questions.map((x) => [`/mentat/${x.questionId}`, x.state]),
    );
    expect(bankRows.back.map((r) => r.to)).toEqual(questions.map((x) => `/mentat/${x.questionId}`));
    const setRows = walk((p) => expertQueuePage(db, e.id, p).window, { c: `s${setId}` });
    expect(setRows.forward.map((r) => [r.to, r.state])).toEqual(
      items.map((x) => [`/case-review/${x.itemId}`, x.state]),
    );
    const drafts = walk((p) => expertQueuePage(db, e.id, p).window, { c: `s${setId}`, state: "draft" });
    expect(drafts.forward.map((r) => r.to)).toEqual(
      items.filter((x) => x.state === "draft").map((x) => `/case-review/${x.itemId}`),
    );
    // A set whose panel does not hold the expert, named in the URL: their own first collection instead.
    expect(expertQueuePage(db, e.id, q({ c: `s${foreign}` })).window.query.filters.c).toBe(`b${bankId}`);
    expect(expertQueuePage(db, f.id, q()).counts.not_started).toBe(
      listReviewRaterItems(db, f.id).filter((x) => x.state === "not_started").length,
    );
  });

  it("the bank, review set and expert pages stay the same size with 30 windows of rows instead of 3", async () => {
    for (const page of ["bank", "set", "expert"] as const) {
      const r = await smallAndLarge(async (here, n) => {
        await makeUser(here, "ex-admin", ["admin"]);
        const e = await makeUser(here, "ex1", ["rater"]);
        if (page === "set") {
          const setId = writeBigReviewSet(here, { name: "Sized", items: n, raterIds: [e.id] });
          return () =>
            loaderBytes(here, "ex-admin", reviewSetLoader, `/admin/case-review/${setId}`, { setId: String(setId) });
        }
        // Five domains, two of them rated: 2.5× the questions give the expert n rows.
        const bankId = writeBigBank(here, { name: "Sized", questions: n * 2.5, raterIds: [e.id] });
        return page === "bank"
          ? () => loaderBytes(here, "ex-admin", bankLoader, `/admin/mentat/${bankId}`, { bankId: String(bankId) })
          : () => loaderBytes(here, "ex1", expertQueueLoader, "/expert-ratings");
      });
      expect({ page, small: r.small, bounded: r.ratio < 1.2 }).toEqual({ page, small: r.small, bounded: true });
    }
  }, 120_000);
});

/** Every outcome of a big study made disputed, on diagnosis or sufficiency in turn, with equal times in runs of 7. */
function disputeAll(here: Db, studyId: number) {
  here.$client
    .prepare(
      `UPDATE case_outcomes SET status = 'disputed', gold = NULL,
         dispute_reason = CASE case_id % 3 WHEN 0 THEN 'sufficiency' ELSE 'diagnosis' END,
         disputed_at = 1000 + (case_id / 7) * 10 WHERE study_id = ?`,
    )
    .run(studyId);
}

describe("the adjudicator's queue", () => {
  it("pages through the disputed cases, oldest first, never a case the adjudicator annotated, filtered by reason and study", async () => {
    const [a, b] = await Promise.all([makeUser(db, "aa", ["annotator"]), makeUser(db, "ab", ["annotator"])]);
    const adj = await makeUser(db, "adj", ["adjudicator", "annotator"]);
    const one = writeBigStudy(db, { name: "One", cases: 200, annotatorIds: [a.id, b.id, adj.id], annotatedShare: 0.9 });
    const two = writeBigStudy(db, { name: "Two", cases: 60, annotatorIds: [a.id, b.id], annotatedShare: 1 });
    disputeAll(db, one.studyId);
    disputeAll(db, two.studyId);
    const all = listAdjudicationQueue(db, adj.id);
    expect(all.length).toBeGreaterThan(100);
    const walked = walk((p) => adjudicationQueuePage(db, adj.id, p).window);
    expect(walked.forward).toEqual(all);
    expect(walked.back).toEqual(all);
    expect(walked.total).toBe(all.length);
    const page = adjudicationQueuePage(db, adj.id, q());
    expect([page.waiting, page.next]).toEqual([all.length, all[0]!.caseId]);
    const onlyTwo = walk((p) => adjudicationQueuePage(db, adj.id, p).window, {
      study: String(two.studyId),
      reason: "sufficiency",
    });
    expect(onlyTwo.forward).toEqual(all.filter((r) => r.studyName === "Two" && r.reason === "sufficiency"));
    // The annotators see none of their own cases: a's queue holds no case a annotated.
    const own = listAdjudicationQueue(db, a.id);
    expect(walk((p) => adjudicationQueuePage(db, a.id, p).window).forward).toEqual(own);
  });

  it("the queue page stays the same size with 30 windows of disputed cases instead of 3", async () => {
    const r = await smallAndLarge(async (here, n) => {
      const ids = [(await makeUser(here, "qa", ["annotator"])).id, (await makeUser(here, "qb", ["annotator"])).id];
      await makeUser(here, "qadj", ["adjudicator"]);
      const { studyId } = writeBigStudy(here, { name: "Sized", cases: n, annotatorIds: ids, annotatedShare: 1 });
      disputeAll(here, studyId);
      return () => loaderBytes(here, "qadj", adjudicationLoader, "/adjudicate");
    });
    expect(r.ratio).toBeLessThan(1.2);
  }, 60_000);
});

describe("users", () => {
  it("page by username, forward and back, filtered by prefix, role and status", async () => {
    for (let i = 0; i < 130; i++)
      await makeUser(db, `u${String((i * 37) % 1000).padStart(3, "0")}`, i % 3 ? ["annotator"] : ["rater"]);
    db.$client.prepare(`UPDATE users SET active = 0 WHERE username LIKE 'u1%'`).run();
    const all = listUsers(db);
    const walked = walk((p) => usersWindow(db, p));
    expect(walked.forward).toEqual(all);
    expect(walked.back).toEqual(all);
    const raters = walk((p) => usersWindow(db, p), { role: "rater", status: "active" });
    expect(raters.forward).toEqual(all.filter((u) => u.roles.includes("rater") && u.active));
    expect(raters.total).toBe(raters.forward.length);
    expect(walk((p) => usersWindow(db, p), { q: "U2" }).forward).toEqual(
      all.filter((u) => u.username.startsWith("u2")),
    );
  });

  it("the users page stays the same size with 30 windows of users instead of 3", async () => {
    const r = await smallAndLarge(async (here, n) => {
      await makeUser(here, "boss", ["admin"]);
      const c = here.$client.prepare(
        `INSERT INTO users (id, username, display_name, password_hash, created_at) VALUES (?, ?, '', 'x', 0)`,
      );
      for (let i = 0; i < n; i++) c.run(`id-${i}`, `user${String(i).padStart(5, "0")}`);
      return () => loaderBytes(here, "boss", usersLoader, "/admin/users");
    });
    expect(r.ratio).toBeLessThan(1.2);
  }, 60_000);
});

describe("a case's history", () => {
  it("pages through the case's events by id, both ways, filtered by entity, and the page stays the same size", async () => {
    await makeUser(db, "h-admin", ["admin"]);
    const ids = [(await makeUser(db, "ha", ["annotator"])).id, (await makeUser(db, "hb", ["annotator"])).id];
    const { studyId } = writeBigStudy(db, { name: "Hist", cases: 3, annotatorIds: ids });
    const caseId = db.$client.prepare(`SELECT id FROM cases WHERE study_id = ? ORDER BY id LIMIT 1`).get(studyId) as {
      id: number;
    };
    const add = (n: number) => {
      const ins = db.$client.prepare(
        `INSERT INTO events (at, case_id, study_id, entity, entity_id, action, changes) VALUES (?, ?, ?, ?, ?, 'update', '{}')`,
      );
      for (let i = 0; i < n; i++) ins.run(i, caseId.id, studyId, i % 4 ? "annotation" : "case_outcome", String(i));
    };
    add(150);
    const all = listCaseEvents(db, caseId.id);
    const walked = walk((p) => caseEventsWindow(db, caseId.id, p), {}, "h_");
    expect(walked.forward).toEqual(all);
    expect(walked.back).toEqual(all);
    const newest = walk((p) => caseEventsWindow(db, caseId.id, p), { h_dir: "desc", h_entity: "case_outcome" }, "h_");
    expect(newest.forward).toEqual(all.filter((e) => e.entity === "case_outcome").reverse());
    const bytes = () =>
      loaderBytes(db, "h-admin", adminCaseLoader, `/admin/cases/${caseId.id}`, { caseId: String(caseId.id) });
    const small = await bytes();
    add(1_350);
    expect((await bytes()) / small).toBeLessThan(1.2);
  });
});

describe("the studies", () => {
  it("page by name, both ways, with each study's case count from the kept counts, filtered by a name prefix", async () => {
    const ids = [(await makeUser(db, "sa", ["annotator"])).id, (await makeUser(db, "sb", ["annotator"])).id];
    for (let i = 0; i < 4; i++) writeBigStudy(db, { name: `Big ${i}`, cases: 20 + i, annotatorIds: ids });
    const ins = db.$client.prepare(`INSERT INTO studies (name, created_at) VALUES (?, 0)`);
    for (let i = 0; i < 120; i++) ins.run(`Empty ${String((i * 37) % 1000).padStart(3, "0")}`);
    const all = listStudies(db);
    const walked = walk((p) => studiesWindow(db, p));
    expect(walked.forward).toEqual(all);
    expect(walked.back).toEqual(all);
    expect(walk((p) => studiesWindow(db, p), { q: "Big" }).forward.map((x) => x.numCases)).toEqual([20, 21, 22, 23]);
  });

  it("the admin home stays the same size with 30 windows of studies instead of 3", async () => {
    const r = await smallAndLarge(async (here, n) => {
      await makeUser(here, "boss", ["admin"]);
      const ins = here.$client.prepare(`INSERT INTO studies (name, created_at) VALUES (?, 0)`);
      for (let i = 0; i < n; i++) ins.run(`Study ${String(i).padStart(5, "0")}`);
      return () => loaderBytes(here, "boss", adminHomeLoader, "/admin");
    });
    expect(r.ratio).toBeLessThan(1.2);
  }, 60_000);
});

/** `n` rows of an admin list's table, written straight in, named in an order other than their ids'. */
function writeNamed(
  here: Db,
  table: "judge_sets" | "mentat_banks" | "review_sets" | "screening_studies" | "grading_sets",
  n: number,
) {
  const extra: Record<typeof table, [string, string]> = {
    grading_sets: [", source_sha256, content_sha256", ", 'x', 'y'"],
    judge_sets: [", targets", `, '{"refusal":1}'`],
    mentat_banks: ["", ""],
    review_sets: ["", ""],
    screening_studies: [", categories", `, '["a","b"]'`],
  };
  const [cols, values] = extra[table];
  const insert = here.$client.prepare(`INSERT INTO ${table} (name, created_at${cols}) VALUES (?, 1000${values})`);
  here.$client.transaction(() => {
    // 11 is prime to every n used here: the ids and the names run in different orders.
    for (let i = 0; i < n; i++) insert.run(`${i % 2 ? "Beta" : "Alpha"} ${String((i * 11) % n).padStart(5, "0")}`);
  })();
}

describe("the admin lists of validation sets, banks, review sets, screening studies and evaluation sets", () => {
  const lists = [
    {
      table: "judge_sets",
      read: (here: Db, p: URLSearchParams) => judgeSetsWindow(here, p),
      prefix: "",
      loader: judgeSetsLoader,
      path: "/admin/judge-validation",
    },
    {
      table: "mentat_banks",
      read: (here: Db, p: URLSearchParams) => banksWindow(here, p),
      prefix: "b_",
      loader: expertAdminLoader,
      path: "/admin/expert-ratings",
    },
    {
      table: "review_sets",
      read: (here: Db, p: URLSearchParams) => reviewSetsWindow(here, p),
      prefix: "s_",
      loader: expertAdminLoader,
      path: "/admin/expert-ratings",
    },
    {
      table: "screening_studies",
      read: (here: Db, p: URLSearchParams) => screeningStudiesWindow(here, p),
      prefix: "",
      loader: screeningStudiesLoader,
      path: "/admin/screening",
    },
    {
      table: "grading_sets",
      read: (here: Db, p: URLSearchParams) => gradingSetsWindow(here, p),
      prefix: "",
      loader: gradingSetsLoader,
      path: "/admin/grading",
    },
  ] as const;

  it("each pages by name, forward and back through the whole list once, with a name-prefix filter from the URL", async () => {
    for (const list of lists) {
      writeNamed(db, list.table, 133);
      const names = db.$client.prepare(`SELECT name FROM ${list.table} ORDER BY name`).pluck().all() as string[];
      const read = async (p: URLSearchParams) => (await list.read(db, p)) as ListWindow<{ name: string }>;
      const all = await walkAsync(read, {}, list.prefix);
      expect({ table: list.table, names: all.forward.map((r) => r.name) }).toEqual({ table: list.table, names });
      expect(all.back.map((r) => r.name)).toEqual(names);
      expect(all.total).toBe(133);
      const desc = await walkAsync(read, { [`${list.prefix}dir`]: "desc" }, list.prefix);
      expect(desc.forward.map((r) => r.name)).toEqual([...names].reverse());
      const betas = await walkAsync(read, { [`${list.prefix}q`]: "Beta" }, list.prefix);
      expect(betas.forward.map((r) => r.name)).toEqual(names.filter((x) => x.startsWith("Beta")));
      expect(betas.total).toBe(66);
    }
  });

  it("each page stays the same size with 30 windows of sets, banks or studies instead of 3", async () => {
    for (const list of lists) {
      const r = await smallAndLarge(async (here, n) => {
        await makeUser(here, "lists-admin", ["admin"]);
        writeNamed(here, list.table, n);
        return () => loaderBytes(here, "lists-admin", list.loader, list.path);
      });
      expect({ table: list.table, bounded: r.ratio < 1.2 }).toEqual({ table: list.table, bounded: true });
    }
  }, 120_000);
});

/** `n` report folders under a new root, each with a report's manifest, the later ones newer on disk. */
function writeReports(n: number): string {
  const root = mkdtempSync(join(tmpdir(), "concord-mc-list-"));
  for (let i = 0; i < n; i++) {
    const name = `${i % 2 ? "beta" : "alpha"}-${String((i * 11) % n).padStart(5, "0")}`;
    mkdirSync(join(root, name));
    const manifest = {
      format: "concord-mc-report/1",
      created_at: `2030-01-01T00:00:${String(i % 60).padStart(2, "0")}Z`,
      runs: [{ model: { key: "m" }, items_format: "csv", seed: i }],
      files: {},
    };
    writeFileSync(join(root, name, "manifest.json"), JSON.stringify(manifest));
    utimesSync(join(root, name), 1_000_000 + i, 1_000_000 + i);
  }
  return root;
}

describe("the multiple-choice reports list", () => {
  it("pages through the report folders, newest first, forward and back, with a name-prefix filter", () => {
    const root = writeReports(133);
    try {
      const all = walk((p) => mcReportsWindow(p, root));
      expect(all.total).toBe(133);
      // Newest on disk first: the folders in the reverse of the order they were written.
      const written = Array.from(
        { length: 133 },
        (_, i) => `${i % 2 ? "beta" : "alpha"}-${String((i * 11) % 133).padStart(5, "0")}`,
      );
      expect(all.forward.map((r) => r.name)).toEqual([...written].reverse());
      expect(all.back.map((r) => r.name)).toEqual([...written].reverse());
      const betas = walk((p) => mcReportsWindow(p, root), { q: "beta" });
      expect(betas.forward.map((r) => r.name)).toEqual([...written].reverse().filter((x) => x.startsWith("beta")));
      expect(all.forward[0]!.runs).toEqual(["m · csv · seed 132"]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("the page stays the same size with 30 windows of reports instead of 3", async () => {
    const saved = process.env.CONCORD_MC_REPORTS;
    const r = await smallAndLarge(async (here, n) => {
      await makeUser(here, "mc-admin", ["admin"]);
      const root = writeReports(n);
      return async () => {
        process.env.CONCORD_MC_REPORTS = root;
        try {
          return await loaderBytes(here, "mc-admin", mcReportsLoader, "/admin/mc-evaluation");
        } finally {
          rmSync(root, { recursive: true, force: true });
        }
      };
    });
    if (saved === undefined) delete process.env.CONCORD_MC_REPORTS;
    else process.env.CONCORD_MC_REPORTS = saved;
    expect(r.ratio).toBeLessThan(1.2);
  }, 60_000);
});
