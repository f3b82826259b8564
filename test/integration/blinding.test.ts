/**
 * Blinding, enforced on the server (docs/architecture.md#roles-and-blinding, docs/safe-psych.md#annotation, docs/safe-psych.md#disagreement-and-adjudication), checked against the real built app: the HTML and the
 * single-fetch loader data (`*.data`, turbo-stream text) an annotator or adjudicator can load carry nothing they must
 * not see. Each check searches the whole response text, not what a browser would display. Also the guards: 404 for
 * cases that are not yours (same as a case that does not exist), 403 for other roles' pages, the login redirect, and
 * the CSRF token and Origin check on posts. Needs `npm run build` first; one server for the file.
 */
import { asc, eq } from "drizzle-orm";
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adjudications, annotations, cases } from "../../db/schema";
import { openDatabase, type Db } from "../../app/platform/db.server";
import { EMPTY_VALUES, saveDraft, submitAnnotation } from "../../app/annotation/annotations.server";
import { autoAssign, reassign } from "../../app/annotation/assignments.server";
import { importCases, requireStudyByName } from "../../app/annotation/studies.server";
import { createUser, type UserView } from "../../app/accounts/users.server";
import { startApp, tempDbPath, type RunningApp } from "../support/server";
import { appSessions, expectAbsent } from "../support/sessions";
import { assignmentsOf, insufficient, outcomeOf, sufficient } from "../support/labels";

const PASSWORD = "blinding-password-1";

// What alice (the annotator under test) must never receive. Her own labels use other values.
const OTHER_CODE = "F42.2";
const OTHER_NOTE = "Zebra-striped remark written by the second annotator";
const REFERENCE_CODE = "F63.0";
const SOURCE_DIAGNOSIS = "F63.2 Kleptomania per hospital discharge letter";
const ALICE_CODE = "F33.2";
const ALICE_NOTE = "Own remark: recurrent, current episode severe";
/** Words that would reveal a dispute, an outcome or an adjudication to an annotator. */
const DISPUTE_WORDS =
  /disput|adjudicat|outcome|disagree|agreed|agreement|\bgold\b|reference label|annotator a\b|annotator b\b|rationale/i;

let app: RunningApp;
let db: Db;
let dir: string;
let alice: UserView;
let bruno: UserView;
let carl: UserView;
let boss: UserView;
/** [1] disputed (alice F33.2 vs bruno F42.2), [2] alice submitted + bruno draft, [3] bruno + carl only, [4] alice unstarted */
const caseIds: number[] = [];
const { csrfs, logIn, get, post, text } = appSessions(() => app.url, PASSWORD);

function studyJsonl(): Uint8Array {
  const line = (i: number) =>
    JSON.stringify({
      id: `note-${i}`,
      age_group: "38-47",
      sex: "F",
      presenting_symptoms: `Case ${i}: low mood, poor sleep and loss of interest for two months.`,
      psychiatric_history: "One earlier depressive episode, treated as an outpatient.",
      psychiatric_exam: "Depressed affect, psychomotor slowing, no psychotic features.",
      psychological_exam: "BDI 31.",
      secondary_diagnoses: "",
      source_diagnosis: SOURCE_DIAGNOSIS,
      labels: {
        diagnosis_sufficiency: "1",
        diagnosis_sufficiency_agreement: "1",
        diagnosis: REFERENCE_CODE,
        diagnosis_agreement: "0",
        earliest_sufficient_section: "3",
      },
    });
  return new TextEncoder().encode([1, 2, 3, 4].map(line).join("\n") + "\n");
}

function expectNoDisputeWords(body: string, where: string) {
  // Script and style URLs name code modules (e.g. /assets/gold-….js, the shared label rules), not this case.
  const m = DISPUTE_WORDS.exec(body.replace(/\/assets\/[\w.-]+/g, "/assets/…"));
  expect(
    m,
    `${where} contains "${m?.[0]}": …${m ? body.slice(Math.max(0, m.index - 80), m.index + 80) : ""}…`,
  ).toBeNull();
}

beforeAll(async () => {
  const tmp = tempDbPath();
  dir = tmp.dir;
  db = openDatabase(tmp.dbPath);
  const make = (username: string, displayName: string, roles: UserView["roles"]) =>
    createUser(db, { username, displayName, password: PASSWORD, roles, actorId: null });
  [alice, bruno, carl, , boss] = await Promise.all([
    make("alice", "Alice Amberley", ["annotator"]),
    make("bruno", "Bruno Quixotewright", ["annotator"]),
    make("carl", "Carl Vantongeren", ["annotator"]),
    make("judy", "Judith Senior", ["adjudicator"]),
    make("boss", "Study Manager", ["admin"]),
  ]);
  const imported = importCases(db, {
    studyName: "Blind",
    bytes: studyJsonl(),
    filename: "blind.jsonl",
    actorId: boss.id,
  });
  expect(imported.ok, JSON.stringify(imported.parse.errors)).toBe(true);
  const study = requireStudyByName(db, "Blind");
  autoAssign(db, { studyId: study.id, annotatorIds: [alice.id, bruno.id], seed: 1, actorId: boss.id });
  caseIds.push(
    0,
    ...db
      .select({ id: cases.id })
      .from(cases)
      .where(eq(cases.studyId, study.id))
      .orderBy(asc(cases.position))
      .all()
      .map((c) => c.id),
  );
  const aliceOn3 = assignmentsOf(db, caseIds[3]!).find((a) => a.annotatorId === alice.id)!;
  reassign(db, { assignmentId: aliceOn3.id, toAnnotatorId: carl.id, actorId: boss.id, studyId: study.id });

  const other = sufficient(OTHER_CODE, 1, OTHER_NOTE);
  const mine = sufficient(ALICE_CODE, 2, ALICE_NOTE);
  expect(submitAnnotation(db, { userId: bruno.id, caseId: caseIds[1]!, values: other, version: 0 }).ok).toBe(true);
  expect(submitAnnotation(db, { userId: alice.id, caseId: caseIds[1]!, values: mine, version: 0 }).ok).toBe(true);
  expect(outcomeOf(db, caseIds[1]!)!.status).toBe("disputed");
  expect(
    submitAnnotation(db, {
      userId: alice.id,
      caseId: caseIds[2]!,
      values: insufficient(["imaging"], "", ALICE_NOTE),
      version: 0,
    }).ok,
  ).toBe(true);
  expect(saveDraft(db, { userId: bruno.id, caseId: caseIds[2]!, values: other, version: 0 }).ok).toBe(true);
  expect(submitAnnotation(db, { userId: bruno.id, caseId: caseIds[3]!, values: other, version: 0 }).ok).toBe(true);

  app = await startApp({ dbPath: tmp.dbPath });
  for (const u of ["alice", "judy", "boss"]) await logIn(u);
}, 60_000);

afterAll(async () => {
  await app?.stop();
  db?.$client.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("an annotator's pages and loader data", () => {
  const forbidden = () => [
    "bruno",
    "Quixotewright",
    bruno.id,
    "Vantongeren",
    carl.id,
    OTHER_CODE,
    OTHER_NOTE,
    REFERENCE_CODE,
    SOURCE_DIAGNOSIS,
    "Kleptomania",
    "discharge letter",
    "judy",
    "Judith",
  ];
  const pages = () => [
    "/annotate",
    "/annotate.data",
    `/annotate/${caseIds[1]}`,
    `/annotate/${caseIds[1]}.data`,
    `/annotate/${caseIds[2]}`,
    `/annotate/${caseIds[2]}.data`,
    `/annotate/${caseIds[4]}`,
    `/annotate/${caseIds[4]}.data`,
  ];

  it("show the annotator's own work (so the searches below look at real pages)", async () => {
    const html = await text("alice", `/annotate/${caseIds[1]}`);
    expect(html).toContain("Depressed affect, psychomotor slowing");
    expect(html).toContain(ALICE_NOTE);
    const data = await text("alice", `/annotate/${caseIds[1]}.data`);
    expect(data).toContain(ALICE_CODE);
    expect(data).toContain(ALICE_NOTE);
    expect(data).toContain("Case 1: low mood");
    const list = await text("alice", "/annotate.data");
    expect(list).toContain("note-1");
    expect(list).toContain("note-4");
  });

  it("carry no other annotator's identity or labels, no reference labels or source diagnosis, no dispute state", async () => {
    for (const path of pages()) {
      const body = await text("alice", path);
      expectAbsent(body, forbidden(), `alice's ${path}`);
      expectNoDisputeWords(body, `alice's ${path}`);
    }
  });

  it("do not list a case that is not assigned to the annotator", async () => {
    const list = await text("alice", "/annotate.data");
    expect(list).not.toContain("note-3");
  });

  it("answer 404 for a case not assigned to the annotator, exactly as for a case that does not exist", async () => {
    for (const suffix of ["", ".data"]) {
      const foreign = await get("alice", `/annotate/${caseIds[3]}${suffix}`);
      const missing = await get("alice", `/annotate/987654${suffix}`);
      expect(foreign.status).toBe(404);
      expect(missing.status).toBe(404);
      // Identical but for the per-response CSP nonce.
      const [f, m] = [await foreign.text(), await missing.text()].map((t) => t.replace(/nonce="[^"]*"/g, 'nonce=""'));
      expect(f).toBe(m);
      expectAbsent(f, [...forbidden(), "note-3", "Case 3: low mood"], `alice's ${suffix || "page"} for case 3`);
    }
    // Posting to it is refused the same way and writes nothing.
    const res = await post("alice", `/annotate/${caseIds[3]}`, {
      csrf: csrfs.alice!,
      intent: "draft",
      version: "0",
      values: JSON.stringify(EMPTY_VALUES),
    });
    expect(res.status).toBe(404);
    expect(
      db
        .select()
        .from(annotations)
        .where(eq(annotations.caseId, caseIds[3]!))
        .all()
        .map((a) => a.annotatorId),
    ).toEqual([bruno.id]);
  });

  it("answers 403 on every admin page and the adjudication pages", async () => {
    const admin = [
      "/admin",
      "/admin/users",
      "/admin/import",
      "/admin/studies/1",
      "/admin/studies/1/progress",
      "/admin/studies/1/export",
      "/admin/studies/1/stats",
      `/admin/cases/${caseIds[1]}`,
      "/adjudicate",
      `/adjudicate/${caseIds[1]}`,
    ];
    for (const path of admin) {
      const res = await get("alice", path);
      const body = await res.text();
      expect(res.status, path).toBe(403);
      expectAbsent(body, forbidden(), `alice's ${path}`);
    }
    for (const path of ["/admin.data", `/admin/cases/${caseIds[1]}.data`, `/adjudicate/${caseIds[1]}.data`]) {
      const res = await get("alice", path);
      const body = await res.text();
      expect(res.status, path).toBe(403);
      expectAbsent(body, forbidden(), `alice's ${path}`);
    }
    // Positive control: the admin does see the case history.
    expect((await get("boss", `/admin/cases/${caseIds[1]}`)).status).toBe(200);
  });
});

describe("an adjudicator's pages and loader data", () => {
  const identities = () => [
    "alice",
    "Amberley",
    alice.id,
    "bruno",
    "Quixotewright",
    bruno.id,
    "carl",
    "Vantongeren",
    carl.id,
    SOURCE_DIAGNOSIS,
    "Kleptomania",
  ];

  it("show no annotator identity and, before the independent judgement, no annotation; afterwards A/B without identities", async () => {
    const caseId = caseIds[1]!;
    for (const path of ["/adjudicate", "/adjudicate.data", `/adjudicate/${caseId}`, `/adjudicate/${caseId}.data`]) {
      const body = await text("judy", path);
      expectAbsent(
        body,
        [...identities(), OTHER_CODE, OTHER_NOTE, ALICE_CODE, ALICE_NOTE],
        `judy's ${path} (independent phase)`,
      );
    }
    expect(await text("judy", `/adjudicate/${caseId}.data`)).toContain("independent");

    // Record the independent judgement through the real action.
    const version = String(outcomeOf(db, caseId)!.version);
    const label = JSON.stringify({
      sufficiency: "sufficient",
      icd10: "F32.2",
      earliestSection: 2,
      missingInfo: [],
      missingOther: "",
    });
    const res = await post("judy", `/adjudicate/${caseId}`, {
      csrf: csrfs.judy!,
      intent: "submit",
      step: "independent",
      version: "0",
      values: label,
      outcomeVersion: version,
    });
    expect(res.status, await res.text()).toBe(200);
    expect(db.select().from(adjudications).where(eq(adjudications.caseId, caseId)).all()).toHaveLength(1);

    for (const path of [`/adjudicate/${caseId}`, `/adjudicate/${caseId}.data`]) {
      const body = await text("judy", path);
      // The annotations are now there (so the identity search looks at a page that shows them)…
      expect(body).toContain(OTHER_CODE);
      expect(body).toContain(OTHER_NOTE);
      expect(body).toContain(ALICE_NOTE);
      // …as A and B only.
      expectAbsent(body, [...identities(), "annotatorId", "assignmentId"], `judy's ${path} (reveal phase)`);
    }
    expect(await text("judy", `/adjudicate/${caseId}`)).toMatch(/Annotator (<!-- -->)?A[\s\S]*Annotator (<!-- -->)?B/);
  });

  it("after the decision, the annotator's pages still show nothing of it", async () => {
    const caseId = caseIds[1]!;
    const label = JSON.stringify({
      sufficiency: "sufficient",
      icd10: "F32.2",
      earliestSection: 2,
      missingInfo: [],
      missingOther: "",
    });
    const version = String(outcomeOf(db, caseId)!.version);
    const res = await post("judy", `/adjudicate/${caseId}`, {
      csrf: csrfs.judy!,
      intent: "submit",
      step: "decide",
      version: "0",
      values: label,
      outcomeVersion: version,
    });
    expect(res.status, await res.text()).toBe(200);
    expect(outcomeOf(db, caseId)!.status).toBe("adjudicated");
    for (const path of ["/annotate", "/annotate.data", `/annotate/${caseId}`, `/annotate/${caseId}.data`]) {
      const body = await text("alice", path);
      expectAbsent(
        body,
        ["F32.2", OTHER_CODE, OTHER_NOTE, "judy", "Judith", bruno.id, "Quixotewright"],
        `alice's ${path} after the decision`,
      );
      expectNoDisputeWords(body, `alice's ${path} after the decision`);
    }
  });

  it("answers 404 for a case that is not disputed", async () => {
    expect((await get("judy", `/adjudicate/${caseIds[2]}`)).status).toBe(404);
    expect((await get("judy", `/adjudicate/987654`)).status).toBe(404);
  });
});

describe("guards on requests", () => {
  it("redirects a logged-out request to the login page", async () => {
    for (const path of ["/annotate", `/annotate/${caseIds[1]}`, "/adjudicate", "/admin"]) {
      const res = await get(null, path);
      expect(res.status, path).toBe(302);
      expect(res.headers.get("location"), path).toBe(`/login?redirectTo=${encodeURIComponent(path)}`);
    }
    const data = await get(null, `/annotate/${caseIds[1]}.data`);
    const body = await data.text();
    expect(data.status).not.toBe(200);
    expectAbsent(body, ["Case 1: low mood", ALICE_NOTE, OTHER_CODE], "logged-out .data");
  });

  it("refuses a post without the CSRF field (403) or from another origin (403), writing nothing; the same post with both goes through", async () => {
    const caseId = caseIds[4]!;
    const fields = { intent: "draft", version: "0", values: JSON.stringify(sufficient("F32.1", 1)) };
    const rows = () => db.select().from(annotations).where(eq(annotations.caseId, caseId)).all();
    expect(rows()).toEqual([]);

    for (const path of [`/annotate/${caseId}`, `/annotate/${caseId}.data`]) {
      const noCsrf = await post("alice", path, fields);
      expect(noCsrf.status, `${path} without csrf`).toBe(403);
      const wrongCsrf = await post("alice", path, { ...fields, csrf: "x".repeat(csrfs.alice!.length) });
      expect(wrongCsrf.status, `${path} with a wrong csrf`).toBe(403);
      const crossOrigin = await post(
        "alice",
        path,
        { ...fields, csrf: csrfs.alice! },
        { Origin: "http://evil.example" },
      );
      expect(crossOrigin.status, `${path} cross-origin`).toBe(403);
    }
    // Another session's token is not this session's token.
    expect((await post("alice", `/annotate/${caseId}`, { ...fields, csrf: csrfs.judy! })).status).toBe(403);
    // A logout from another origin is refused too (the session survives).
    expect((await post("alice", "/logout", { csrf: csrfs.alice! }, { Origin: "http://evil.example" })).status).toBe(
      403,
    );
    expect(rows()).toEqual([]);

    const ok = await post("alice", `/annotate/${caseId}.data`, { ...fields, csrf: csrfs.alice! }, { Origin: app.url });
    expect(ok.status).toBe(200);
    expect(rows().map((r) => [r.annotatorId, r.status, r.icd10])).toEqual([[alice.id, "draft", "F32.1"]]);
  });

  it("answers 409 to a draft or a submission on a locked case, and changes nothing", async () => {
    const caseId = caseIds[1]!;
    const rows = () => db.select().from(annotations).where(eq(annotations.caseId, caseId)).all();
    const before = rows();
    const mine = before.find((r) => r.annotatorId === alice.id)!;
    expect(mine.status).toBe("locked");
    for (const intent of ["draft", "submit"]) {
      const res = await post("alice", `/annotate/${caseId}.data`, {
        csrf: csrfs.alice!,
        intent,
        version: String(mine.version),
        values: JSON.stringify(sufficient("F20.0", 1)),
      });
      expect(res.status, intent).toBe(409);
    }
    expect(rows()).toEqual(before);
  });
});
