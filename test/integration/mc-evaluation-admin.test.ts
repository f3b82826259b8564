/**
 * The admin pages of the multiple-choice reports, their loaders called with real sessions: admins only (403 for a
 * rater, the login redirect when logged out), a report folder shown with its tables and figures, files served by
 * their manifest names only, anything else 404.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../app/platform/db.server";
import { buildReport } from "../../app/mc-evaluation/report";
import { writeReport } from "../../app/mc-evaluation/report-files.server";
import { loader as fileLoader } from "../../app/routes/admin.mc-evaluation.$report.$file";
import { loader as indexLoader } from "../../app/routes/admin.mc-evaluation._index";
import { login } from "../../app/accounts/users.server";
import { freshDb, makeUser, TEST_PASSWORD } from "../support/db";

let db: Db;
let cleanup: () => void;
let root: string;
let adminCookie: string;
let raterCookie: string;
const saved = process.env.CONCORD_MC_REPORTS;

async function cookieFor(username: string): Promise<string> {
  const r = await login(db, { username, password: TEST_PASSWORD, ip: "192.0.2.9" });
  if (!r.ok) throw new Error(r.error);
  return r.sessionCookie.split(";")[0]!;
}

const request = (path: string, cookie?: string) =>
  new Request(`http://concord.test${path}`, { headers: cookie ? { Cookie: cookie } : {} });

async function thrown(p: Promise<unknown>): Promise<Response> {
  try {
    await p;
  } catch (e) {
    if (e instanceof Response) return e;
    throw e;
  }
  throw new Error("expected a thrown Response");
}

beforeAll(async () => {
  let path: string;
  ({ db, path, cleanup } = freshDb());
  root = join(path, "..", "mc-reports");
  mkdirSync(root, { recursive: true });
  process.env.CONCORD_MC_REPORTS = root;
  await makeUser(db, "boss", ["admin"]);
  await makeUser(db, "rae", ["rater"]);
  adminCookie = await cookieFor("boss");
  raterCookie = await cookieFor("rae");
  const run = {
    dir: "r",
    run: {
      format: "concord-mc-run/1" as const,
      model: { name: "m", key: "m", base_url: "u" },
      items_format: "mentalbench" as const,
      seed: 0,
      decoding: { temperature: 0 },
      mentalbench_style: "paper",
      few_shot: null,
      prompts: {},
      num_items: 1,
      status: "complete",
      answered: 1,
    },
    records: [
      {
        item_id: "1",
        facts: { kind: "mentalbench" as const, type: "I" as const, disease: "MDD", cluster: null, answer: ["A"] },
        messages: [],
        raw: "A",
        parse: { status: "parsed" as const, letters: ["A"], rule: "letter" as const, reason: null },
        reference_letters: ["A"],
        attempts: 1,
        elapsed_ms: 1,
      },
    ],
    responsesSha256: "",
  };
  await writeReport(buildReport([run], { reps: 10, seed: 0, alpha: 0.05 }), [run], join(root, "first"), {
    version: "test",
    createdAt: "2026-12-01T00:00:00Z",
    figures: true,
  });
  writeFileSync(join(root, "first", "secret.txt"), "not listed");
});

afterAll(() => {
  if (saved === undefined) delete process.env.CONCORD_MC_REPORTS;
  else process.env.CONCORD_MC_REPORTS = saved;
  cleanup();
});

describe("/admin/mc-evaluation", () => {
  it("lists and shows reports to admins", async () => {
    const list = await indexLoader({ request: request("/admin/mc-evaluation", adminCookie), params: {}, context: {} });
    expect(list.reports.rows.map((r) => r.name)).toEqual(["first"]);
    const one = await indexLoader({
      request: request("/admin/mc-evaluation?report=first", adminCookie),
      params: {},
      context: {},
    });
    expect(one.report!.tables.map((t) => t.name)).toContain("mentalbench-table2");
    expect(one.report!.figures).toEqual(["accuracy-by-type.svg"]);
  });

  it("answers 403 to a rater, the login redirect when logged out, 404 for an unknown report", async () => {
    expect(
      (await thrown(indexLoader({ request: request("/admin/mc-evaluation", raterCookie), params: {}, context: {} })))
        .status,
    ).toBe(403);
    expect(
      (await thrown(indexLoader({ request: request("/admin/mc-evaluation"), params: {}, context: {} }))).status,
    ).toBe(302);
    expect(
      (
        await thrown(
          indexLoader({ request: request("/admin/mc-evaluation?report=nope", adminCookie), params: {}, context: {} }),
        )
      ).status,
    ).toBe(404);
    expect(
      (
        await thrown(
          indexLoader({ request: request("/admin/mc-evaluation?report=..%2Fx", adminCookie), params: {}, context: {} }),
        )
      ).status,
    ).toBe(404);
  });

  it("serves only the files the manifest lists", async () => {
    const args = (report: string, file: string, cookie = adminCookie) => ({
      request: request(`/admin/mc-evaluation/${report}/${file}`, cookie),
      params: { report, file },
      context: {},
    });
    const png = await fileLoader(args("first", "accuracy-by-type.png"));
    expect(png.headers.get("Content-Type")).toBe("image/png");
    expect((await fileLoader(args("first", "mentalbench-table2.csv"))).headers.get("Content-Disposition")).toMatch(
      /attachment/,
    );
    expect((await thrown(fileLoader(args("first", "secret.txt")))).status).toBe(404);
    expect((await thrown(fileLoader(args("first", "..")))).status).toBe(404);
    expect((await thrown(fileLoader(args("first", "accuracy-by-type.png", raterCookie)))).status).toBe(403);
  });
});
