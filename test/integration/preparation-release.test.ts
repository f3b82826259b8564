/**
 * After the review (docs/preparation.md, "Settling two reviews", "Correction", "Release", "Export"): an admin settles
 * two reviews that differ; a named reviewer corrects a note's English in the correction queue; the project is
 * released into a study or a released CSV, or refused with what is missing; the minimised notes are exported.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { and, eq, sql } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Db } from "../../app/platform/db.server";
import type { UserView } from "../../app/accounts/users.server";
import { prepNoteQuality, prepNotes, prepSettlements, prepTranslations } from "../../db/schema";
import { finalReviewOf, finalSections } from "../../app/preparation/final-review.server";
import { getReviewNote, listReviewerNotes, saveMinimisationReview } from "../../app/preparation/review.server";
import type { MinimisationValues } from "../../app/preparation/domain/review";
import {
  countDifferingNotes,
  differingNotesWindow,
  getSettlementView,
  settleNote,
} from "../../app/preparation/settlement.server";
import { wholeReviewChoice } from "../../app/preparation/domain/settlement";
import {
  getCorrection,
  listCorrectionQueue,
  resolveCorrectionKey,
  saveCorrection,
} from "../../app/preparation/correction.server";
import { getCaseSections } from "../../app/annotation/public.server";
import { ServiceError } from "../../app/platform/service-error";
import { freshDb, makeUser } from "../support/db";
import { signedIn } from "../support/route-calls";
import * as settleRoute from "../../app/routes/admin.preparation.$projectId_.settle.$noteId";
import * as exportRoute from "../../app/routes/admin.preparation.$projectId_.export";
import * as correctionRoute from "../../app/routes/preparation.corrections.$key";
import { cli, tempDirs } from "../support/cli-run";

const NOTES = join(new URL("../fixtures/preparation/", import.meta.url).pathname, "notes.csv");
const tmp = tempDirs("concord-prep-release-");

let db: Db;
let cleanup: () => void;
let admin: UserView;
let one: UserView;
let two: UserView;
let other: UserView;
let projectId: number;

beforeEach(async () => {
  ({ db, cleanup } = freshDb());
  admin = await makeUser(db, "admin", ["admin"]);
  one = await makeUser(db, "one", ["rater"]);
  two = await makeUser(db, "two", ["rater"]);
  other = await makeUser(db, "other", ["rater", "annotator"]);
  expect((await cli(["prep-import", "--project", "P", "--language", "ro", NOTES])).code).toBe(0);
  expect((await cli(["prep-reviewers", "--project", "P", "--add", "one,two"])).code).toBe(0);
  projectId = db.select({ p: prepNotes.projectId }).from(prepNotes).get()!.p;
});
afterEach(() => cleanup());

const noteIdOf = (externalId: string) => listReviewerNotes(db, one.id).find((n) => n.externalId === externalId)!.noteId;

function acceptAll(externalId: string, reject: string[] = []): MinimisationValues {
  const view = getReviewNote(db, { userId: one.id, noteId: noteIdOf(externalId) })!;
  const decisions: MinimisationValues["decisions"] = {};
  for (const p of view.note.proposals) decisions[p.id] = { action: reject.includes(p.id) ? "reject" : "accept" };
  return { decisions, missed: [], excluded: false, exclusionReason: "" };
}
const proposalIds = (externalId: string) =>
  getReviewNote(db, { userId: one.id, noteId: noteIdOf(externalId) })!.note.proposals.map((p) => p.id);

function submit(user: UserView, externalId: string, values: MinimisationValues) {
  const r = saveMinimisationReview(db, {
    userId: user.id,
    noteId: noteIdOf(externalId),
    values,
    version: 0,
    intent: "submit",
  });
  expect(r.ok).toBe(true);
}

/** ro-1 differs between the two reviewers (the first proposal), ro-2 agrees, ro-3 is excluded by both. */
function reviewAll() {
  const first = proposalIds("ro-1")[0]!;
  submit(one, "ro-1", acceptAll("ro-1"));
  submit(two, "ro-1", { ...acceptAll("ro-1", [first]), missed: [] });
  submit(one, "ro-2", acceptAll("ro-2"));
  submit(two, "ro-2", acceptAll("ro-2"));
  const excluded = { decisions: {}, missed: [], excluded: true, exclusionReason: "rare case, secret words" };
  submit(one, "ro-3", excluded);
  submit(two, "ro-3", excluded);
  return first;
}

/** Translations of each final section, as the translation runner writes them (inserted directly here). */
function translate(externalId: string, opts: { needsCorrection?: boolean } = {}) {
  const noteId = noteIdOf(externalId);
  const sections = finalSections(db, noteId);
  if (!Array.isArray(sections)) throw new Error(`${externalId} is not final`);
  sections.forEach((s, section) => {
    if (!s.content.trim()) return;
    db.insert(prepTranslations)
      .values({
        noteId,
        section,
        sourceText: s.content,
        translation: `English ${externalId} section ${section + 1}.`,
        backTranslation: `Back ${section + 1}.`,
        model: "m",
        bleu: 20,
        chrf: 40,
      })
      .run();
  });
  db.insert(prepNoteQuality)
    .values({
      noteId,
      bleu: 20,
      chrf: 40,
      mismatches: [{ section: 3, test: "MMSE", score: "28" }],
      needsCorrection: opts.needsCorrection ?? false,
      reason: opts.needsCorrection ? "BLEU 20.0 below 25; MMSE 28 missing" : "",
      computedAt: 1,
    })
    .run();
  return noteId;
}

const events = (entity: string) =>
  db
    .all<{ action: string; changes: string }>(
      sql`select action, changes from visible_events where entity = ${entity} order by id`,
    )
    .map((e) => ({ action: e.action, changes: JSON.parse(e.changes) as Record<string, unknown> }));
const caseRows = () =>
  db.all<{ externalId: string; ageGroup: string; sex: string; id: number }>(
    sql`select id, external_id as externalId, age_group as ageGroup, sex from visible_cases order by position`,
  );

describe("settling two reviews", () => {
  it("lists the notes whose reviews differ, a window at a time, and shows both reviews", () => {
    reviewAll();
    const w = differingNotesWindow(db, projectId);
    expect(w.rows.map((r) => r.externalId)).toEqual(["ro-1"]);
    expect(w.nextAfter).toBeNull();
    expect(countDifferingNotes(db, projectId)).toBe(1);
    const view = getSettlementView(db, projectId, noteIdOf("ro-1"))!;
    expect(view.state).toBe("differ");
    expect(view.reviews.map((r) => `${r.letter}:${r.username}`)).toEqual(["A:one", "B:two"]);
    // Another project's id finds nothing.
    expect(getSettlementView(db, projectId + 1, noteIdOf("ro-1"))).toBeNull();
  });

  it("pages on the server: size 1 gives one note and the cursor to the next", () => {
    const first = proposalIds("ro-1")[0]!;
    const firstOf2 = proposalIds("ro-2")[0]!;
    submit(one, "ro-1", acceptAll("ro-1"));
    submit(two, "ro-1", acceptAll("ro-1", [first]));
    submit(one, "ro-2", acceptAll("ro-2"));
    submit(two, "ro-2", acceptAll("ro-2", [firstOf2]));
    const a = differingNotesWindow(db, projectId, { size: 1 });
    expect(a.rows.map((r) => r.externalId)).toEqual(["ro-1"]);
    const b = differingNotesWindow(db, projectId, { size: 1, after: a.nextAfter! });
    expect(b.rows.map((r) => r.externalId)).toEqual(["ro-2"]);
    expect(b.nextAfter).toBeNull();
  });

  it("settles per proposal into one final review, audited without the note's words", () => {
    const first = reviewAll();
    const noteId = noteIdOf("ro-1");
    const view = getSettlementView(db, projectId, noteId)!;
    const choice = wholeReviewChoice(view.note.proposals, 0);
    choice.proposals[first] = 1; // B rejected it
    settleNote(db, { projectId, noteId, choice, seen: view.reviews.map((r) => r.version), actorId: admin.id });
    const final = finalReviewOf(db, noteId);
    expect(final).toMatchObject({ state: "final", from: "settled" });
    expect(final.state === "final" && final.values.decisions[first]).toEqual({ action: "reject" });
    expect(differingNotesWindow(db, projectId).rows).toEqual([]);
    const [event] = events("prep_settlement");
    expect(event!.action).toBe("settle");
    expect((event!.changes as { from: Record<string, string> }).from[first]).toBe("B");
    const text = JSON.stringify(event!.changes);
    for (const s of view.note.sections)
      for (const word of s.content.split(/\s+/).filter((w) => w.length > 6)) expect(text).not.toContain(word);
    // Settled once: a second settlement is refused.
    expect(() =>
      settleNote(db, { projectId, noteId, choice, seen: view.reviews.map((r) => r.version), actorId: admin.id }),
    ).toThrow(/settled already/);
  });

  it("takes one reviewer's whole review, and refuses a page whose reviews changed since (409, nothing written)", () => {
    reviewAll();
    const noteId = noteIdOf("ro-1");
    const view = getSettlementView(db, projectId, noteId)!;
    const choice = wholeReviewChoice(view.note.proposals, 1);
    // Reviewer B revises after the page was read.
    const r = saveMinimisationReview(db, {
      userId: two.id,
      noteId,
      values: acceptAll("ro-1", proposalIds("ro-1").slice(0, 2)),
      version: view.reviews[1]!.version,
      intent: "submit",
    });
    expect(r.ok).toBe(true);
    let thrown: unknown;
    try {
      settleNote(db, { projectId, noteId, choice, seen: view.reviews.map((x) => x.version), actorId: admin.id });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(ServiceError);
    expect((thrown as ServiceError).status).toBe(409);
    expect(db.select().from(prepSettlements).all()).toEqual([]);
    expect(events("prep_settlement")).toEqual([]);
    const fresh = getSettlementView(db, projectId, noteId)!;
    settleNote(db, { projectId, noteId, choice, seen: fresh.reviews.map((x) => x.version), actorId: admin.id });
    const final = finalReviewOf(db, noteId);
    expect(final.state === "final" && final.values).toEqual(fresh.reviews[1]!.values);
  });

  it("refuses a proposal taken from a reviewer who excluded the case", () => {
    submit(one, "ro-1", acceptAll("ro-1"));
    submit(two, "ro-1", { decisions: {}, missed: [], excluded: true, exclusionReason: "why" });
    const noteId = noteIdOf("ro-1");
    const view = getSettlementView(db, projectId, noteId)!;
    const choice = { ...wholeReviewChoice(view.note.proposals, 1), exclusion: 0 };
    expect(() =>
      settleNote(db, { projectId, noteId, choice, seen: view.reviews.map((r) => r.version), actorId: admin.id }),
    ).toThrow(/excluded the case/);
    // Taking B's exclusion excludes the case.
    settleNote(db, {
      projectId,
      noteId,
      choice: wholeReviewChoice(view.note.proposals, 1),
      seen: view.reviews.map((r) => r.version),
      actorId: admin.id,
    });
    expect(finalSections(db, noteId)).toBeNull();
  });
});

describe("the correction queue", () => {
  function needsCorrection() {
    reviewAll();
    const view = getSettlementView(db, projectId, noteIdOf("ro-1"))!;
    settleNote(db, {
      projectId,
      noteId: view.note.id,
      choice: wholeReviewChoice(view.note.proposals, 0),
      seen: view.reviews.map((r) => r.version),
      actorId: admin.id,
    });
    translate("ro-1", { needsCorrection: true });
    translate("ro-2");
    const [row] = listCorrectionQueue(db, one.id);
    return row!;
  }

  it("holds the notes that need correction, by an opaque key, for the project's reviewers only", () => {
    const row = needsCorrection();
    expect(listCorrectionQueue(db, one.id).map((r) => r.externalId)).toEqual(["ro-1"]);
    expect(row.key).toMatch(/^[0-9a-f]{12}$/);
    expect(row.key).not.toContain(String(noteIdOf("ro-1")).padStart(12, "0"));
    expect(row.reason).toContain("BLEU");
    expect(resolveCorrectionKey(db, two.id, row.key)).not.toBeNull();
    expect(resolveCorrectionKey(db, other.id, row.key)).toBeNull();
    expect(resolveCorrectionKey(db, admin.id, row.key)).toBeNull();
    expect(listCorrectionQueue(db, other.id)).toEqual([]);
    const id = resolveCorrectionKey(db, one.id, row.key)!;
    expect(getCorrection(db, { userId: other.id, id })).toBeNull();
    const view = getCorrection(db, { userId: one.id, id })!;
    expect(view.item.sections.length).toBeGreaterThan(2);
    expect(view.item.sections[0]!.backTranslation).toBe("Back 1.");
    expect(view.values.texts["0"]).toBe("English ro-1 section 1.");
    // Recomputed quality that no longer asks for correction takes the note out of the queue; asking again keeps its key.
    db.update(prepNoteQuality)
      .set({ needsCorrection: false })
      .where(eq(prepNoteQuality.noteId, noteIdOf("ro-1")))
      .run();
    expect(listCorrectionQueue(db, one.id)).toEqual([]);
    db.update(prepNoteQuality)
      .set({ needsCorrection: true })
      .where(eq(prepNoteQuality.noteId, noteIdOf("ro-1")))
      .run();
    expect(listCorrectionQueue(db, one.id)[0]!.key).toBe(row.key);
  });

  it("saves drafts and a submission that writes the corrected text in the same transaction, audited without words", () => {
    const row = needsCorrection();
    const id = resolveCorrectionKey(db, one.id, row.key)!;
    const view = getCorrection(db, { userId: one.id, id })!;
    const texts = { ...view.values.texts, "0": "A corrected secret sentence." };
    const draft = saveCorrection(db, { userId: one.id, id, values: { texts }, version: 0, intent: "draft" });
    expect(draft).toMatchObject({ ok: true, version: 1, state: "draft" });
    const noteId = noteIdOf("ro-1");
    const corrected = () =>
      db
        .select({ t: prepTranslations.correctedText, by: prepTranslations.correctedBy })
        .from(prepTranslations)
        .where(and(eq(prepTranslations.noteId, noteId), eq(prepTranslations.section, 0)))
        .get()!;
    expect(corrected().t).toBeNull();
    // A stale page is refused and writes nothing.
    expect(saveCorrection(db, { userId: two.id, id, values: { texts }, version: 0, intent: "submit" })).toMatchObject({
      ok: false,
      status: 409,
    });
    // An empty section is refused at its field.
    const empty = saveCorrection(db, {
      userId: one.id,
      id,
      values: { texts: { ...texts, "1": " " } },
      version: 1,
      intent: "submit",
    });
    expect(empty).toMatchObject({ ok: false, status: 422 });
    expect(empty.ok === false && empty.status === 422 && empty.errors["section:1"]).toBeTruthy();
    expect(saveCorrection(db, { userId: one.id, id, values: { texts }, version: 1, intent: "submit" })).toMatchObject({
      ok: true,
      state: "submitted",
    });
    expect(corrected()).toEqual({ t: "A corrected secret sentence.", by: one.id });
    const audit = events("prep_correction");
    expect(audit.map((e) => e.action)).toEqual(["draft", "submit"]);
    expect(JSON.stringify(audit.map((e) => e.changes))).not.toContain("secret");
    // The other reviewer of the project sees the submitted correction and may revise it.
    expect(getCorrection(db, { userId: two.id, id })!.state).toBe("submitted");
  });
});

describe("release and export", () => {
  function ready() {
    reviewAll();
    const view = getSettlementView(db, projectId, noteIdOf("ro-1"))!;
    settleNote(db, {
      projectId,
      noteId: view.note.id,
      choice: wholeReviewChoice(view.note.proposals, 0),
      seen: view.reviews.map((r) => r.version),
      actorId: admin.id,
    });
    translate("ro-1");
    translate("ro-2");
  }

  it("refuses while notes are unreviewed, wait for a settlement or a correction, or are untranslated, listing each", async () => {
    submit(one, "ro-1", acceptAll("ro-1"));
    submit(two, "ro-1", acceptAll("ro-1", [proposalIds("ro-1")[0]!]));
    submit(one, "ro-2", acceptAll("ro-2"));
    const out = join(tmp(), "released.csv");
    const r = await cli(["prep-release", "--project", "P", "--study", "S"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("ro-1: waiting for a settlement (2 reviews differ)");
    expect(r.err).toMatch(/ro-2: untranslated \(sections 1, 2, 3, 4\)/);
    expect(r.err).toContain("ro-3: not reviewed");
    expect(r.err).toContain("Nothing was written.");
    expect(caseRows()).toEqual([]);
    const c = await cli(["prep-release", "--project", "P", "--csv", out]);
    expect(c.code).toBe(2);
    expect(existsSync(out)).toBe(false);
    // A correction not made yet stops the release too.
    translate("ro-2", { needsCorrection: true });
    const again = await cli(["prep-release", "--project", "P", "--study", "S"]);
    expect(again.err).toMatch(/ro-2: waiting for correction \(sections 1, 2, 3, 4 not corrected\)/);
  });

  it("refuses a translation of an older text (the final review changed after it was made)", async () => {
    ready();
    db.update(prepTranslations)
      .set({ sourceText: "an older text" })
      .where(and(eq(prepTranslations.noteId, noteIdOf("ro-2")), eq(prepTranslations.section, 1)))
      .run();
    const r = await cli(["prep-release", "--project", "P", "--study", "S"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("ro-2: untranslated (section 2)");
  });

  it("releases the final English notes into a new study through the case import, with age group and sex", async () => {
    ready();
    const r = await cli(["prep-release", "--project", "P", "--study", "Released"]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain("2 notes (excluded cases left out: 1)");
    const rows = caseRows();
    expect(rows.map((c) => [c.externalId, c.ageGroup, c.sex])).toEqual([
      ["ro-1", "48-57", "F"],
      ["ro-2", "38-47", "M"],
    ]);
    expect(getCaseSections(db, rows[0]!.id)[0]!.content).toBe("English ro-1 section 1.");
    expect(events("prep_project").map((e) => e.action)).toContain("release");
    // A release makes a study; it never changes one.
    const again = await cli(["prep-release", "--project", "P", "--study", "Released"]);
    expect(again.code).toBe(2);
    expect(again.err).toContain("exists already");
  });

  it("writes the released CSV's layout, the corrected text where there is one, every cell formula-safe", async () => {
    ready();
    db.update(prepTranslations)
      .set({ correctedText: "-2+3+cmd|' /C calc'!A0", correctedBy: one.id, correctedAt: 2 })
      .where(and(eq(prepTranslations.noteId, noteIdOf("ro-2")), eq(prepTranslations.section, 0)))
      .run();
    const out = join(tmp(), "released.csv");
    const r = await cli(["prep-release", "--project", "P", "--csv", out]);
    expect(r.code).toBe(0);
    const text = readFileSync(out, "utf8");
    const lines = text.split("\r\n");
    expect(lines[0]).toBe(
      "id,age_group,sex,presenting_symptoms,psychiatric_history,psychiatric_exam,psychological_exam,secondary_diagnoses," +
        "diagnosis_sufficiency,diagnosis_sufficiency_agreement,diagnosis,diagnosis_agreement,earliest_sufficient_section",
    );
    expect(lines[1]).toMatch(/^ro-1,48-57,F,English ro-1 section 1\.,/);
    expect(lines[2]).toContain(`,'-2+3+cmd|' /C calc'!A0,`);
    expect(lines.length).toBe(4);
  });

  it("exports the minimised source notes as JSONL and CSV, refused while a note is not final", async () => {
    const dir = tmp();
    const refused = await cli(["prep-export", "--project", "P", "--out", join(dir, "x.jsonl")]);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain("ro-2: not reviewed");
    expect(refused.err).toContain("Not exported: 3 notes are not final.");
    expect(existsSync(join(dir, "x.jsonl"))).toBe(false);
    ready();
    const r = await cli(["prep-export", "--project", "P", "--out", join(dir, "x.jsonl")]);
    expect(r.code).toBe(0);
    const lines = readFileSync(join(dir, "x.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.id)).toEqual(["ro-1", "ro-2"]);
    const final = finalSections(db, noteIdOf("ro-1")) as { content: string }[];
    expect(lines[0].presenting_symptoms).toBe(final[0]!.content);
    expect(lines[0].presenting_symptoms).not.toContain("05.11.2019");
    const c = await cli(["prep-export", "--project", "P", "--out", join(dir, "x.csv")]);
    expect(c.code).toBe(0);
    expect(readFileSync(join(dir, "x.csv"), "utf8").split("\r\n")[0]).toBe(
      "id,age_group,sex,presenting_symptoms,psychiatric_history,psychiatric_exam,psychological_exam,secondary_diagnoses",
    );
    // The export reads back through the preparation import's reader: the same layout.
    expect((await cli(["prep-import", "--project", "Again", "--language", "ro", join(dir, "x.csv")])).code).toBe(0);
  });
});

describe("the pages' guards", () => {
  const get = (cookie: string, path: string) =>
    new Request(`http://concord.test${path}`, { headers: { Cookie: cookie } });
  const cookieOf = async (name: string) => (await signedIn(db, name)).post("/", {}).headers.get("Cookie")!;
  const status = (p: Promise<unknown>) =>
    p.then(
      (r) => (r instanceof Response ? r.status : 200),
      (e: Response) => e.status,
    );

  it("settling and exporting are for admins only (403); the correction for the project's reviewers only (404)", async () => {
    reviewAll();
    translate("ro-2", { needsCorrection: true });
    const noteId = String(noteIdOf("ro-1"));
    const key = listCorrectionQueue(db, one.id)[0]!.key;
    const reviewer = await cookieOf("one");
    const params = { projectId: String(projectId), noteId };
    expect(await status(settleRoute.loader({ request: get(reviewer, "/x"), params, context: {} }))).toBe(403);
    expect(
      await status(
        exportRoute.loader({ request: get(reviewer, "/x"), params: { projectId: String(projectId) }, context: {} }),
      ),
    ).toBe(403);
    for (const name of ["other", "admin"]) {
      const cookie = await cookieOf(name);
      expect(
        await status(correctionRoute.loader({ request: get(cookie, "/x"), params: { key }, context: {} })),
        name,
      ).toBe(404);
    }
    const view = await correctionRoute.loader({ request: get(reviewer, "/x"), params: { key }, context: {} });
    expect(view.item.externalId).toBe("ro-2");
  });

  it("the export download is complete or refused with the notes that are not final (409)", async () => {
    const admin = await cookieOf("admin");
    const ask = (query: string) =>
      exportRoute.loader({
        request: get(admin, `/admin/preparation/${projectId}/export?${query}`),
        params: { projectId: String(projectId) },
        context: {},
      });
    const refused = await ask("format=jsonl");
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain("ro-1: not reviewed");
    reviewAll();
    const view = getSettlementView(db, projectId, noteIdOf("ro-1"))!;
    settleNote(db, {
      projectId,
      noteId: view.note.id,
      choice: wholeReviewChoice(view.note.proposals, 0),
      seen: view.reviews.map((r) => r.version),
      actorId: (await signedIn(db, "admin")).user.id,
    });
    const ok = await ask("format=jsonl");
    expect(ok.status).toBe(200);
    const body = await ok.text();
    expect(ok.headers.get("Content-Length")).toBe(String(Buffer.byteLength(body)));
    expect(
      body
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).id),
    ).toEqual(["ro-1", "ro-2"]);
    expect(ok.headers.get("Content-Disposition")).toContain("P-minimised.jsonl");
    // The released CSV waits for the translations.
    expect((await ask("what=released")).status).toBe(409);
  });
});
