/**
 * import-gold reads the A/B order seed back from the export's manifest.json (docs/safe-psych.md, "Annotator A and
 * B"): a study exported with `export-gold` and restored with `import-gold` into a fresh database draws every case's
 * "Annotator A/B" order as the original did. Shown end to end through the commands: the original study is annotated
 * by two psychiatrists, exported, imported into a new database, annotated there again with the same labels in the
 * same submission order, and then
 * - every case's stored A/B order (who is A, by username) is the original's,
 * - the export's `annotators {A, B}` — the order as the adjudicator saw it — is byte for byte the original's,
 * - `stats --json` gives the original's agreement figures (its tables are oriented by rater identity, so they are the
 *   same whatever the A/B order; the test shows they survive the restore).
 * Without the manifest the restored study draws a new seed, and the orders differ (the control: with 24 cases, all
 * alike by chance with probability 2^-24).
 *
 * Expected values are the original database's own, as the restore must reproduce them; the draw itself is checked
 * against Python's random in test/integration/study-report-raters.test.ts (annotator_order.py).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../app/cli/index";
import type { CliIO } from "../../app/cli/command";
import type { Db } from "../../app/platform/db.server";
import { autoAssign } from "../../app/annotation/assignments.server";
import { EMPTY_VALUES, submitAnnotation, type AnnotationValues } from "../../app/annotation/annotations.server";
import { importCases, listStudyCases, requireStudyByName } from "../../app/annotation/studies.server";
import { annotatorOrder } from "../../app/adjudication/domain/annotator-order";
import { freshDb, makeUser } from "../support/db";

const N = 24;
const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "concord-restore-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function database(): Db {
  const { db, cleanup } = freshDb();
  cleanups.push(cleanup);
  return db;
}

async function run(argv: string[]) {
  let out = "";
  let err = "";
  const io: CliIO = { out: (t) => (out += t), err: (t) => (err += t), readStdin: async () => "", isTTY: false };
  const code = await runCli(argv, io);
  return { code, out, err };
}

function notes(): Uint8Array {
  const lines = Array.from({ length: N }, (_, i) =>
    JSON.stringify({
      id: `case-${String(i + 1).padStart(3, "0")}`,
      presenting_symptoms: "Low mood for two months.",
      psychiatric_history: "One earlier episode.",
      psychiatric_exam: "Flat affect, slowed speech.",
      psychological_exam: "",
      secondary_diagnoses: "",
    }),
  );
  return new TextEncoder().encode(lines.join("\n") + "\n");
}

/**
 * Case i's labels by (psy1, psy2): agreed on every case (so every case gets its gold label at once), but with
 * different earliest sections on most, so that the export's `annotators {A, B}` shows which one is A.
 */
function labels(i: number): [AnnotationValues, AnnotationValues] {
  const at = (earliestSection: number): AnnotationValues => ({
    ...EMPTY_VALUES,
    sufficiency: "sufficient",
    icd10: i % 4 === 0 ? "F33.1" : "F32.1",
    earliestSection,
  });
  if (i % 5 === 0) return [at(2), at(2)];
  return i % 2 ? [at(1), at(3)] : [at(3), at(2)];
}

/** Annotates every case of the study by psy1 and psy2, the one who submits first alternating with the case. */
async function annotate(db: Db, studyName: string) {
  const users = new Map<string, string>();
  for (const u of ["psy1", "psy2"]) users.set(u, (await makeUser(db, u, ["annotator"])).id);
  const study = requireStudyByName(db, studyName);
  autoAssign(db, { studyId: study.id, annotatorIds: [...users.values()], seed: 5, actorId: null });
  listStudyCases(db, study.id).forEach((c, i) => {
    const values = labels(i);
    for (const k of i % 3 ? [0, 1] : [1, 0]) {
      const r = submitAnnotation(db, {
        userId: users.get(k === 0 ? "psy1" : "psy2")!,
        caseId: c.id,
        values: values[k],
        version: 0,
        now: 1,
      });
      expect(r.ok).toBe(true);
    }
  });
}

/** Who is "Annotator A" on every case, by case id, as stored with the outcome. */
function annotatorAByCase(db: Db): Record<string, string> {
  const rows = db.$client
    .prepare(
      `SELECT c.external_id AS id, o.annotator_order AS ord FROM case_outcomes o JOIN cases c ON c.id = o.case_id
       ORDER BY c.position`,
    )
    .all() as { id: string; ord: string }[];
  const username = db.$client.prepare(
    "SELECT u.username AS u FROM annotations a JOIN users u ON u.id = a.annotator_id WHERE a.id = ?",
  );
  return Object.fromEntries(
    rows.map((r) => [r.id, (username.get((JSON.parse(r.ord) as number[])[0]) as { u: string }).u]),
  );
}

function seedOf(db: Db, name: string): number | null {
  return (
    db.$client.prepare("SELECT annotator_order_seed AS s FROM studies WHERE name = ?").get(name) as {
      s: number | null;
    }
  ).s;
}

/** The figures of `stats --json` that come from the two primary annotations. */
async function agreementFigures(name: string) {
  const r = await run(["stats", "--study", name, "--json"]);
  expect(r.code, r.err).toBe(0);
  const report = JSON.parse(r.out);
  return {
    sufficiency: report.sufficiency,
    earliest_section: report.earliest_section,
    diagnosis: report.diagnosis,
    per_diagnosis: report.per_diagnosis,
    raters: report.raters,
    case_counts: report.case_counts,
  };
}

/** The original study, annotated and exported to a folder. */
async function original() {
  const db = database();
  importCases(db, { studyName: "Pilot", bytes: notes(), filename: "notes.jsonl", actorId: null });
  await annotate(db, "Pilot");
  const out = join(tempDir(), "export");
  const e = await run(["export-gold", "--study", "Pilot", "--out", out]);
  expect(e.code, e.err).toBe(0);
  return {
    out,
    seed: seedOf(db, "Pilot"),
    aByCase: annotatorAByCase(db),
    figures: await agreementFigures("Pilot"),
    dataGt: readFileSync(join(out, "data_gt.json"), "utf8"),
  };
}

describe("import-gold restores the A/B order seed", () => {
  it("a study restored from its export draws every case's A/B order, and stats, as the original", async () => {
    const before = await original();
    expect(before.seed).toEqual(expect.any(Number));
    const manifest = JSON.parse(readFileSync(join(before.out, "manifest.json"), "utf8"));
    expect(manifest.annotator_order_seed).toBe(before.seed);
    // Both orders occur, so the comparison below can tell one seed from another.
    expect(new Set(Object.values(before.aByCase))).toEqual(new Set(["psy1", "psy2"]));

    const db = database();
    const imported = await run(["import-gold", join(before.out, "data_gt.json"), "--study", "Pilot"]);
    expect(imported.code, imported.err).toBe(0);
    expect(imported.err).toBe("");
    expect(imported.out).toContain(`Recorded the export's A/B order seed ${before.seed} for the study.`);
    expect(seedOf(db, "Pilot")).toBe(before.seed);
    // The draw for every case is the original's (0 keeps submission order, 1 swaps).
    for (const id of Object.keys(before.aByCase))
      expect(annotatorOrder(seedOf(db, "Pilot")!, id, [0, 1])).toEqual(annotatorOrder(before.seed!, id, [0, 1]));

    await annotate(db, "Pilot");
    expect(annotatorAByCase(db)).toEqual(before.aByCase);
    expect(await agreementFigures("Pilot")).toEqual(before.figures);
    const again = join(tempDir(), "again");
    const e = await run(["export-gold", "--study", "Pilot", "--out", again]);
    expect(e.code, e.err).toBe(0);
    expect(readFileSync(join(again, "data_gt.json"), "utf8")).toBe(before.dataGt);
    // Importing the same export again changes nothing, and the seed stays.
    const repeat = await run(["import-gold", join(before.out, "data_gt.json"), "--study", "Pilot"]);
    expect(repeat.code, repeat.err).toBe(0);
    expect(seedOf(db, "Pilot")).toBe(before.seed);
  }, 60_000);

  it("without a manifest (or with one that has no seed) the study keeps drawing a new seed, with a notice", async () => {
    const before = await original();
    const bare = join(tempDir(), "data_gt.json");
    writeFileSync(bare, before.dataGt);
    const db = database();
    const r = await run(["import-gold", bare, "--study", "Pilot"]);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toBe(
      `notice: ${bare}: no manifest.json beside it (the reference's files, or an export without its manifest): the study's A/B order will be drawn from a new seed.\n`,
    );
    expect(seedOf(db, "Pilot")).toBeNull();
    await annotate(db, "Pilot");
    expect(seedOf(db, "Pilot")).not.toBe(before.seed);
    expect(annotatorAByCase(db)).not.toEqual(before.aByCase);
    expect(await agreementFigures("Pilot")).toEqual(before.figures);

    // An older export's manifest, written before the seed was recorded.
    const manifestPath = join(before.out, "manifest.json");
    const old = JSON.parse(readFileSync(manifestPath, "utf8"));
    delete old.annotator_order_seed;
    writeFileSync(manifestPath, JSON.stringify(old, null, 2) + "\n");
    const o = await run(["import-gold", join(before.out, "data_gt.json"), "--study", "Older"]);
    expect(o.code, o.err).toBe(0);
    expect(o.err).toBe(
      `notice: ${manifestPath}: no annotator_order_seed (an export made before the seed was recorded): the study's A/B order will be drawn from a new seed.\n`,
    );
    expect(seedOf(db, "Older")).toBeNull();
  }, 60_000);

  it("refuses a malformed seed as FILE:LINE, exit 2, and a study that already has another seed; nothing written", async () => {
    const before = await original();
    const manifestPath = join(before.out, "manifest.json");
    const text = readFileSync(manifestPath, "utf8");
    const line = text.split("\n").findIndex((l) => l.includes('"annotator_order_seed"')) + 1;
    expect(line).toBeGreaterThan(1);
    const db = database();
    for (const bad of ['"12345"', "0", "1.5", "2147483648", "-3"]) {
      writeFileSync(manifestPath, text.replace(/("annotator_order_seed": )\d+/, `$1${bad}`));
      const r = await run(["import-gold", join(before.out, "data_gt.json"), "--study", "Pilot"]);
      expect(r.code).toBe(2);
      expect(r.err).toBe(
        `${manifestPath}:${line}: annotator_order_seed must be a whole number from 1 to 2147483647 or null; got ${bad}. Restore the value export-gold wrote, or set it to null to draw a new A/B order.\n1 error; nothing was imported.\n`,
      );
      expect(r.err).not.toMatch(/\n\s+at /);
    }
    writeFileSync(manifestPath, text.replace('"annotator_order_seed"', '"annotator_order_seed" 5,'));
    const broken = await run(["import-gold", join(before.out, "data_gt.json"), "--study", "Pilot"]);
    expect(broken.code).toBe(2);
    expect(broken.err).toMatch(new RegExp(`^${manifestPath.replace(/[.\\/]/g, "\\$&")}:${line}: not valid JSON`));
    expect(db.$client.prepare("SELECT COUNT(*) AS n FROM studies").get()).toEqual({ n: 0 });

    // A study that already draws from another seed keeps it: the import is refused, nothing changes.
    writeFileSync(manifestPath, text);
    expect((await run(["import-gold", join(before.out, "data_gt.json"), "--study", "Pilot"])).code).toBe(0);
    writeFileSync(manifestPath, text.replace(/("annotator_order_seed": )\d+/, `$1${(before.seed! % 1000) + 1}`));
    const other = await run(["import-gold", join(before.out, "data_gt.json"), "--study", "Pilot"]);
    expect(other.code).toBe(2);
    expect(other.err).toContain(
      `${manifestPath}:${line}: study "Pilot" already draws its A/B order from seed ${before.seed}; this export's manifest records ${(before.seed! % 1000) + 1}.`,
    );
    expect(seedOf(db, "Pilot")).toBe(before.seed);
  }, 60_000);
});
