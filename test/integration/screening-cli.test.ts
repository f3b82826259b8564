/**
 * The screening commands through runCli (docs/screening.md): screening-import (create, validate, line-numbered errors, exit 2),
 * screening-round, screening-report (text and --json) and screening-release, against freshDb()'s database.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CliIO } from "../../app/cli/command";
import { runCli } from "../../app/cli/index";
import type { Db } from "../../app/platform/db.server";
import { corpus, itemsJsonl, labelsCsv, voteAll } from "../support/screening";
import { freshDb, makeUser } from "../support/db";
import { expectFullDiskRefusal } from "../support/output-faults";

let db: Db;
let dir: string;
let cleanup: () => void;
let ids: string[];

beforeEach(async () => {
  let path: string;
  ({ db, path, cleanup } = freshDb());
  dir = dirname(path);
  ids = [];
  for (const u of ["ann", "bob", "cat"]) ids.push((await makeUser(db, u, ["rater"])).id);
});
afterEach(() => cleanup());

async function run(argv: string[]) {
  let out = "";
  let err = "";
  const io: CliIO = { out: (t) => (out += t), err: (t) => (err += t), readStdin: async () => "", isTTY: false };
  const code = await runCli(argv, io);
  return { code, out, err };
}

function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

const CATS = "anxiety;mood disorders;sleep;other";

describe("screening commands", () => {
  it("each has --help", async () => {
    for (const name of ["screening-import", "screening-round", "screening-report", "screening-release"]) {
      const r = await run([name, "--help"]);
      expect(r.code).toBe(0);
      expect(r.out).toMatch(new RegExp(`^Usage: npm run concord -- ${name} `));
    }
    expect((await run(["--help"])).out).toMatch(/^ {2}screening-round +Open a screening study's next round/m);
  });

  it("screening-import creates the study, reports bad lines with exit 2 and writes nothing, then imports", async () => {
    const none = await run(["screening-import", "--study", "HB", "--items", file("i.jsonl", itemsJsonl())]);
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/give --categories/);

    const items = file("items.jsonl", itemsJsonl());
    const bad = file("bad.csv", labelsCsv() + "ghost,relevant,,,\nr02,relevant,psychosis,,\n");
    const r = await run(["screening-import", "--study", "HB", "--categories", CATS, "--items", items, "--labels", bad]);
    expect(r.code).toBe(2);
    // Refused files create nothing: not the study either (docs/reliability.md, "Checks inside the write").
    expect(r.out).not.toMatch(/Created screening study/);
    expect((db.$client.prepare("select count(*) as n from screening_studies").get() as { n: number }).n).toBe(0);
    expect(r.err).toContain(`${bad}:28: no item "ghost" in the study: import the items first.`);
    expect(r.err).toContain(`${bad}:29: duplicate id "r02" (first on line 3).`);
    expect(r.err).toMatch(/2 errors; nothing was imported\./);
    expect((db.$client.prepare("select count(*) as n from screening_items").get() as { n: number }).n).toBe(0);

    const created = await run(["screening-import", "--study", "HB", "--categories", CATS]);
    expect(created.out).toMatch(/Created screening study "HB" \(4 categories\)/);
    const dry = await run([
      "screening-import",
      "--study",
      "HB",
      "--items",
      items,
      "--labels",
      file("l.csv", labelsCsv()),
      "--dry-run",
    ]);
    expect(dry.code).toBe(0);
    expect(dry.out).toMatch(/Dry run: nothing was written/);
    const ok = await run([
      "screening-import",
      "--study",
      "HB",
      "--items",
      items,
      "--labels",
      file("l.csv", labelsCsv()),
    ]);
    expect(ok.code).toBe(0);
    expect(ok.out).toContain("items (");
    expect(ok.out).toMatch(/26 records, 26 new, 0 changed, 0 unchanged\.\nscreen labels .*26 new/);
    const again = await run(["screening-import", "--study", "HB", "--items", items]);
    expect(again.out).toMatch(/Nothing to change/);
  });

  it("runs a round from the command line: open, report, release", async () => {
    await run([
      "screening-import",
      "--study",
      "HB",
      "--categories",
      CATS,
      "--controls",
      "10",
      "--items",
      file("i.jsonl", itemsJsonl()),
      "--labels",
      file("l.csv", labelsCsv()),
    ]);
    const wrong = await run(["screening-round", "--study", "HB", "--reviewers", "ann,bob", "--seed", "5"]);
    expect(wrong.code).toBe(2);
    expect(wrong.err).toMatch(/Choose exactly 3 reviewers/);
    const opened = await run(["screening-round", "--study", "HB", "--reviewers", "ann,bob,cat", "--seed", "5"]);
    expect(opened.code).toBe(0);
    expect(opened.out).toMatch(/Opened round 1 of "HB": 6 items \+ 10 concealed controls = 16 in one order \(seed 5\)/);

    const early = await run(["screening-release", "--study", "HB", "--out", join(dir, "rel")]);
    expect(early.code).toBe(2);
    expect(early.err).toMatch(/not final: round 1 is still in review/);

    // All three reviewers vote the truth: every miss drawn as a control is included, the rest excluded.
    for (const id of ids) voteAll(db, id, "truthful");
    const report = await run(["screening-report", "--study", "HB"]);
    expect(report.code).toBe(0);
    expect(report.out).toMatch(/^Screening study "HB": 26 items; screen: 4 relevant, 2 borderline, 20 not_relevant\./);
    expect(report.out).toMatch(/Round 1 \(screen, seed 5, reviewers R1, R2, R3\): closed/);
    expect(report.out).toMatch(/reviewed relevant: 4 of 4 included/);
    expect(report.out).toMatch(/relevance AC1: 1\.000/);
    const json = JSON.parse((await run(["screening-report", "--study", "HB", "--json"])).out);
    const round = json.rounds[0];
    const missesDrawn = round.included_controls as number;
    expect(round).toMatchObject({ number: 1, seed: 5, items: 16, candidates: 6, controls: 10, included_candidates: 5 });
    expect(round.control_inclusion_rate).toBeCloseTo(missesDrawn / 10, 12);
    expect(round.decision).toBe(missesDrawn / 10 > 0.05 ? "continue" : "stop");
    expect(json.next.kind).toBe(round.decision === "continue" ? "import_tiers" : "final");

    const partial = await run(["screening-release", "--study", "HB", "--out", join(dir, "rel"), "--allow-incomplete"]);
    expect(partial.code).toBe(0);
    expect(readdirSync(join(dir, "rel")).sort()).toEqual([
      "categories.csv",
      "included.csv",
      "included.jsonl",
      "manifest.json",
      "subset.jsonl",
    ]);
    const manifest = JSON.parse(readFileSync(join(dir, "rel", "manifest.json"), "utf8"));
    expect(manifest.release.included).toBe(5 + missesDrawn);
    expect(manifest.rounds[0].reviewers).toEqual(["R1", "R2", "R3"]);
    expect(readFileSync(join(dir, "rel", "included.csv"), "utf8").split("\r\n")[0]).toBe(
      "id,round,source,was_control,yes_votes,reviewers,consensus_tier,modal_category,votes",
    );
    expect(corpus().length).toBe(26);
    // A full disk: exit 2 naming it, nothing written (docs/reliability.md, "Atomic files").
    await expectFullDiskRefusal(
      run,
      "screening-release",
      (o) => ["screening-release", "--study", "HB", "--out", o, "--allow-incomplete"],
      dir,
      "release",
    );
  });
});
