/**
 * Control concealment on the real server (docs/screening.md): the built app on a temporary database, reviewers logged in with
 * a plain POST /login, their pages and loader data (`.data`, Remix single fetch) fetched with the session cookie.
 * Neither may reveal which items are controls, the screen's labels or rationales, or the rubrics; every reviewer gets
 * the same order; foreign items answer 404 and admin pages 403.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../app/platform/db.server";
import { createScreeningStudy } from "../../app/screening/screening.server";
import { importScreeningFiles } from "../../app/screening/screening-import.server";
import { listReviewerEntries } from "../../app/screening/screening-review.server";
import { getRoundDetail, openRound } from "../../app/screening/screening-rounds.server";
import { createUser } from "../../app/accounts/users.server";
import { CATEGORIES, enc, itemsJsonl, labelsCsv, RATIONALE_MARKER, RUBRIC_MARKER } from "../support/screening";
import { startApp, tempDbPath, type RunningApp } from "../support/server";
import { logInCookie } from "../support/sessions";

const PASSWORD = "e2e-password-1";
let app: RunningApp;
let studyId: number;
let entries: number[];
let controlEntries: number[];

beforeAll(async () => {
  const t = tempDbPath();
  const db = openDatabase(t.dbPath);
  const ids: string[] = [];
  for (const u of ["rev1", "rev2", "rev3"])
    ids.push((await createUser(db, { username: u, password: PASSWORD, roles: ["rater"], actorId: null })).id);
  await createUser(db, { username: "outsider", password: PASSWORD, roles: ["rater"], actorId: null });
  const study = createScreeningStudy(db, {
    name: "Blinding",
    settings: {
      description: "",
      categories: CATEGORIES,
      reviewersPerRound: 3,
      inclusionVotes: 2,
      controlThreshold: 0.05,
      controlsPerRound: 8,
    },
    actorId: null,
  });
  studyId = study.id;
  importScreeningFiles(db, {
    studyId,
    items: { bytes: enc(itemsJsonl()), filename: "hb.jsonl" },
    labels: { bytes: enc(labelsCsv()), filename: "screen.csv" },
    actorId: null,
  });
  openRound(db, { studyId, reviewerIds: ids, seed: 99, controls: 8, actorId: null });
  entries = listReviewerEntries(db, ids[0]!).map((e) => e.entryId);
  const detail = (await getRoundDetail(db, { studyId, number: 1 }))!;
  const controlPositions = new Set(detail.window.rows.filter((i) => i.isControl).map((i) => i.position));
  controlEntries = listReviewerEntries(db, ids[0]!)
    .filter((e) => controlPositions.has(e.position))
    .map((e) => e.entryId);
  db.$client.close();
  app = await startApp({ dbPath: t.dbPath });
});

afterAll(async () => {
  await app?.stop();
});

const logIn = (username: string) => logInCookie(app.url, username, PASSWORD);

async function get(path: string, cookie: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${app.url}${path}`, { headers: { Cookie: cookie }, redirect: "manual" });
  return { status: res.status, text: await res.text() };
}

/** Words that would give away a control or the screen: none may appear in anything a reviewer receives. */
const FORBIDDEN = [
  /\bcontrols?\b/i,
  /is_?control/i,
  /stratum/i,
  /not_relevant/i,
  /borderline/i,
  /recall/i,
  /tier/i,
  new RegExp(RATIONALE_MARKER),
  new RegExp(RUBRIC_MARKER),
  /rubric/i,
  /"?label"?\s*:/i,
];

function expectConcealed(text: string, where: string) {
  for (const pattern of FORBIDDEN) {
    const m = pattern.exec(text);
    expect(m ? `${where} contains "${text.slice(Math.max(0, m.index - 60), m.index + 60)}"` : null).toBeNull();
  }
}

describe("a reviewer's pages and loader data conceal the controls and the screen", () => {
  it("the item list (HTML and .data) shows the items but nothing about controls or screen labels", async () => {
    const cookie = await logIn("rev1");
    const page = await get("/screening", cookie);
    expect(page.status).toBe(200);
    // 6 screened-in items + 8 concealed controls; React separates text parts with <!-- --> in server HTML.
    expect(page.text.replace(/<!-- -->/g, "")).toContain("0 of 14 submitted");
    expectConcealed(page.text, "/screening");
    const data = await get("/screening.data", cookie);
    expect(data.status).toBe(200);
    expect(data.text).toContain("preview");
    expectConcealed(data.text, "/screening.data");
  });

  it("every item page and its .data, controls included, carry the conversation and nothing more", async () => {
    const cookie = await logIn("rev2");
    expect(controlEntries.length).toBe(8);
    for (const id of entries) {
      const page = await get(`/screening/${id}`, cookie);
      expect(page.status).toBe(200);
      expect(page.text).toContain("Can you tell me a little more about that?");
      expectConcealed(page.text, `/screening/${id}`);
      const data = await get(`/screening/${id}.data`, cookie);
      expect(data.status).toBe(200);
      expect(data.text).toContain("Can you tell me a little more about that?");
      expectConcealed(data.text, `/screening/${id}.data`);
    }
  });

  it("a control page cannot be told apart from a candidate page by its shape", async () => {
    const cookie = await logIn("rev3");
    const shape = (text: string) =>
      text
        .replace(/<p>[^<]*<\/p>/g, "<p/>")
        .replace(/\d+/g, "0")
        .replace(/"[^"]*"/g, '""').length;
    const control = await get(`/screening/${controlEntries[0]}`, cookie);
    const candidate = await get(`/screening/${entries.find((e) => !controlEntries.includes(e))}`, cookie);
    expect(Math.abs(shape(control.text) - shape(candidate.text))).toBeLessThan(40);
  });

  it("all three reviewers get the same items in the same order", async () => {
    const lists: string[][] = [];
    for (const u of ["rev1", "rev2", "rev3"]) {
      const cookie = await logIn(u);
      const page = await get("/screening", cookie);
      const rows = [...page.text.matchAll(/<tr data-entry="(\d+)"[^>]*>[\s\S]*?<\/tr>/g)].map((m) =>
        m[0].replace(/data-state="[^"]*"|badge \w+|>(not started|draft|submitted)</g, ""),
      );
      expect(rows).toHaveLength(14);
      lists.push(rows);
    }
    expect(lists[1]).toEqual(lists[0]);
    expect(lists[2]).toEqual(lists[0]);
  });

  it("answers 404 for an item of a round the user does not review, and 403 for the admin pages", async () => {
    const cookie = await logIn("outsider");
    expect((await get(`/screening/${entries[0]}`, cookie)).status).toBe(404);
    expect((await get(`/screening/${entries[0]}.data`, cookie)).status).toBe(404);
    const list = await get("/screening", cookie);
    expect(list.text).toContain("No open round has items for you");
    const reviewer = await logIn("rev1");
    expect((await get(`/admin/screening/${studyId}`, reviewer)).status).toBe(403);
    expect((await get(`/admin/screening/${studyId}/rounds/1`, reviewer)).status).toBe(403);
    expect((await get(`/admin/screening/${studyId}/files/manifest.json?allowIncomplete=1`, reviewer)).status).toBe(403);
  });
});
