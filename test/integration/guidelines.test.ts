/**
 * Guidelines per study (docs/guidelines.md), on a real temporary SQLite database: a new Safe-Psych study starts
 * with the template's text as version 1; editing adds a version and keeps the old; a stale or unchanged edit writes
 * nothing; every save through the work-item engine records the version in force in its audit event, and the gold
 * export's manifest counts submissions per version.
 */
import { readFileSync } from "node:fs";
import { and, eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { events, guidelineSeen, guidelineVersions } from "../../db/schema";
import type { Db } from "../../app/platform/db.server";
import type { UserView } from "../../app/accounts/users.server";
import {
  guidelinesAdmin,
  guidelinesForItem,
  guidelinesManifest,
  guidelinesView,
  markGuidelinesSeen,
  saveGuidelines,
} from "../../app/guidelines/guidelines.server";
import { MISSING_INFO } from "../../app/labels/labels";
import { SAFE_PSYCH_GUIDELINES } from "../../app/annotation/public.server";
import { freshDb, makeUser } from "../support/db";
import { insufficient, studyForPair, submitPair, sufficient } from "../support/labels";

let db: Db;
let cleanup: () => void;
let alice: UserView;
let bruno: UserView;
let admin: UserView;

beforeEach(async () => {
  ({ db, cleanup } = freshDb());
  [alice, bruno, admin] = await Promise.all([
    makeUser(db, "alice", ["annotator"]),
    makeUser(db, "bruno", ["annotator"]),
    makeUser(db, "ada", ["admin"]),
  ]);
});
afterEach(() => cleanup());

const DEFAULT = readFileSync(new URL("../../app/data/guidelines/safe-psych-default.md", import.meta.url), "utf8");

describe("Safe-Psych guidelines", () => {
  it("a new study starts with the template as version 1, defining every missing-information label", () => {
    const { study } = studyForPair(db, { name: "G", cases: 2, annotatorIds: [alice.id, bruno.id] });
    const g = guidelinesAdmin(db, { scope: "safe_psych", scopeId: study.id });
    expect(g.current?.version).toBe(1);
    expect(g.current?.body).toBe(DEFAULT);
    expect(g.versions).toEqual([{ version: 1, createdAt: expect.any(Number), author: null }]);
    for (const m of MISSING_INFO) expect(DEFAULT, m.label).toContain(`**${m.label}**`);
    expect(DEFAULT).toContain("**earliest sufficient section**");
    expect(DEFAULT).toContain("**sufficient**");
  });

  it("editing adds a version and keeps the old one; stale and unchanged edits write nothing", () => {
    const { study } = studyForPair(db, { name: "G", cases: 2, annotatorIds: [alice.id, bruno.id] });
    const ref = { scope: "safe_psych" as const, scopeId: study.id };
    expect(saveGuidelines(db, { ref, body: "# New\r\ntext", basedOn: 1, actorId: admin.id })).toEqual({
      ok: true,
      version: 2,
      changed: true,
    });
    expect(saveGuidelines(db, { ref, body: "stale", basedOn: 1, actorId: admin.id })).toMatchObject({
      ok: false,
      status: 409,
    });
    expect(saveGuidelines(db, { ref, body: "# New\ntext", basedOn: 2, actorId: admin.id })).toEqual({
      ok: true,
      version: 2,
      changed: false,
    });
    const rows = db.select().from(guidelineVersions).where(eq(guidelineVersions.scopeId, study.id)).all();
    expect(rows.map((r) => [r.version, r.body])).toEqual([
      [1, DEFAULT],
      [2, "# New\ntext"],
    ]);
    const g = guidelinesAdmin(db, ref);
    expect(g.versions.map((v) => [v.version, v.author])).toEqual([
      [2, "ada"],
      [1, null],
    ]);
    expect(g.current?.html).toBe("<h3>New</h3>\n<p>text</p>\n");
    expect(
      saveGuidelines(db, { ref: { ...ref, scopeId: 999 }, body: "x", basedOn: 0, actorId: admin.id }),
    ).toMatchObject({
      ok: false,
      status: 404,
    });
  });

  it("each submission's event names the version in force, and the gold manifest counts them", () => {
    const { study, caseIds } = studyForPair(db, { name: "G", cases: 2, annotatorIds: [alice.id, bruno.id] });
    const ref = { scope: "safe_psych" as const, scopeId: study.id };
    submitPair(
      db,
      caseIds[0]!,
      { userId: alice.id, values: sufficient("F32.1", 2) },
      { userId: bruno.id, values: sufficient("F32.1", 3) },
    );
    saveGuidelines(db, { ref, body: "v2", basedOn: 1, actorId: admin.id });
    submitPair(
      db,
      caseIds[1]!,
      { userId: alice.id, values: insufficient(["imaging"]) },
      { userId: bruno.id, values: insufficient(["laboratory"]) },
    );
    const stamped = db
      .select({ caseId: events.caseId, guidelineVersion: events.guidelineVersion })
      .from(events)
      .where(and(eq(events.entity, "annotation"), eq(events.action, "submit")))
      .all()
      .map((e) => [e.caseId, e.guidelineVersion]);
    expect(stamped).toEqual([
      [caseIds[0], 1],
      [caseIds[0], 1],
      [caseIds[1], 2],
      [caseIds[1], 2],
    ]);
    // The gold export counts them through annotation's registration (guidelinesManifest asks no registry: exports
    // also run in the command line and on worker threads).
    expect(guidelinesManifest(db, ref).submissions_by_version).toBeUndefined();
    const manifest = guidelinesManifest(db, ref, SAFE_PSYCH_GUIDELINES.submissionsByVersion);
    expect(manifest.version_in_force).toBe(2);
    expect(manifest.submissions_by_version).toEqual({ "1": 2, "2": 2 });
    expect(manifest.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(guidelinesForItem(db, "annotation", caseIds[0]!)).toMatchObject({ version: 2, html: "<p>v2</p>\n" });
  });
});

describe('guidelines seen, per person (docs/guidelines.md, "In the workspaces")', () => {
  it("a person's first visit opens the panel once, on any browser; a newer version opens it once more", () => {
    const { study } = studyForPair(db, { name: "G", cases: 2, annotatorIds: [alice.id, bruno.id] });
    const ref = { scope: "safe_psych" as const, scopeId: study.id };
    const view = (userId: string) => guidelinesView(db, ref, userId);
    expect(view(alice.id)?.firstVisit).toBe(true);
    expect(markGuidelinesSeen(db, { ...ref, userId: alice.id, version: 1, now: 1 })).toEqual({ firstVisit: true });
    // Stored on the server: the next page, from any browser, finds it seen; a second tab does not open it again.
    expect(view(alice.id)?.firstVisit).toBe(false);
    expect(markGuidelinesSeen(db, { ...ref, userId: alice.id, version: 1, now: 2 })).toEqual({ firstVisit: false });
    // Per person: Bruno has not seen them.
    expect(view(bruno.id)?.firstVisit).toBe(true);
    // A new version is new to Alice once.
    saveGuidelines(db, { ref, body: "# Version 2", basedOn: 1, actorId: admin.id });
    expect(view(alice.id)?.firstVisit).toBe(true);
    expect(markGuidelinesSeen(db, { ...ref, userId: alice.id, version: 2, now: 3 })).toEqual({ firstVisit: true });
    expect(view(alice.id)?.firstVisit).toBe(false);
    // An older version reported late does not make the newer one unseen.
    markGuidelinesSeen(db, { ...ref, userId: alice.id, version: 1, now: 4 });
    expect(view(alice.id)?.firstVisit).toBe(false);
    expect(db.select().from(guidelineSeen).where(eq(guidelineSeen.userId, alice.id)).all()).toEqual([
      { userId: alice.id, scope: "safe_psych", scopeId: study.id, version: 2, seenAt: 3 },
    ]);
  });

  it("records nothing for a version the study does not have", () => {
    const { study } = studyForPair(db, { name: "G", cases: 2, annotatorIds: [alice.id, bruno.id] });
    const ref = { scope: "safe_psych" as const, scopeId: study.id };
    expect(markGuidelinesSeen(db, { ...ref, userId: alice.id, version: 9, now: 1 })).toEqual({ firstVisit: false });
    expect(
      markGuidelinesSeen(db, { scope: "mentat_bank", scopeId: 999, userId: alice.id, version: 1, now: 1 }),
    ).toEqual({ firstVisit: false });
    expect(db.select().from(guidelineSeen).all()).toEqual([]);
    // Without a viewer, the view says nothing about a first visit (admin pages, the command line).
    expect(guidelinesView(db, ref)).not.toHaveProperty("firstVisit");
  });
});
