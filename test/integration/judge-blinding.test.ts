/**
 * Raters' blinding, enforced on the server (docs/architecture.md#roles-and-blinding, docs/judge-validation.md), checked against the real built app: the HTML and the
 * single-fetch loader data (`*.data`) a rater can load hold the response text and their own labels, and never the
 * model, strategy, sample id, run, bucket, derived action, another rater's identity or labels, or any judge output.
 * Also: 404 for a response not assigned to the rater (as for one that does not exist), 403 for other roles' pages
 * and downloads, the CSRF check on posts. Needs `npm run build` first; one server for the file.
 */
import { asc, eq } from "drizzle-orm";
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { judgeItems } from "../../db/schema";
import { openDatabase, type Db } from "../../app/platform/db.server";
import { importJudgeOutputs } from "../../app/judge-validation/judge-candidates.server";
import { saveRatingDraft, submitRating, type RatingValues } from "../../app/judge-validation/judge-ratings.server";
import { drawSample } from "../../app/judge-validation/judge-sample.server";
import { getJudgeSetByName } from "../../app/judge-validation/judge-sets.server";
import { importResponses } from "../../app/judge-validation/judge-responses.server";
import { startRating } from "../../app/judge-validation/judge-raters.server";
import { createUser, type UserView } from "../../app/accounts/users.server";
import { startApp, tempDbPath, type RunningApp } from "../support/server";
import { appSessions, expectAbsent as expectNoneOf } from "../support/sessions";

const PASSWORD = "rater-blinding-1";
const MODEL = "zorblax-9b-instruct";
const STRATEGY = "sequential_info_abstention_aware";
const RUN = "zorblax-run-folder";
const OTHER_NOTE = "Zebra-striped remark written by ravi";
const OTHER_CODES = "F99.9-RAVI";
const JUDGE = "kestrel-judge";
const JUDGE_NAMES = "kestrelonian disorder";
const RITA_NOTE = "Own remark by rita about the hedge";
const TEXTS = [
  "Working diagnosis: moderate depressive episode (F32.1).",
  "It may be F32.1, although the history is short.",
  "How long have the symptoms lasted, and is there substance use?",
];
const BUCKET_WORDS =
  /clear_(diagnose|clarify|abstain)|committed_(specific|unspecified)|differential_with|validation_bucket|derived_action|source_run|model_evaluated|new_judge_output|judge_output/i;

let app: RunningApp;
let db: Db;
let dir: string;
let rita: UserView;
let ravi: UserView;
let rosa: UserView;
let boss: UserView;
const items: number[] = [];
let foreignItem: number;
let setId: number;
const { cookies, csrfs, logIn, get, text } = appSessions(() => app.url, PASSWORD);

const values = (
  p: RatingValues["primaryAnswer"],
  i: RatingValues["infoRequest"],
  notes = "",
  icdCodes = "",
): RatingValues => ({
  primaryAnswer: p,
  infoRequest: i,
  icdCodes,
  diagnosisNames: "",
  notes,
});

/** The secrets, and no word that would reveal a bucket, a derived action or a judge's output. */
function expectAbsent(body: string, secrets: string[], where: string) {
  expectNoneOf(body, secrets, where);
  const m = BUCKET_WORDS.exec(body.replace(/\/assets\/[\w.-]+/g, "/assets/…"));
  expect(m, `${where} contains "${m?.[0]}"`).toBeNull();
}

beforeAll(async () => {
  const tmp = tempDbPath();
  dir = tmp.dir;
  db = openDatabase(tmp.dbPath);
  const make = (username: string, displayName: string, roles: UserView["roles"]) =>
    createUser(db, { username, displayName, password: PASSWORD, roles, actorId: null });
  [rita, ravi, rosa, boss] = await Promise.all([
    make("rita", "Rita Rater", ["rater"]),
    make("ravi", "Ravi Quillfeather", ["rater"]),
    make("rosa", "Rosa Underbridge", ["rater"]),
    make("boss", "Study Manager", ["admin"]),
  ]);
  const roman = await make("roman", "Roman Other", ["rater"]);
  await make("annie", "Annie Annotator", ["annotator"]);

  const features = [
    {
      primary_answer: "committed",
      info_request: "none",
      icd_codes: ["F32.1"],
      diagnosis_names: ["moderate depressive episode"],
    },
    {
      primary_answer: "committed",
      info_request: "none",
      icd_codes: ["F32.1"],
      diagnosis_names: ["depressive episode"],
    },
    { primary_answer: "none", info_request: "specific" },
  ];
  const lines = TEXTS.map((response, i) => ({
    id: `case-Q1${i}`,
    model: MODEL,
    strategy: STRATEGY,
    step: 2,
    is_last_section: false,
    response,
    features: features[i],
  }));
  const bytes = new TextEncoder().encode(lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  expect(
    importResponses(db, { setName: "Pilot set", files: [{ bytes, filename: "r.jsonl" }], actorId: boss.id }).ok,
  ).toBe(true);
  setId = getJudgeSetByName(db, "Pilot set")!.id;
  drawSample(db, { setId, seed: 123, actorId: boss.id });
  startRating(db, { setId, raterIds: [rita.id, ravi.id, rosa.id], seed: 1, actorId: boss.id });
  items.push(
    ...db
      .select({ id: judgeItems.id })
      .from(judgeItems)
      .where(eq(judgeItems.setId, setId))
      .orderBy(asc(judgeItems.position))
      .all()
      .map((i) => i.id),
  );

  // Another set that rita is not on.
  const other = new TextEncoder().encode(
    JSON.stringify({
      id: "case-Z99",
      model: MODEL,
      strategy: STRATEGY,
      response: "Secret other-set response about F20.0.",
      features: features[0],
    }) + "\n",
  );
  importResponses(db, { setName: "Other set", files: [{ bytes: other, filename: "o.jsonl" }], actorId: boss.id });
  const otherSet = getJudgeSetByName(db, "Other set")!.id;
  drawSample(db, { setId: otherSet, seed: 1, actorId: boss.id });
  startRating(db, { setId: otherSet, raterIds: [ravi.id, rosa.id, roman.id], seed: 1, actorId: boss.id });
  foreignItem = db.select({ id: judgeItems.id }).from(judgeItems).where(eq(judgeItems.setId, otherSet)).get()!.id;

  for (const itemId of items) {
    expect(
      submitRating(db, {
        raterId: ravi.id,
        itemId,
        values: values("differential", "generic_only", OTHER_NOTE, OTHER_CODES),
        version: 0,
      }).ok,
    ).toBe(true);
    expect(
      saveRatingDraft(db, {
        raterId: rosa.id,
        itemId,
        values: values("differential", "generic_only", OTHER_NOTE),
        version: 0,
      }).ok,
    ).toBe(true);
  }
  expect(
    submitRating(db, {
      raterId: rita.id,
      itemId: items[0]!,
      values: values("committed", "none", RITA_NOTE),
      version: 0,
    }).ok,
  ).toBe(true);
  const judgeText = [0, 1, 2]
    .map((i) =>
      JSON.stringify({
        annotation_id: `ann_000${i + 1}`,
        judge_output_raw: `PRIMARY_ANSWER: differential\nINFO_REQUEST: generic_only\nICD_CODES: F41.2\nDIAGNOSIS_NAMES: ${JUDGE_NAMES}`,
      }),
    )
    .join("\n");
  expect(
    importJudgeOutputs(db, { setId, name: JUDGE, filename: "judge.jsonl", text: judgeText, actorId: boss.id }).ok,
  ).toBe(true);

  app = await startApp({ dbPath: tmp.dbPath });
  for (const u of ["rita", "boss", "annie"]) await logIn(u);
}, 60_000);

afterAll(async () => {
  await app?.stop();
  db?.$client.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("a rater's pages and loader data", () => {
  const forbidden = () => [
    MODEL,
    "zorblax",
    STRATEGY,
    "sequential_info",
    "case-Q1",
    "case-Z99",
    RUN,
    "ravi",
    "Quillfeather",
    ravi.id,
    "rosa",
    "Underbridge",
    rosa.id,
    OTHER_NOTE,
    OTHER_CODES,
    JUDGE,
    "kestrel",
    "F41.2",
    "Secret other-set response",
  ];
  const pages = () => [
    "/judge-validation",
    "/judge-validation.data",
    ...items.flatMap((id) => [`/judge-validation/${id}`, `/judge-validation/${id}.data`]),
  ];

  it("show the response text, the rater's own labels and the guide (so the searches below look at real pages)", async () => {
    const html = await text("rita", `/judge-validation/${items[0]}`);
    // The draw shuffles: which text is ann_0001 depends on the seed.
    expect(TEXTS.filter((t) => html.includes(t))).toHaveLength(1);
    expect(html).toContain(RITA_NOTE);
    expect(html).toContain("FEATURE 1: PRIMARY_ANSWER");
    expect(html).toContain("Moderate depressive episode, F32.1. Further evaluation is needed");
    const data = await text("rita", `/judge-validation/${items[1]}.data`);
    expect(TEXTS.filter((t) => data.includes(t))).toHaveLength(1);
    const list = await text("rita", "/judge-validation.data");
    expect(list).toContain("ann_0001");
    expect(list).toContain("ann_0003");
  });

  it("carry no model, strategy, sample id, run, bucket, other rater or judge output", async () => {
    for (const path of pages()) expectAbsent(await text("rita", path), forbidden(), `rita's ${path}`);
  });

  it("carry no derived action of a response the rater has not labelled", async () => {
    for (const id of items.slice(1)) {
      for (const suffix of ["", ".data"]) {
        const body = await text("rita", `/judge-validation/${id}${suffix}`);
        expect(body).not.toMatch(/\b(DIAGNOSE|CLARIFY|ABSTAIN)\b/);
      }
    }
  });

  it("answer 404 for a response not assigned to the rater, exactly as for one that does not exist", async () => {
    for (const suffix of ["", ".data"]) {
      const foreign = await get("rita", `/judge-validation/${foreignItem}${suffix}`);
      const missing = await get("rita", `/judge-validation/987654${suffix}`);
      expect(foreign.status).toBe(404);
      expect(missing.status).toBe(404);
      const [f, m] = [await foreign.text(), await missing.text()].map((t) => t.replace(/nonce="[^"]*"/g, 'nonce=""'));
      expect(f).toBe(m);
      expectAbsent(f, forbidden(), `rita's ${suffix || "page"} for a foreign response`);
    }
    const post = await fetch(`${app.url}/judge-validation/${foreignItem}`, {
      method: "POST",
      headers: { Cookie: cookies.rita! },
      body: new URLSearchParams({
        csrf: csrfs.rita!,
        intent: "draft",
        version: "0",
        values: JSON.stringify(values("none", "none")),
      }),
      redirect: "manual",
    });
    expect(post.status).toBe(404);
  });

  it("refuse a post without the session's CSRF token", async () => {
    const res = await fetch(`${app.url}/judge-validation/${items[1]}`, {
      method: "POST",
      headers: { Cookie: cookies.rita! },
      body: new URLSearchParams({ intent: "draft", version: "0", values: JSON.stringify(values("none", "none")) }),
      redirect: "manual",
    });
    expect(res.status).toBe(403);
  });

  it("save a draft through the page's action", async () => {
    const res = await fetch(`${app.url}/judge-validation/${items[2]}`, {
      method: "POST",
      headers: { Cookie: cookies.rita! },
      body: new URLSearchParams({
        csrf: csrfs.rita!,
        intent: "draft",
        version: "0",
        values: JSON.stringify(values("none", "specific")),
      }),
      redirect: "manual",
    });
    expect(res.status).toBe(200);
    expect(await text("rita", `/judge-validation/${items[2]}.data`)).toContain('"draft"');
  });
});

describe("other roles", () => {
  it("keep raters out of the admin's judge pages and downloads", async () => {
    for (const path of [
      "/admin/judge-validation",
      `/admin/judge-validation/${setId}`,
      `/admin/judge-validation/${setId}/report`,
      `/admin/judge-validation/${setId}/items/${items[0]}`,
      `/admin/judge-validation/${setId}/export/annotator-sheet.csv`,
      `/admin/judge-validation/${setId}/export/key.csv`,
    ])
      expect((await get("rita", path)).status, path).toBe(403);
    expect((await get("annie", "/judge-validation")).status).toBe(403);
    expect((await get(null, "/judge-validation")).status).toBe(302);
  });

  it("give the admin the blinded sheet without the model, and the key with it", async () => {
    const sheet = await text("boss", `/admin/judge-validation/${setId}/export/annotator-sheet.csv`);
    expect(sheet).toContain(TEXTS[2]);
    expectAbsent(sheet, [MODEL, STRATEGY], "the annotator sheet");
    const key = await text("boss", `/admin/judge-validation/${setId}/export/key.csv`);
    expect(key).toContain(MODEL);
    expect(key).toContain(STRATEGY);
  });

  it("let the admin create a set by upload, draw its sample, and refuse a re-draw once rating has started", async () => {
    const form = new FormData();
    form.set("csrf", csrfs.boss!);
    form.set("intent", "import");
    form.set("set", "Uploaded set");
    form.set(
      "file",
      new Blob([JSON.stringify({ id: "u1", response: "I cannot determine a diagnosis." }) + "\n"]),
      "u.jsonl",
    );
    const upload = await fetch(`${app.url}/admin/judge-validation`, {
      method: "POST",
      headers: { Cookie: cookies.boss! },
      body: form,
      redirect: "manual",
    });
    expect(upload.status).toBe(200);
    const uploaded = getJudgeSetByName(db, "Uploaded set")!;
    expect(uploaded.responses).toBe(1);

    const draw = (id: number, seed: string) =>
      fetch(`${app.url}/admin/judge-validation/${id}`, {
        method: "POST",
        headers: { Cookie: cookies.boss! },
        body: new URLSearchParams({ csrf: csrfs.boss!, intent: "draw", seed }),
        redirect: "manual",
      });
    const drawn = await draw(uploaded.id, "7");
    expect(drawn.status).toBe(200);
    expect(await drawn.text()).toContain("Drew the sample: 1 responses (seed 7).");
    expect(getJudgeSetByName(db, "Uploaded set")!).toMatchObject({ seed: 7, items: 1 });

    const refused = await draw(setId, "8");
    expect(await refused.text()).toContain("Rating has started on this set: the sample can no longer be re-drawn");
    expect(getJudgeSetByName(db, "Pilot set")!.seed).toBe(123);
  });

  it("show the admin the report page", async () => {
    const html = await text("boss", `/admin/judge-validation/${setId}/report`);
    expect(html).toContain(JUDGE);
    expect(html).toContain("Human consistency");
  });
});
