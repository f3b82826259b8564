/**
 * A note's final minimisation (docs/preparation.md, "The final text"): pending until its reviews are submitted,
 * final when one review is submitted or two agree, waiting for a settlement when two differ, and the settlement
 * when an admin made one.
 */
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../../app/cli/index";
import type { CliIO } from "../../app/cli/command";
import type { Db } from "../../app/platform/db.server";
import type { UserView } from "../../app/accounts/users.server";
import { prepSettlements } from "../../db/schema";
import { finalReviewOf, finalSections } from "../../app/preparation/final-review.server";
import { getReviewNote, listReviewerNotes, saveMinimisationReview } from "../../app/preparation/review.server";
import type { MinimisationValues } from "../../app/preparation/domain/review";
import { freshDb, makeUser } from "../support/db";

const NOTES = join(new URL("../fixtures/preparation/", import.meta.url).pathname, "notes.csv");

let db: Db;
let cleanup: () => void;
let one: UserView;
let two: UserView;

beforeEach(async () => {
  ({ db, cleanup } = freshDb());
  await makeUser(db, "admin", ["admin"]);
  one = await makeUser(db, "one", ["rater"]);
  two = await makeUser(db, "two", ["rater"]);
  const io: CliIO = { out: () => {}, err: () => {}, readStdin: async () => "", isTTY: false };
  expect(await runCli(["prep-import", "--project", "P", "--language", "ro", NOTES], io)).toBe(0);
  expect(await runCli(["prep-reviewers", "--project", "P", "--add", "one,two"], io)).toBe(0);
});
afterEach(() => cleanup());

const noteId = () => listReviewerNotes(db, one.id).find((n) => n.externalId === "ro-1")!.noteId;

function acceptAll(except?: string): MinimisationValues {
  const view = getReviewNote(db, { userId: one.id, noteId: noteId() })!;
  const decisions: MinimisationValues["decisions"] = {};
  for (const p of view.note.proposals) decisions[p.id] = { action: p.id === except ? "reject" : "accept" };
  return { decisions, missed: [], excluded: false, exclusionReason: "" };
}

function submit(user: UserView, values: MinimisationValues, intent: "draft" | "submit" = "submit") {
  const r = saveMinimisationReview(db, { userId: user.id, noteId: noteId(), values, version: 0, intent });
  expect(r.ok).toBe(true);
}

describe("the final review of a note", () => {
  it("is pending with no submitted review, and while a named reviewer holds a draft", () => {
    expect(finalReviewOf(db, noteId()).state).toBe("pending");
    expect(finalSections(db, noteId())).toBe("not final");
    submit(one, acceptAll());
    submit(two, acceptAll(), "draft");
    expect(finalReviewOf(db, noteId()).state).toBe("pending");
  });

  it("is the one submitted review, and minimises the text by it", () => {
    submit(one, acceptAll());
    expect(finalReviewOf(db, noteId())).toMatchObject({ state: "final", from: "review" });
    const sections = finalSections(db, noteId());
    expect(Array.isArray(sections)).toBe(true);
    const view = getReviewNote(db, { userId: one.id, noteId: noteId() })!;
    const original = view.note.sections.map((s) => s.content).join("\n");
    expect((sections as { content: string }[]).map((s) => s.content).join("\n")).not.toBe(original);
  });

  it("is final when two reviews agree", () => {
    submit(one, acceptAll());
    submit(two, acceptAll());
    expect(finalReviewOf(db, noteId())).toMatchObject({ state: "final", from: "agreed" });
  });

  it("waits for a settlement when two reviews differ, then is the settlement", () => {
    const first = Object.keys(acceptAll().decisions)[0]!;
    submit(one, acceptAll());
    submit(two, acceptAll(first));
    expect(finalReviewOf(db, noteId())).toEqual({ state: "differ", reviews: 2 });
    expect(finalSections(db, noteId())).toBe("not final");
    db.insert(prepSettlements)
      .values({ noteId: noteId(), decisions: acceptAll(first).decisions, missed: [], settledAt: 1 })
      .run();
    expect(finalReviewOf(db, noteId())).toMatchObject({ state: "final", from: "settled" });
  });

  it("two exclusions agree whatever their wording; an excluded case has no final text", () => {
    submit(one, { decisions: {}, missed: [], excluded: true, exclusionReason: "violence" });
    submit(two, { decisions: {}, missed: [], excluded: true, exclusionReason: "violent case" });
    expect(finalReviewOf(db, noteId())).toMatchObject({ state: "final", from: "agreed" });
    expect(finalSections(db, noteId())).toBeNull();
  });
});
