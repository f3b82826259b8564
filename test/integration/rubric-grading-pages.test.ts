/**
 * The rubric-grading admin pages on the built app: admins see the sets, Table 1 and the downloads; other roles are
 * refused; no page carries conversation or response text.
 */
import { readFileSync, rmSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openDatabase, type Db } from "../../app/platform/db.server";
import { ensureModel, importEvalSet, requireGradingSet } from "../../app/rubric-grading/sets.server";
import { createUser } from "../../app/accounts/users.server";
import { startApp, tempDbPath, type RunningApp } from "../support/server";
import { appSessions } from "../support/sessions";

const PASSWORD = "grading-pages-1";
const RESPONSE = "Zanzibar-quill answer text";
let app: RunningApp;
let db: Db;
let dir: string;
let setId: number;
const { logIn, get, text } = appSessions(() => app.url, PASSWORD);

beforeAll(async () => {
  const tmp = tempDbPath();
  dir = tmp.dir;
  db = openDatabase(tmp.dbPath);
  await createUser(db, { username: "boss", displayName: "Boss", password: PASSWORD, roles: ["admin"], actorId: null });
  await createUser(db, { username: "rita", displayName: "Rita", password: PASSWORD, roles: ["rater"], actorId: null });
  importEvalSet(db, { name: "psych", text: readFileSync("test/fixtures/rubric-grading/set.jsonl", "utf8") });
  const set = requireGradingSet(db, "psych");
  setId = set.id;
  const cand = ensureModel(db, {
    set,
    role: "candidate",
    name: "cand-a",
    model: "m",
    baseUrl: "http://x",
    temperature: 0,
    maxTokens: 8192,
    maxTokensParam: "max_tokens",
  });
  const judge = ensureModel(db, {
    set,
    role: "judge",
    name: "j1",
    model: "j",
    baseUrl: "http://x",
    temperature: 0,
    maxTokens: 2048,
    maxTokensParam: "max_tokens",
  });
  const convs = db.$client.prepare("SELECT id FROM grading_conversations ORDER BY position").all() as { id: number }[];
  for (const c of convs) {
    const r = db.$client
      .prepare(
        "INSERT INTO grading_responses (candidate_id, conversation_id, text, refusal, created_at) VALUES (?, ?, ?, 0, 0)",
      )
      .run(cand.id, c.id, RESPONSE);
    const n = (
      db.$client.prepare("SELECT COUNT(*) AS n FROM grading_criteria WHERE conversation_id = ?").get(c.id) as {
        n: number;
      }
    ).n;
    for (let i = 0; i < n; i++)
      db.$client
        .prepare(
          "INSERT INTO grading_verdicts (judge_id, response_id, criterion_idx, status, criteria_met, explanation, via, attempts, created_at) VALUES (?, ?, ?, 'parsed', ?, 'Zanzibar explanation', 'sync', 1, 0)",
        )
        .run(judge.id, r.lastInsertRowid, i, i === 0 ? 1 : 0);
  }
  app = await startApp({ dbPath: tmp.dbPath });
  await logIn("boss");
  await logIn("rita");
}, 60_000);

afterAll(async () => {
  await app?.stop();
  db?.$client.close();
  rmSync(dir, { recursive: true, force: true });
});

it("admins browse sets, Table 1 and the files; raters are refused; no clinical text leaks", async () => {
  expect(await text("boss", "/admin/grading")).toContain("psych");
  const page = await text("boss", `/admin/grading/${setId}?policy=exclude_refusals`);
  expect(page).toContain('data-candidate="cand-a"');
  expect(page).toContain("Table 1");
  for (const secret of [RESPONSE, "Zanzibar", "sertraline", "giving birth"]) expect(page).not.toContain(secret);
  const csv = await get("boss", `/admin/grading/${setId}/files/table1.csv`);
  expect(csv.status).toBe(200);
  expect(csv.headers.get("content-type")).toMatch(/text\/csv/);
  expect(await csv.text()).toMatch(/^rank,candidate,panel,/);
  const svg = await get("boss", `/admin/grading/${setId}/files/ranking.svg`);
  expect(await svg.text()).toMatch(/^<svg/);
  expect((await get("boss", `/admin/grading/${setId}/files/nope.csv`)).status).toBe(404);
  expect((await get("boss", "/admin/grading/999999")).status).toBe(404);
  expect((await get("rita", "/admin/grading")).status).toBe(403);
  expect((await get("rita", `/admin/grading/${setId}/files/report.json`)).status).toBe(403);
  expect((await get(null, "/admin/grading")).status).toBe(302);
});
