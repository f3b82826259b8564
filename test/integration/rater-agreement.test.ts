/**
 * Agreement per pair and over time (docs/statistics.md, "Agreement per pair and over time") from a real database:
 * the two studies of test/fixtures/study-report/rater_agreement.py (expected values computed there with numpy and
 * scipy, independently of Concord) annotated through the annotation service at the fixture's submission times, then
 * read through `stats --pairwise --over-time`, its CSV files, and the gold export's manifest; and, against the built
 * app, only an admin gets the new page parts and downloads (annotators and adjudicators get 403 with nothing of
 * them). The HTTP part needs `npx remix vite:build` first.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../app/cli/index";
import type { CliIO } from "../../app/cli/command";
import { openDatabase, setDb, type Db } from "../../app/platform/db.server";
import { createUser } from "../../app/accounts/users.server";
import { exportGold } from "../../app/gold/gold-export.server";
import { jsonDumpsIndent2 } from "../../app/python-compat/json";
import { startApp, tempDbPath, type RunningApp } from "../support/server";
import { appSessions, expectAbsent } from "../support/sessions";
import { expectAgreement, raterFixture, seedStudy } from "../support/rater-agreement";
import { expectFullDiskRefusal } from "../support/output-faults";

const PASSWORD = "rater-agreement-password-1";

async function cli(args: string[]) {
  let out = "";
  let err = "";
  const io: CliIO = { out: (t) => (out += t), err: (t) => (err += t), readStdin: async () => "", isTTY: false };
  const code = await runCli(args, io);
  return { code, out, err };
}

let db: Db;
let dir: string;
let dbPath: string;
const studyIds: Record<"four" | "two", number> = { four: 0, two: 0 };

beforeAll(async () => {
  ({ dir, dbPath } = tempDbPath());
  db = openDatabase(dbPath);
  setDb(db);
  const users = new Map<string, string>();
  const make = (username: string, roles: ("annotator" | "adjudicator" | "admin")[]) =>
    createUser(db, { username, password: PASSWORD, roles, actorId: null });
  const made = await Promise.all([
    ...["ana", "ben", "cleo", "dev"].map((u) => make(u, ["annotator"])),
    make("judy", ["adjudicator"]),
    make("boss", ["admin"]),
  ]);
  for (const u of made) users.set(u.username, u.id);
  studyIds.four = seedStudy(db, "Four", raterFixture.four, users);
  studyIds.two = seedStudy(db, "Two", raterFixture.two, users);
}, 120_000);

afterAll(() => {
  setDb(undefined);
  db?.$client.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("stats --pairwise --over-time", () => {
  it.each(["four", "two"] as const)("gives the %s-annotator study's figures of rater_agreement.py", async (name) => {
    const d = raterFixture[name];
    const study = name === "four" ? "Four" : "Two";
    const r = await cli([
      "stats",
      "--study",
      study,
      "--pairwise",
      "--over-time",
      "--batch-size",
      String(d.batch_size),
      "--json",
    ]);
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: "" });
    const json = JSON.parse(r.out);
    expect(json.study).toEqual({ id: studyIds[name], name: study });
    expect(json.rule).toBe(name === "four" ? "pair_order" : "rater_identity");
    expect(json.over_time).toMatchObject({ timezone: "UTC", batch_size: d.batch_size, n_untimed: 0 });
    expectAgreement(json, d);
  });

  it("prints only the part asked for, and text by default", async () => {
    const pairwise = JSON.parse((await cli(["stats", "--study", "Four", "--pairwise", "--json"])).out);
    expect(Object.keys(pairwise)).toEqual(["study", "rule", "annotators", "reasons", "pairwise"]);
    const text = await cli(["stats", "--study", "Four", "--over-time"]);
    expect(text.code).toBe(0);
    expect(text.out).toContain("Over time");
    expect(text.out).not.toContain("Per pair of annotators");
    expect(text.out).toMatch(/2025-W02 +2025-01-06 +0 /);
    expect(text.out).toContain(`by batch of 50 cases`);
    const both = await cli(["stats", "--study", "Four", "--pairwise", "--over-time", "--md"]);
    expect(both.out).toMatch(/\| ana – dev \| 0 \| n\/a \| n\/a \| n\/a \|/);
  });

  it("writes the CSV files into a folder, again into the same folder, but never over other files", async () => {
    const parent = mkdtempSync(join(tmpdir(), "concord-ra-"));
    try {
      const out = join(parent, "agreement");
      const first = await cli(["stats", "--study", "Two", "--csv", out, "--batch-size", "5"]);
      expect(first.code, first.err).toBe(0);
      expect(readdirSync(out).sort()).toEqual([
        "diagnosis-by-batch.csv",
        "diagnosis-by-week.csv",
        "pairwise-diagnosis.csv",
        "pairwise-sufficiency.csv",
        "sufficiency-by-batch.csv",
        "sufficiency-by-week.csv",
      ]);
      const rows = readFileSync(join(out, "sufficiency-by-batch.csv"), "utf8").trimEnd().split("\r\n");
      expect(rows[0]).toBe("batch,first,last,from,to,n_cases,statistic,n,n_agreed,value,se,ci_low,ci_high");
      // Three statistics per batch; the value column is the fixture's, rounded to 6 digits as every chart CSV is.
      expect(rows).toHaveLength(1 + 3 * raterFixture.two.expected.by_batch.length);
      const ac1 = rows[3]!.split(",");
      expect(ac1[6]).toBe("Gwet's AC1");
      expect(Number(ac1[9])).toBeCloseTo(raterFixture.two.expected.by_batch[0]!.sufficiency.gwet_ac1.value!, 6);

      const again = await cli(["stats", "--study", "Two", "--pairwise", "--csv", out]);
      expect(again.code, again.err).toBe(0);
      expect(readdirSync(out).sort()).toEqual(["pairwise-diagnosis.csv", "pairwise-sufficiency.csv"]);

      const mine = join(parent, "mine");
      mkdirSync(mine);
      writeFileSync(join(mine, "notes.txt"), "keep me");
      const refused = await cli(["stats", "--study", "Two", "--csv", mine]);
      expect(refused.code).toBe(2);
      expect(refused.err.trim().split("\n")).toHaveLength(1);
      expect(refused.err).toMatch(/holds other files \(notes\.txt\)/);
      expect(readFileSync(join(mine, "notes.txt"), "utf8")).toBe("keep me");
      // A full disk: exit 2 naming it, nothing written (docs/reliability.md, "Atomic files").
      await expectFullDiskRefusal(cli, "stats", (o) => ["stats", "--study", "Two", "--csv", o], parent, "agreement");
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it.each([
    [["--over-time", "--batch-size", "1"], /--batch-size must be a whole number of at least 2, got "1"/],
    [["--over-time", "--batch-size", "ten"], /got "ten"/],
    [["--pairwise", "--batch-size", "10"], /--batch-size applies to --over-time/],
    [["--pairwise", "--json", "--md"], /give --json or --md, not both/],
    [["--pairwise", "--csv", "x", "--json"], /not several/],
  ])("refuses %j with one line and exit 2", async (args, message) => {
    const r = await cli(["stats", "--study", "Four", ...args]);
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err.trim().split("\n")).toHaveLength(1);
    expect(r.err).toMatch(message);
    expect(existsSync("x")).toBe(false);
  });

  it("puts the figures in the gold manifest under rater_agreement and writes everything else as before", () => {
    const result = exportGold(db, { studyId: studyIds.four, allowPartial: true, now: new Date(0) });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const text = result.files["manifest.json"];
    const manifest = JSON.parse(text);
    expect(manifest.rater_agreement.over_time.batch_size).toBe(50);
    // The export carries no identities: the annotators are pseudonyms in username order.
    for (const username of ["ana", "ben", "cleo", "dev"]) expect(text).not.toContain(`"${username}`);
    const pseudonym = (u: string) => `Annotator ${raterFixture.four.expected.annotators.indexOf(u) + 1}`;
    const expected = raterFixture.four.expected;
    // The default batch size differs from the fixture's: compare the pairs and the weeks, which do not depend on it.
    expectAgreement(
      { ...manifest.rater_agreement, over_time: { ...manifest.rater_agreement.over_time, by_batch: [] } },
      {
        ...raterFixture.four,
        expected: {
          ...expected,
          annotators: expected.annotators.map(pseudonym),
          pairs: expected.pairs.map((p) => ({
            ...p,
            annotators: [pseudonym(p.annotators[0]), pseudonym(p.annotators[1])],
          })),
          by_batch: [],
        },
      },
    );
    // Coefficients are Python floats (1.0, not 1), as json.dumps writes them.
    expect(text).toMatch(/"value": 1\.0,/);
    // Without the new key, the manifest is byte for byte what the integer-only writer makes of it.
    const { rater_agreement: _dropped, ...rest } = manifest;
    const start = text.indexOf('  "rater_agreement": ');
    const end = text.indexOf('  "files": ');
    expect(text.slice(0, start) + text.slice(end)).toBe(jsonDumpsIndent2(rest) + "\n");
  });
});

describe("blinding of the new page parts and downloads (built app)", () => {
  let app: RunningApp;
  const { logIn, get, text } = appSessions(() => app.url, PASSWORD);

  beforeAll(async () => {
    app = await startApp({ dbPath });
    for (const u of ["ana", "judy", "boss"]) await logIn(u);
  }, 60_000);
  afterAll(async () => {
    await app?.stop();
  });

  const paths = (id: number) => [
    `/admin/studies/${id}/stats`,
    `/admin/studies/${id}/stats?batch=5`,
    `/admin/studies/${id}/stats.data`,
    `/admin/studies/${id}/stats/rater-agreement.json`,
    ...["pairwise-sufficiency", "diagnosis-by-week", "sufficiency-by-batch"].flatMap((c) =>
      ["csv", "svg", "png"].map((ext) => `/admin/studies/${id}/stats/${c}.${ext}?batch=5`),
    ),
    // The page's chart images (admin.studies.$studyId.stats_.charts.$chart.ts).
    ...["pairwise-sufficiency", "sufficiency-by-batch"].map(
      (c) => `/admin/studies/${id}/stats/charts/${c}.svg?batch=5`,
    ),
    `/admin/studies/${id}/export?file=manifest.json&allowPartial=1`,
  ];

  it("answers 403 to an annotator and an adjudicator, with nothing of the figures", async () => {
    for (const user of ["ana", "judy"]) {
      for (const path of paths(studyIds.four)) {
        const res = await get(user, path);
        const body = await res.text();
        expect(res.status, `${user} ${path}`).toBe(403);
        expectAbsent(body, ["ana – ben", "rater_agreement", "Gwet", "2025-W0", "pairwise"], `${user}'s ${path}`);
      }
    }
    expect((await get(null, `/admin/studies/${studyIds.four}/stats/rater-agreement.json`)).status).toBe(302);
  });

  it("gives the admin the tables, the charts and their downloads", async () => {
    const page = await text("boss", `/admin/studies/${studyIds.four}/stats?batch=5`);
    for (const id of ["pairwise-agreement", "pairwise-matrix-sufficiency", "by-week-diagnosis", "by-batch-sufficiency"])
      expect(page).toContain(`data-testid="${id}"`);
    for (const chart of ["pairwise-sufficiency", "pairwise-diagnosis", "sufficiency-by-week", "diagnosis-by-batch"])
      expect(page).toContain(`data-chart="${chart}"`);
    expect(page).toContain(`/stats/sufficiency-by-batch.csv?batch=5`);
    // Each chart an image of the page's own chart: not in the page, served once asked.
    expect(page).not.toContain("<svg");
    const src = /src="([^"]*\/stats\/charts\/sufficiency-by-batch\.svg[^"]*)"/.exec(page)![1]!.replace(/&amp;/g, "&");
    const chart = await get("boss", src);
    expect(chart.status).toBe(200);
    expect(chart.headers.get("content-type")).toMatch(/^image\/svg\+xml/);
    expect(chart.headers.get("cache-control")).toBe("private, max-age=86400");
    expect(await chart.text()).toMatch(/^<svg/);
    expect((await get("boss", `/admin/studies/${studyIds.four}/stats/charts/nope.svg`)).status).toBe(404);
    // Four annotators: the pooled Cohen's κ is n/a, and the order-free pooled figures are on the page instead.
    expect(page).toContain('data-testid="order-free-agreement"');
    expect(page).toMatch(/Fleiss&#x27; κ|Fleiss' κ/);
    expect(page).not.toContain("see raters.pairs");
    const csv = await text("boss", `/admin/studies/${studyIds.four}/stats/sufficiency-by-batch.csv?batch=5`);
    expect(csv.split("\r\n").filter(Boolean)).toHaveLength(1 + 3 * Math.ceil(34 / 5));
    const json = JSON.parse(await text("boss", `/admin/studies/${studyIds.four}/stats/rater-agreement.json?batch=8`));
    expectAgreement(json, raterFixture.four);
    expect((await get("boss", `/admin/studies/${studyIds.four}/stats/rater-agreement.json?batch=1`)).status).toBe(400);
    const manifest = JSON.parse(
      await text("boss", `/admin/studies/${studyIds.four}/export?file=manifest.json&allowPartial=1`),
    );
    expect(manifest.rater_agreement.pairwise.pairs).toHaveLength(6);
  });

  it("keeps a refused batch size in the field with its error", async () => {
    const page = await text("boss", `/admin/studies/${studyIds.four}/stats?batch=1`);
    expect(page).toMatch(/Cases per batch must be a whole number of at least 2; showing the page's own batches/);
    expect(page).toMatch(/name="batch"[^>]*value="1"|value="1"[^>]*name="batch"/);
  });
});
