/**
 * The whole preparation chain through its commands (docs/preparation.md, "Walk-through"): prep-import, prep-reviewers,
 * two reviewers' reviews with one differing note settled, prep-translate against the OpenAI-compatible stub,
 * prep-quality (one note below the chrF threshold, one losing a test score), the corrections saved, prep-release into
 * a study. And the seams between the steps: the quality check scores only translations of the current final text,
 * keeps a corrected note's verdict, and a re-translation starts the note's correction again.
 */
import { join } from "node:path";
import { and, eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Db } from "../../app/platform/db.server";
import type { UserView } from "../../app/accounts/users.server";
import { cases, prepNoteQuality, prepNotes, prepTranslations, studies } from "../../db/schema";
import { getReviewNote, listReviewerNotes, saveMinimisationReview } from "../../app/preparation/review.server";
import type { MinimisationValues } from "../../app/preparation/domain/review";
import { getSettlementView, settleNote } from "../../app/preparation/settlement.server";
import { wholeReviewChoice } from "../../app/preparation/domain/settlement";
import {
  getCorrection,
  listCorrectionQueue,
  resolveCorrectionKey,
  saveCorrection,
} from "../../app/preparation/correction.server";
import { preparationReport } from "../../app/preparation/report.server";
import { releasePlan } from "../../app/preparation/release.server";
import { getCaseSections } from "../../app/annotation/public.server";
import { freshDb, makeUser } from "../support/db";
import { cli } from "../support/cli-run";
import { startOpenAiStub, type OpenAiStub, type StubCall, type StubHandler } from "../support/openai-stub";
import { setUpEvalJobs, type EvalJobsEnv } from "../support/eval-jobs";

const NOTES = join(new URL("../fixtures/preparation/", import.meta.url).pathname, "notes.csv");

let db: Db;
let cleanup: () => void;
let stub: OpenAiStub;
let env: EvalJobsEnv;
let admin: UserView;
let one: UserView;
let two: UserView;
let projectId: number;
/** Words whose sections the stub back-translates badly (a note below the chrF threshold). */
let garbled: string[] = ["agita", "Internat", "Cooperant"];

const textOf = (call: StubCall) => call.last.slice(call.last.lastIndexOf("Text:\n") + "Text:\n".length);
const isBack = (call: StubCall) => call.last.includes("Translate the following text into Romanian.");
/**
 * The translation is `EN<text>`; the back-translation gives the source text back, except that ro-2's sections come
 * back as unrelated words and an MMSE score comes back as 9 (the test's score lost).
 */
const translator: StubHandler = (call) => {
  const text = textOf(call);
  if (!isBack(call)) return { content: `EN<${text}>` };
  const source = text.slice(3, -1);
  if (garbled.some((w) => source.includes(w))) return { content: "xq zv wk" };
  return { content: source.replace(/MMSE \d+/, "MMSE 9") };
};

beforeEach(async () => {
  ({ db, cleanup } = freshDb());
  admin = await makeUser(db, "admin", ["admin"]);
  one = await makeUser(db, "one", ["rater"]);
  two = await makeUser(db, "two", ["rater"]);
  garbled = ["agita", "Internat", "Cooperant"];
  stub = await startOpenAiStub(translator);
  env = setUpEvalJobs(stub.baseURL);
});
afterEach(async () => {
  await stub.close();
  env.restore();
  cleanup();
});

const noteIdOf = (externalId: string) => listReviewerNotes(db, one.id).find((n) => n.externalId === externalId)!.noteId;

function acceptAll(externalId: string, reject: string[] = []): MinimisationValues {
  const view = getReviewNote(db, { userId: one.id, noteId: noteIdOf(externalId) })!;
  const decisions: MinimisationValues["decisions"] = {};
  for (const p of view.note.proposals) decisions[p.id] = { action: reject.includes(p.id) ? "reject" : "accept" };
  return { decisions, missed: [], excluded: false, exclusionReason: "" };
}

function submit(user: UserView, externalId: string, values: MinimisationValues) {
  const noteId = noteIdOf(externalId);
  const version = getReviewNote(db, { userId: user.id, noteId })!.version;
  expect(saveMinimisationReview(db, { userId: user.id, noteId, values, version, intent: "submit" }).ok).toBe(true);
}

const translate = () => cli(["prep-translate", "--project", "P", "--provider", "stub-candidate"]);
const quality = async (...args: string[]) => {
  const r = await cli(["prep-quality", "--project", "P", "--json", ...args]);
  expect(r.err).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.out) as { scored: number; stale: number; needsCorrection: number };
};
const rowsOf = (externalId: string) =>
  db
    .select()
    .from(prepTranslations)
    .where(eq(prepTranslations.noteId, noteIdOf(externalId)))
    .orderBy(prepTranslations.section)
    .all();
const qualityOf = (externalId: string) =>
  db
    .select()
    .from(prepNoteQuality)
    .where(eq(prepNoteQuality.noteId, noteIdOf(externalId)))
    .get();
const queue = () => listCorrectionQueue(db, one.id).map((r) => [r.externalId, r.state]);

/** Corrects every translated section of the note as `Corrected <note> <section>.`; the correction's id. */
function correct(externalId: string): number {
  const key = listCorrectionQueue(db, one.id).find((r) => r.externalId === externalId)!.key;
  const id = resolveCorrectionKey(db, one.id, key)!;
  const view = getCorrection(db, { userId: one.id, id })!;
  const texts = Object.fromEntries(
    view.item.sections.map((s) => [String(s.section), `Corrected ${externalId} ${s.section + 1}.`]),
  );
  const r = saveCorrection(db, { userId: one.id, id, values: { texts }, version: view.version, intent: "submit" });
  expect(r.ok).toBe(true);
  return id;
}

/** Import, reviewers, the reviews (ro-1 differs and is settled, ro-2 agreed, ro-3 excluded by both). */
async function reviewed() {
  expect((await cli(["prep-import", "--project", "P", "--language", "ro", NOTES])).code).toBe(0);
  expect((await cli(["prep-reviewers", "--project", "P", "--add", "one,two"])).code).toBe(0);
  projectId = db.select({ p: prepNotes.projectId }).from(prepNotes).get()!.p;
  const first = getReviewNote(db, { userId: one.id, noteId: noteIdOf("ro-1") })!.note.proposals[0]!.id;
  submit(one, "ro-1", acceptAll("ro-1"));
  submit(two, "ro-1", acceptAll("ro-1", [first]));
  submit(one, "ro-2", acceptAll("ro-2"));
  submit(two, "ro-2", acceptAll("ro-2"));
  const excluded = { decisions: {}, missed: [], excluded: true, exclusionReason: "rare case" };
  submit(one, "ro-3", excluded);
  submit(two, "ro-3", excluded);
  const view = getSettlementView(db, projectId, noteIdOf("ro-1"))!;
  const choice = wholeReviewChoice(view.note.proposals, 1); // reviewer B: the first proposal rejected
  settleNote(db, {
    projectId,
    noteId: noteIdOf("ro-1"),
    choice,
    seen: view.reviews.map((r) => r.version),
    actorId: admin.id,
  });
  return first;
}

describe("the preparation chain, end to end", () => {
  it("import → reviews → settlement → translation → quality → correction → release, with the report's counts", async () => {
    await reviewed();
    const t = await translate();
    expect(t.code).toBe(0);
    expect(rowsOf("ro-3")).toEqual([]); // excluded: never translated
    const q = await quality();
    expect(q).toMatchObject({ scored: 2, stale: 0, needsCorrection: 2 });
    expect(qualityOf("ro-1")!.reason).toContain("MMSE");
    expect(qualityOf("ro-1")!.mismatches.map((m) => m.test)).toEqual(["MMSE"]);
    expect(qualityOf("ro-2")!.reason).toMatch(/chrF .* below 50/);
    expect(queue()).toEqual([
      ["ro-1", "not_started"],
      ["ro-2", "not_started"],
    ]);
    // The release waits for the corrections.
    const early = await cli(["prep-release", "--project", "P", "--study", "Released"]);
    expect(early.code).toBe(2);
    expect(early.err).toContain("ro-1: waiting for correction");
    correct("ro-1");
    correct("ro-2");
    expect(queue()).toEqual([
      ["ro-1", "submitted"],
      ["ro-2", "submitted"],
    ]);
    const r = await cli(["prep-release", "--project", "P", "--study", "Released"]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const study = db.select().from(studies).where(eq(studies.name, "Released")).get()!;
    const released = db.select().from(cases).where(eq(cases.studyId, study.id)).orderBy(cases.id).all();
    expect(released.map((c) => c.externalId)).toEqual(["ro-1", "ro-2"]); // ro-3 excluded: absent
    for (const c of released) {
      const sections = getCaseSections(db, c.id).map((s) => s.content);
      expect(sections).toEqual(rowsOf(c.externalId).map((row) => `Corrected ${c.externalId} ${row.section + 1}.`));
    }
    const report = preparationReport(db, projectId)!;
    expect(report.cases).toEqual({ total: 3, reviewed: 2, excluded: 1, pending: 0, differ: 0 });
    expect(report.quality).toMatchObject({
      scored: 2,
      needsCorrection: 2,
      corrected: 2,
      notesWithMismatches: 1,
      mismatches: 1,
      mismatchesCorrected: 1,
    });
    expect(report.exclusions).toEqual([{ note: "ro-3", reason: "rare case" }]);
  });

  it("releases a note that passed the check with its translation as the model gave it", async () => {
    await reviewed();
    garbled = []; // ro-2's round trip is exact
    expect((await translate()).code).toBe(0);
    expect(await quality()).toMatchObject({ scored: 2, needsCorrection: 1 });
    correct("ro-1");
    expect((await cli(["prep-release", "--project", "P", "--study", "Released"])).code).toBe(0);
    const study = db.select().from(studies).where(eq(studies.name, "Released")).get()!;
    const ro2 = db
      .select()
      .from(cases)
      .where(and(eq(cases.studyId, study.id), eq(cases.externalId, "ro-2")))
      .get()!;
    expect(getCaseSections(db, ro2.id).map((s) => s.content)).toEqual(rowsOf("ro-2").map((row) => row.translation));
    expect(rowsOf("ro-2")[0]!.translation).toMatch(/^EN</);
  });
});

describe("the seams between the steps", () => {
  it("does not score a note excluded after its translation, and removes its earlier verdict", async () => {
    await reviewed();
    expect((await translate()).code).toBe(0);
    expect(await quality()).toMatchObject({ scored: 2, needsCorrection: 2 });
    // ro-2 is excluded by both reviewers after its translation.
    const excluded = { decisions: {}, missed: [], excluded: true, exclusionReason: "identifying" };
    submit(one, "ro-2", excluded);
    submit(two, "ro-2", excluded);
    expect(await quality()).toMatchObject({ scored: 1, stale: 1, needsCorrection: 1 });
    expect(qualityOf("ro-2")).toBeUndefined();
    expect(queue()).toEqual([["ro-1", "not_started"]]);
    expect(preparationReport(db, projectId)!.quality).toMatchObject({ scored: 1, needsCorrection: 1 });
  });

  it("does not score a translation of an earlier final text (a revised review): stale until translated again", async () => {
    await reviewed();
    expect((await translate()).code).toBe(0);
    await quality();
    // Both reviewers now reject every proposal of ro-2: its final text is no longer the one translated.
    const ids = getReviewNote(db, { userId: one.id, noteId: noteIdOf("ro-2") })!.note.proposals.map((p) => p.id);
    submit(one, "ro-2", acceptAll("ro-2", ids));
    submit(two, "ro-2", acceptAll("ro-2", ids));
    expect(await quality()).toMatchObject({ scored: 1, stale: 1 });
    expect(qualityOf("ro-2")).toBeUndefined();
    expect(releasePlan(db, projectId).missing).toContainEqual(
      expect.objectContaining({ externalId: "ro-2", kind: "untranslated" }),
    );
  });

  it("keeps a corrected note's verdict when the check runs again, even with looser thresholds", async () => {
    await reviewed();
    expect((await translate()).code).toBe(0);
    await quality();
    correct("ro-2");
    // A re-run whose thresholds would pass ro-2's round trip: its correction stays done and counted.
    expect(await quality("--min-chrf", "none", "--min-bleu", "none")).toMatchObject({ scored: 2, needsCorrection: 2 });
    expect(qualityOf("ro-2")!.needsCorrection).toBe(true);
    expect(qualityOf("ro-2")!.reason).toMatch(/chrF .* below 50/);
    expect(queue()).toContainEqual(["ro-2", "submitted"]);
    expect(preparationReport(db, projectId)!.quality.corrected).toBe(1);
  });

  it("starts a note's correction again when its translation changes; the old correction is never released", async () => {
    await reviewed();
    expect((await translate()).code).toBe(0);
    await quality();
    const id = correct("ro-2");
    const before = getCorrection(db, { userId: one.id, id })!.version;
    // ro-2's final text changes (every proposal rejected), and it is translated again.
    const ids = getReviewNote(db, { userId: one.id, noteId: noteIdOf("ro-2") })!.note.proposals.map((p) => p.id);
    submit(one, "ro-2", acceptAll("ro-2", ids));
    submit(two, "ro-2", acceptAll("ro-2", ids));
    expect((await translate()).code).toBe(0);
    expect(rowsOf("ro-2").every((r) => r.correctedText === null)).toBe(true);
    // Translated again and not checked yet: not released with its unread English.
    expect(releasePlan(db, projectId).missing).toContainEqual(
      expect.objectContaining({ externalId: "ro-2", kind: "not quality-checked" }),
    );
    await quality();
    // Flagged again: the correction is open again, on the new English, not shown as done with the old texts.
    expect(queue()).toContainEqual(["ro-2", "not_started"]);
    const view = getCorrection(db, { userId: one.id, id })!;
    expect(view.state).toBe("not_started");
    expect(view.version).toBeGreaterThan(before);
    expect(Object.values(view.values.texts).every((t) => t.startsWith("EN<"))).toBe(true);
    correct("ro-1");
    const release = await cli(["prep-release", "--project", "P", "--study", "Released"]);
    expect(release.code).toBe(2);
    expect(release.err).toContain("ro-2: waiting for correction");
  });
});
