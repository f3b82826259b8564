/**
 * Screening review services on a real temporary database (docs/screening.md): import with whole-file validation, round 1 with
 * concealed controls in one shared order, blinded reviewer projections, votes with versions and drafts, the round
 * closing on its last vote, the recall round with fresh controls, and a deterministic release.
 */
import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { events, screeningRoundItems, screeningVotes } from "../../db/schema";
import type { Db } from "../../app/platform/db.server";
import { createScreeningStudy, type ScreeningStudy } from "../../app/screening/screening.server";
import { importScreeningFiles } from "../../app/screening/screening-import.server";
import { exportScreeningRelease, recallPoolCsv } from "../../app/screening/screening-release.server";
import {
  getReviewEntry,
  listReviewerEntries,
  saveVoteDraft,
  submitVote,
} from "../../app/screening/screening-review.server";
import { getRoundDetail, getStudyOverview, openRound } from "../../app/screening/screening-rounds.server";
import { freshDb, makeUser } from "../support/db";
import {
  corpus,
  enc,
  itemsJsonl,
  labelsCsv,
  RATIONALE_MARKER,
  RUBRIC_MARKER,
  SETTINGS,
  truthOf,
  voteAll,
} from "../support/screening";

let db: Db;
let cleanup: () => void;
let study: ScreeningStudy;
let reviewers: { id: string; username: string }[];
let admin: { id: string };

beforeEach(async () => {
  ({ db, cleanup } = freshDb());
  admin = await makeUser(db, "boss", ["admin"]);
  reviewers = [];
  for (const u of ["rev1", "rev2", "rev3", "rev4"]) reviewers.push(await makeUser(db, u, ["rater"]));
  study = createScreeningStudy(db, { name: "HB-Psych", settings: SETTINGS, actorId: admin.id });
});
afterEach(() => cleanup());

function importCorpus() {
  const r = importScreeningFiles(db, {
    studyId: study.id,
    items: { bytes: enc(itemsJsonl()), filename: "hb.jsonl" },
    labels: { bytes: enc(labelsCsv()), filename: "screen.csv" },
    actorId: admin.id,
  });
  expect(r.ok).toBe(true);
  return r;
}

const three = () => reviewers.slice(0, 3).map((r) => r.id);

describe("importing a screening study's files", () => {
  it("imports items and labels together; a repeat changes nothing", async () => {
    const r = importCorpus();
    expect(r.written).toBe(true);
    expect(r.files.map((f) => [f.kind, f.created, f.changed, f.unchanged])).toEqual([
      ["items", 26, 0, 0],
      ["labels", 26, 0, 0],
    ]);
    const again = importCorpus();
    expect(again.written).toBe(false);
    expect(again.files.map((f) => f.unchanged)).toEqual([26, 26]);
    expect((await getStudyOverview(db, study.id))!.screen).toEqual({
      items: 26,
      relevant: 4,
      borderline: 2,
      not_relevant: 20,
      unlabelled: 0,
    });
  });

  it("writes nothing when any file has an error, and reports each bad line", async () => {
    const badLabels = labelsCsv() + "zz,relevant,,,\nr01,maybe,,,\n";
    const r = importScreeningFiles(db, {
      studyId: study.id,
      items: { bytes: enc(itemsJsonl()), filename: "hb.jsonl" },
      labels: { bytes: enc(badLabels), filename: "screen.csv" },
      actorId: admin.id,
    });
    expect(r.ok).toBe(false);
    expect(r.written).toBe(false);
    expect(r.files[1]!.errors).toEqual([
      { line: 28, message: 'no item "zz" in the study: import the items first.' },
      { line: 29, message: 'duplicate id "r01" (first on line 2).' },
    ]);
    expect((await getStudyOverview(db, study.id))!.screen.items).toBe(0);
  });

  it("fixes the corpus and the screen labels once round 1 opens", () => {
    importCorpus();
    openRound(db, { studyId: study.id, reviewerIds: three(), seed: 3, controls: 10, actorId: admin.id });
    const changed = itemsJsonl().replace("(r01)", "(r01) changed");
    const r = importScreeningFiles(db, {
      studyId: study.id,
      items: { bytes: enc(changed), filename: "hb.jsonl" },
      actorId: admin.id,
    });
    expect(r.ok).toBe(false);
    expect(r.files[0]!.errors[0]!.message).toMatch(/"r01" is changed, but review has started/);
    const relabel = labelsCsv().replace("n01,not_relevant", "n01,relevant");
    const l = importScreeningFiles(db, {
      studyId: study.id,
      labels: { bytes: enc(relabel), filename: "s.csv" },
      actorId: admin.id,
    });
    expect(l.files[0]!.errors[0]!.message).toMatch(/screen labels are fixed/);
  });
});

describe("round 1", () => {
  beforeEach(() => importCorpus());

  it("refuses the wrong number of reviewers, non-raters, and more controls than not_relevant holds", () => {
    expect(() =>
      openRound(db, { studyId: study.id, reviewerIds: three().slice(0, 2), seed: 1, controls: 5, actorId: null }),
    ).toThrow(/exactly 3 reviewers/);
    expect(() =>
      openRound(db, {
        studyId: study.id,
        reviewerIds: [...three().slice(0, 2), admin.id],
        seed: 1,
        controls: 5,
        actorId: null,
      }),
    ).toThrow(/rater role/);
    expect(() =>
      openRound(db, { studyId: study.id, reviewerIds: three(), seed: 1, controls: 21, actorId: null }),
    ).toThrow(/21 controls were asked for but only 20/);
  });

  it("takes every relevant and borderline item plus N controls from not_relevant, in one order", async () => {
    const r = openRound(db, { studyId: study.id, reviewerIds: three(), seed: 42, controls: 10, actorId: admin.id });
    expect(r).toMatchObject({ number: 1, candidates: 6, controls: 10 });
    const detail = (await getRoundDetail(db, { studyId: study.id, number: 1 }))!;
    expect(
      detail.window.rows
        .filter((i) => !i.isControl)
        .map((i) => i.id)
        .sort(),
    ).toEqual(["b01", "b02", "r01", "r02", "r03", "r04"]);
    for (const i of detail.window.rows.filter((x) => x.isControl)) expect(i.id).toMatch(/^n/);
    // Row ids follow the shared order, so a reviewer's URLs say nothing about which items are controls.
    const rows = db
      .select()
      .from(screeningRoundItems)
      .all()
      .sort((a, b) => a.id - b.id);
    expect(rows.map((x) => x.position)).toEqual(rows.map((_, i) => i + 1));
    expect(() =>
      openRound(db, { studyId: study.id, reviewerIds: three(), seed: 1, controls: 5, actorId: null }),
    ).toThrow(/still in review/);
  });

  it("every reviewer sees the same items in the same order; a non-reviewer sees none", () => {
    openRound(db, { studyId: study.id, reviewerIds: three(), seed: 42, controls: 10, actorId: admin.id });
    const orders = three().map((id) =>
      listReviewerEntries(db, id).map((e) => {
        const v = getReviewEntry(db, { userId: id, entryId: e.entryId })!;
        return `${e.position}:${v.entry.messages[0]!.content}`;
      }),
    );
    expect(orders[0]).toHaveLength(16);
    expect(orders[1]).toEqual(orders[0]);
    expect(orders[2]).toEqual(orders[0]);
    const outsider = reviewers[3]!.id;
    expect(listReviewerEntries(db, outsider)).toEqual([]);
    const someEntry = listReviewerEntries(db, three()[0]!)[0]!.entryId;
    expect(getReviewEntry(db, { userId: outsider, entryId: someEntry })).toBeNull();
    expect(
      submitVote(db, {
        userId: outsider,
        entryId: someEntry,
        values: { relevant: "yes", category: "anxiety", confidence: "low", notes: "" },
        version: 0,
      }),
    ).toMatchObject({
      ok: false,
      status: 404,
    });
  });

  it("the reviewer's projection holds no control status, stratum, screen label, rationale or rubric", () => {
    openRound(db, { studyId: study.id, reviewerIds: three(), seed: 42, controls: 10, actorId: admin.id });
    const me = three()[0]!;
    const list = listReviewerEntries(db, me);
    const views = list.map((e) => getReviewEntry(db, { userId: me, entryId: e.entryId }));
    const text = JSON.stringify({ list, views });
    for (const forbidden of [
      "isControl",
      "is_control",
      "stratum",
      "not_relevant",
      "borderline",
      RATIONALE_MARKER,
      RUBRIC_MARKER,
      "rubric",
    ])
      expect(text).not.toContain(forbidden);
    expect(Object.keys(views[0]!.entry).sort()).toEqual([
      "id",
      "inclusionCriterion",
      "kind",
      "messages",
      "position",
      "round",
      "roundOpen",
      "studyName",
      "total",
    ]);
  });
});

describe("votes", () => {
  let me: string;
  let entryId: number;
  beforeEach(() => {
    importCorpus();
    openRound(db, { studyId: study.id, reviewerIds: three(), seed: 42, controls: 10, actorId: admin.id });
    me = three()[0]!;
    entryId = listReviewerEntries(db, me)[0]!.entryId;
  });

  it("saves drafts with versions, refuses a stale version, and audits without the notes' text", () => {
    const values = { relevant: "yes" as const, category: "", confidence: "" as const, notes: "private thought" };
    const first = saveVoteDraft(db, { userId: me, entryId, values, version: 0 });
    expect(first).toMatchObject({ ok: true, version: 1, state: "draft" });
    expect(
      saveVoteDraft(db, { userId: me, entryId, values: { ...values, confidence: "low" }, version: 0 }),
    ).toMatchObject({ ok: false, status: 409 });
    expect(
      saveVoteDraft(db, { userId: me, entryId, values: { ...values, confidence: "low" }, version: 1 }),
    ).toMatchObject({ ok: true, version: 2 });
    expect(getReviewEntry(db, { userId: me, entryId })!).toMatchObject({
      state: "draft",
      version: 2,
      values: { relevant: "yes", confidence: "low" },
    });
    const audit = db
      .select()
      .from(events)
      .all()
      .filter((e) => e.entity === "screening_vote");
    expect(audit).toHaveLength(2);
    expect(audit.map((e) => e.changes).join()).not.toContain("private thought");
  });

  it("submission needs relevance, confidence and, for a relevant item, a vocabulary category; a no clears the category", () => {
    expect(
      submitVote(db, {
        userId: me,
        entryId,
        values: { relevant: "yes", category: "", confidence: "high", notes: "" },
        version: 0,
      }),
    ).toMatchObject({
      ok: false,
      status: 422,
      errors: { category: expect.any(String) },
    });
    expect(
      submitVote(db, {
        userId: me,
        entryId,
        values: { relevant: "yes", category: "psychosis", confidence: "high", notes: "" },
        version: 0,
      }),
    ).toMatchObject({
      ok: false,
      status: 422,
    });
    const ok = submitVote(db, {
      userId: me,
      entryId,
      values: { relevant: "no", category: "sleep", confidence: "high", notes: "" },
      version: 0,
    });
    expect(ok).toMatchObject({ ok: true, state: "submitted", roundClosed: false });
    expect(db.select().from(screeningVotes).all()[0]).toMatchObject({
      relevant: false,
      category: null,
      status: "submitted",
    });
    // A submitted vote is revised by submitting again, not by drafts.
    expect(
      saveVoteDraft(db, {
        userId: me,
        entryId,
        values: { relevant: "yes", category: "", confidence: "", notes: "" },
        version: 1,
      }),
    ).toMatchObject({
      ok: false,
      status: 409,
    });
    expect(
      submitVote(db, {
        userId: me,
        entryId,
        values: { relevant: "yes", category: "sleep", confidence: "low", notes: "" },
        version: 1,
      }),
    ).toMatchObject({
      ok: true,
      version: 2,
    });
  });

  it("the round closes by itself on its last vote, and then refuses changes", async () => {
    voteAll(db, three()[0]!, "truthful");
    voteAll(db, three()[1]!, "truthful");
    expect((await getStudyOverview(db, study.id))!.next).toEqual({ kind: "in_review", round: 1 });
    voteAll(db, three()[2]!, "lenient");
    const overview = (await getStudyOverview(db, study.id))!;
    expect(overview.rounds[0]!.status).toBe("closed");
    expect(
      db
        .select()
        .from(events)
        .all()
        .filter((e) => e.entity === "screening_round")
        .map((e) => e.action),
    ).toEqual(["open", "close"]);
    const view = getReviewEntry(db, { userId: me, entryId })!;
    expect(view.entry.roundOpen).toBe(false);
    expect(
      submitVote(db, {
        userId: me,
        entryId,
        values: { relevant: "no", category: "", confidence: "low", notes: "" },
        version: view.version,
      }),
    ).toMatchObject({
      ok: false,
      status: 409,
      message: expect.stringMatching(/closed/),
    });
    expect(listReviewerEntries(db, me)).toEqual([]);
  });
});

describe("the whole cycle: screen → review → recall → release", () => {
  it("continues while controls are included above 5%, stops at or below it, and releases deterministically", async () => {
    importCorpus();
    openRound(db, { studyId: study.id, reviewerIds: three(), seed: 42, controls: 10, actorId: admin.id });
    const r1 = (await getRoundDetail(db, { studyId: study.id, number: 1 }))!;
    const missesDrawn = r1.window.rows.filter((i) => i.isControl && truthOf(i.id)).length;
    // The screen missed n01–n05; this seed draws some of them among its 10 controls.
    expect(missesDrawn).toBeGreaterThan(0);

    // Tiers are refused before the round has closed.
    const early = importScreeningFiles(db, {
      studyId: study.id,
      tiers: { bytes: enc("id,tier\nn20,clear\n"), filename: "t.csv" },
      actorId: null,
    });
    expect(early.files[0]!.errors[0]!.message).toMatch(/still in review/);

    voteAll(db, three()[0]!, "truthful");
    voteAll(db, three()[1]!, "truthful");
    voteAll(db, three()[2]!, "lenient");
    let overview = (await getStudyOverview(db, study.id))!;
    const f1 = overview.rounds[0]!.figures;
    // The majority (two truthful reviewers) includes exactly the truly relevant items: r01–r04, b01 and drawn misses.
    expect(f1.includedCandidates).toBe(5);
    expect(f1.includedControls).toBe(missesDrawn);
    expect(f1.controlInclusionRate).toBeCloseTo(missesDrawn / 10, 12);
    expect(f1.decision).toBe("continue");
    expect(overview.next).toEqual({ kind: "import_tiers", round: 2 });
    // The lenient reviewer's pairs agree less than the truthful pair.
    const pairs = overview.rounds[0]!.pairwise;
    expect(pairs[0]!.ac1.value).toBe(1);
    expect(pairs[1]!.ac1.value!).toBeLessThan(1);

    // The recall screen: items no round used. A used item is refused, naming the round.
    const used = new Set(r1.window.rows.map((i) => i.id));
    const unused = corpus().filter((c) => !used.has(c.id));
    expect(recallPoolCsv(db, study.id)).toBe(["id", ...unused.map((u) => u.id)].join("\r\n") + "\r\n");
    const usedControl = r1.window.rows.find((i) => i.isControl)!.id;
    const refused = importScreeningFiles(db, {
      studyId: study.id,
      tiers: { bytes: enc(`id,tier\n${usedControl},clear\n`), filename: "t.csv" },
      actorId: null,
    });
    expect(refused.files[0]!.errors).toEqual([
      {
        line: 2,
        message: `item "${usedControl}" was reviewed in round 1 as a control: a recall round takes only excluded items that no round has used.`,
      },
    ]);
    // Every remaining miss is clear, one false alarm is possible, the rest no.
    const falseAlarm = unused.find((u) => !u.truth)!.id;
    const tierOf = (u: (typeof unused)[number]) => (u.truth ? "clear" : u.id === falseAlarm ? "possible" : "no");
    const tiers = "id,tier,rationale\n" + unused.map((u) => `${u.id},${tierOf(u)},recall`).join("\n") + "\n";
    const imported = importScreeningFiles(db, {
      studyId: study.id,
      tiers: { bytes: enc(tiers), filename: "tiers.csv" },
      actorId: admin.id,
    });
    expect(imported).toMatchObject({ ok: true, written: true, tiersForRound: 2 });
    overview = (await getStudyOverview(db, study.id))!;
    expect(overview.next).toEqual({ kind: "open_round", round: 2 });

    const noTier = unused.filter((u) => tierOf(u) === "no").length;
    const r2 = openRound(db, {
      studyId: study.id,
      reviewerIds: three(),
      seed: 7,
      controls: Math.min(3, noTier),
      actorId: admin.id,
    });
    const d2 = (await getRoundDetail(db, { studyId: study.id, number: 2 }))!;
    // Fresh controls: nothing of round 2 was in round 1.
    for (const i of d2.window.rows) expect(used.has(i.id)).toBe(false);
    expect(d2.window.rows.filter((i) => i.isControl).every((i) => i.stratum === "no")).toBe(true);
    expect(r2.candidates).toBe(unused.filter((u) => tierOf(u) !== "no").length);

    voteAll(db, three()[0]!, "truthful");
    voteAll(db, three()[1]!, "truthful");
    voteAll(db, three()[2]!, "lenient");
    overview = (await getStudyOverview(db, study.id))!;
    expect(overview.rounds[1]!.figures).toMatchObject({
      includedControls: 0,
      controlInclusionRate: 0,
      decision: "stop",
    });
    expect(overview.next).toEqual({ kind: "final", round: 2 });
    // Every truly relevant item (r01–r04, b01, n01–n05) is included, in round 1 or 2.
    expect(overview.included).toBe(10);
    expect(() =>
      openRound(db, { studyId: study.id, reviewerIds: three(), seed: 1, controls: 1, actorId: null }),
    ).toThrow(/final/);

    const a = exportScreeningRelease(db, { studyId: study.id, now: new Date("2026-01-01T00:00:00Z") });
    const b = exportScreeningRelease(db, { studyId: study.id, now: new Date("2026-02-02T00:00:00Z") });
    if (!a.ok || !b.ok) throw new Error("export refused");
    expect(a.included).toBe(10);
    for (const name of ["included.jsonl", "included.csv", "subset.jsonl", "categories.csv"] as const)
      expect(b.files[name]).toBe(a.files[name]);
    expect(b.files["manifest.json"].replace(/"exported_at": "[^"]*"/, "")).toBe(
      a.files["manifest.json"].replace(/"exported_at": "[^"]*"/, ""),
    );

    const included = a.files["included.jsonl"]
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(included.map((i) => i.id)).toEqual(["b01", "n01", "n02", "n03", "n04", "n05", "r01", "r02", "r03", "r04"]);
    expect(included[0]).toEqual({
      id: "b01",
      round: 1,
      source: "borderline",
      was_control: false,
      yes_votes: 3,
      reviewers: 3,
      consensus_tier: "unanimous",
      modal_category: "anxiety",
      votes: [
        { reviewer: "R1", relevant: true, category: "anxiety", confidence: "high" },
        { reviewer: "R2", relevant: true, category: "anxiety", confidence: "high" },
        { reviewer: "R3", relevant: true, category: "anxiety", confidence: "high" },
      ],
    });
    expect(a.files["categories.csv"]).toBe("category,n,share\r\nanxiety,10,1.0000\r\n");
    const subset = a.files["subset.jsonl"]
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(subset[0].prompt_id).toBe("b01");
    expect(subset[0].rubrics[0].criterion).toContain(RUBRIC_MARKER);

    const manifest = JSON.parse(a.files["manifest.json"]);
    expect(manifest).toMatchObject({
      final: true,
      corpus: { items: 26, screen: { relevant: 4, borderline: 2, not_relevant: 20, unlabelled: 0 } },
      release: {
        included: 10,
        by_round: [
          { round: 1, included: 5 + missesDrawn },
          { round: 2, included: 5 - missesDrawn },
        ],
      },
    });
    expect(
      manifest.rounds.map((r: { number: number; seed: number; decision: string }) => [r.number, r.seed, r.decision]),
    ).toEqual([
      [1, 42, "continue"],
      [2, 7, "stop"],
    ]);
    expect(manifest.rounds[1].recall_tiers).toEqual({ clear: 5 - missesDrawn, possible: 1, no: noTier });
    expect(manifest.rounds[0].order_sha256).toMatch(/^[0-9a-f]{64}$/);
    for (const [name, meta] of Object.entries(manifest.files) as [string, { sha256: string }][])
      expect(meta.sha256).toBe(
        createHash("sha256")
          .update(a.files[name as "included.csv"])
          .digest("hex"),
      );
  });

  it("refuses the release before the cycle ends, unless incomplete exports are allowed", () => {
    importCorpus();
    openRound(db, { studyId: study.id, reviewerIds: three(), seed: 42, controls: 10, actorId: admin.id });
    expect(exportScreeningRelease(db, { studyId: study.id })).toMatchObject({
      ok: false,
      message: expect.stringMatching(/round 1 is still in review/),
    });
    const partial = exportScreeningRelease(db, { studyId: study.id, allowIncomplete: true });
    expect(partial).toMatchObject({ ok: true, final: false, included: 0 });
  });
});
