/**
 * Blinding of the expert-rating pages (docs/architecture.md#roles-and-blinding, docs/mentat.md), checked against the real built app: the HTML and the
 * single-fetch loader data (`*.data`) an expert loads carry none of another expert's ratings, comments, reasons or
 * identity, nor the intended answer, the question's notes or fitted labels. Also 404 for a question or case that is
 * not the expert's (same as one that does not exist), 403 for the admin pages and for users without the rater
 * role. Needs `npm run build` first; one server for the file.
 */
import { readFileSync, rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Db } from "../../app/platform/db.server";
import { addReviewRaters, importReviewSet, listRaterItems, saveReview } from "../../app/case-review/case-review.server";
import { addBankRaters } from "../../app/mentat/panel.server";
import { importQuestionBank } from "../../app/mentat/banks.server";
import { listRaterQuestions, saveOptionRating } from "../../app/mentat/ratings.server";
import { runBankFit } from "../../app/mentat/fits.server";
import { createUser, type UserView } from "../../app/accounts/users.server";
import { startApp, tempDbPath, type RunningApp } from "../support/server";
import { appSessions, expectAbsent } from "../support/sessions";

const PASSWORD = "expert-blinding-1";
const BANK = readFileSync(new URL("../fixtures/expert-ratings/questions.csv", import.meta.url), "utf8");
const CASES = readFileSync(new URL("../fixtures/expert-ratings/cases.csv", import.meta.url), "utf8");
const BEN_COMMENT = "Quagmire-remark from the second expert";
const BEN_REASON = "Xylophone-reason: duration criterion not met";
const ANN_COMMENT = "Own comment of the first expert";

let app: RunningApp;
let db: Db;
let dir: string;
let ann: UserView;
let ben: UserView;
let cat: UserView;
let boss: UserView;
const ids: Record<string, number> = {};
const { cookies, csrfs, logIn, get, text } = appSessions(() => app.url, PASSWORD);

beforeAll(async () => {
  const tmp = tempDbPath();
  dir = tmp.dir;
  db = openDatabase(tmp.dbPath);
  const make = (username: string, displayName: string, roles: UserView["roles"]) =>
    createUser(db, { username, displayName, password: PASSWORD, roles, actorId: null });
  ann = await make("ann", "Ann Expert", ["rater"]);
  ben = await make("quill", "Quillon Okonkwo-Lindqvist", ["rater"]);
  cat = await make("cat", "Cat Outsider", ["rater"]);
  await make("zed", "Zed Annotator", ["annotator"]);
  boss = await make("boss", "Study Manager", ["admin"]);
  const bank = importQuestionBank(db, { bankName: "Blind bank", text: BANK, actorId: boss.id });
  if (!bank.ok) throw new Error("import failed");
  addBankRaters(db, { bankId: bank.bankId!, raterIds: [ann.id, ben.id], actorId: boss.id });
  for (const q of listRaterQuestions(db, ann.id)) ids[q.externalId] = q.questionId;
  const rate = (u: UserView, ext: string, scores: number[], comment: string) =>
    expect(
      saveOptionRating(db, {
        userId: u.id,
        questionId: ids[ext]!,
        values: { scores, comment },
        version: 0,
        intent: "submit",
      }).ok,
    ).toBe(true);
  rate(ben, "t01", [97, 3, 61, 29, 47], BEN_COMMENT);
  rate(ben, "t02", [12, 88, 40, 40, 5], BEN_COMMENT);
  rate(ann, "t02", [50, 90, 10, 20, 0], ANN_COMMENT);
  runBankFit(db, { bankId: bank.bankId!, options: { bootstrap: 5 }, actorId: boss.id });

  const set = importReviewSet(db, { setName: "Blind set", text: CASES, actorId: boss.id });
  if (!set.ok) throw new Error("import failed");
  addReviewRaters(db, { setId: set.setId!, raterIds: [ann.id, ben.id], actorId: boss.id });
  ids.set = set.setId!;
  for (const i of listRaterItems(db, ben.id)) ids[i.externalId] = i.itemId;
  const none = { naturalness: null, validity: null, realism: null, reason: "", comment: "" };
  expect(
    saveReview(db, {
      userId: ben.id,
      itemId: ids.s02!,
      values: { ...none, decision: "reject", reason: BEN_REASON, comment: BEN_COMMENT },
      version: 0,
      intent: "submit",
    }).ok,
  ).toBe(true);
  expect(
    saveReview(db, {
      userId: ben.id,
      itemId: ids.c01!,
      values: { ...none, decision: null, naturalness: 2, validity: 1, realism: 2, comment: BEN_COMMENT },
      version: 0,
      intent: "submit",
    }).ok,
  ).toBe(true);
  ids.x01 = (
    db.$client.prepare("select id from mentat_questions where external_id = 'x01'").get() as { id: number }
  ).id;
  db.$client.close();

  app = await startApp({ dbPath: tmp.dbPath });
  for (const u of ["ann", "cat", "zed", "boss"]) await logIn(u);
}, 60_000);

afterAll(async () => {
  await app?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("an expert's pages and loader data", () => {
  const secrets = () => [
    "quill",
    "Okonkwo",
    ben.id,
    BEN_COMMENT,
    BEN_REASON,
    "Xylophone",
    "Rated by the panel", // the question's notes (admin only)
    "intended",
    "slope",
    "offset",
    "preference label",
  ];
  const pages = () => [
    "/expert-ratings",
    "/expert-ratings.data",
    // The list shows one bank or set at a time (docs/architecture.md, "Pages are windows"): the review set's window.
    `/expert-ratings?c=s${ids.set}`,
    `/expert-ratings.data?c=s${ids.set}`,
    `/mentat/${ids.t01}`,
    `/mentat/${ids.t01}.data`,
    `/mentat/${ids.t02}`,
    `/mentat/${ids.t02}.data`,
    `/case-review/${ids.s02}`,
    `/case-review/${ids.s02}.data`,
    `/case-review/${ids.c01}`,
    `/case-review/${ids.c01}.data`,
  ];

  it("show the expert's own work (so the searches below look at real pages)", async () => {
    const html = await text("ann", `/mentat/${ids.t02}`);
    expect(html).toContain("with schizophrenia reports that");
    expect(html).toContain(ANN_COMMENT);
    const data = await text("ann", `/mentat/${ids.t02}.data`);
    expect(data).toContain(ANN_COMMENT);
    expect(data).toContain("Emergency evaluation and consider involuntary admission");
    const list = await text("ann", "/expert-ratings.data");
    expect(list).toContain("t01");
    expect(await text("ann", `/expert-ratings.data?c=s${ids.set}`)).toContain("s02");
    expect(await text("ann", `/case-review/${ids.s02}`)).toContain("one period of elevated mood");
  });

  it("carry no other expert's identity, ratings, comments or reasons, and no answer key, notes or labels", async () => {
    for (const path of pages()) expectAbsent(await text("ann", path), secrets(), `ann's ${path}`);
  });

  it("carry none of the other expert's scores: the decoded loader data holds the expert's own (empty) rating only", async () => {
    // Single fetch sends turbo-stream; decode it (Remix's own dependency) to look at the actual values.
    const { decode } = await import("turbo-stream");
    const res = await get("ann", `/mentat/${ids.t01}.data`);
    const decoded = (await decode(res.body!)).value as Record<
      string,
      { data?: { scores: unknown; comment: unknown; question: Record<string, unknown> } }
    >;
    const view = Object.values(decoded).find((v) => v?.data && "scores" in v.data)!.data!;
    expect(view.scores).toEqual([null, null, null, null, null]);
    expect(view.comment).toBe("");
    expect(Object.keys(view.question).sort()).toEqual(["bankName", "domain", "externalId", "id", "options", "text"]);
    const mine = await get("ann", `/mentat/${ids.t02}.data`);
    const own = Object.values((await decode(mine.body!)).value as Record<string, { data?: { scores: number[] } }>).find(
      (v) => v?.data && "scores" in v.data,
    )!.data!;
    expect([...own.scores].sort((a, b) => a - b)).toEqual([0, 10, 20, 50, 90]);
  });

  it("answer 404 for a question or case the expert may not rate, exactly as for one that does not exist", async () => {
    for (const [path, missing] of [
      [`/mentat/${ids.t01}`, "/mentat/987654"],
      [`/case-review/${ids.c01}`, "/case-review/987654"],
    ] as const)
      for (const suffix of ["", ".data"]) {
        const foreign = await get("cat", path + suffix);
        const absent = await get("cat", missing + suffix);
        expect(foreign.status).toBe(404);
        expect(absent.status).toBe(404);
        const [f, m] = [await foreign.text(), await absent.text()].map((t) => t.replace(/nonce="[^"]*"/g, 'nonce=""'));
        expect(f).toBe(m);
      }
    // A diagnosis question keeps its intended answer: no expert rates it, even on the panel.
    expect((await get("ann", `/mentat/${ids.x01}`)).status).toBe(404);
  });

  it("refuse a post to another expert's question with 404 and write nothing", async () => {
    const res = await fetch(`${app.url}/mentat/${ids.t01}`, {
      method: "POST",
      headers: { Cookie: cookies.cat! },
      body: new URLSearchParams({
        csrf: csrfs.cat!,
        intent: "submit",
        version: "0",
        values: JSON.stringify({ scores: [1, 2, 3, 4, 5], comment: "" }),
      }),
      redirect: "manual",
    });
    expect(res.status).toBe(404);
    const check = openDatabase(app.dbPath);
    expect(check.$client.prepare("select count(*) as n from mentat_ratings where rater_id = ?").get(cat.id)).toEqual({
      n: 0,
    });
    check.$client.close();
  });

  it("keep the admin pages and exports from experts, and the expert pages from other roles", async () => {
    for (const path of [
      "/admin/expert-ratings",
      "/admin/expert-ratings.data",
      "/admin/mentat/1",
      "/admin/mentat/1/export?set=base",
      "/admin/case-review/1",
      "/admin/case-review/1/report.json",
    ])
      expect((await get("ann", path)).status, path).toBe(403);
    for (const path of ["/expert-ratings", `/mentat/${ids.t01}`, `/case-review/${ids.c01}`])
      expect((await get("zed", path)).status, path).toBe(403);
    const admin = await text("boss", "/admin/case-review/1");
    expect(admin).toContain(BEN_REASON); // the admin report does show it
  });
});
