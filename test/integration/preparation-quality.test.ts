/**
 * The quality check and the preparation report (docs/preparation.md, "Quality" and "The report"). A translated
 * project is stood for by prep_translations rows written directly (source text, translation, back-translation).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { and, eq } from "drizzle-orm";
import { beforeEach, afterEach, describe, expect, it } from "vitest";
import type { Db } from "../../app/platform/db.server";
import type { UserView } from "../../app/accounts/users.server";
import { login } from "../../app/accounts/users.server";
import { prepNoteQuality, prepNotes, prepProjects, prepTranslations } from "../../db/schema";
import { getReviewNote, listReviewerNotes, saveMinimisationReview } from "../../app/preparation/review.server";
import type { MinimisationValues } from "../../app/preparation/domain/review";
import { preparationReport, preparationReportCsv, preparationReportSvg } from "../../app/preparation/report.server";
import { computeProjectQuality } from "../../app/preparation/quality.server";
import { sentenceBleu, sentenceChrf, corpusBleu } from "../../app/stats/mt-metrics";
import { loader as reportLoader } from "../../app/routes/admin.preparation.$projectId_.report";
import { loader as csvLoader } from "../../app/routes/admin.preparation.$projectId_.report[.]csv";
import { action as qualityAction } from "../../app/routes/admin.preparation.$projectId_.quality";
import { cli, tempDirs } from "../support/cli-run";
import { freshDb, makeUser, TEST_PASSWORD } from "../support/db";

const NOTES = join(new URL("../fixtures/preparation/", import.meta.url).pathname, "notes.csv");
const tmp = tempDirs("prep-quality-");

let db: Db;
let cleanup: () => void;
let reviewer: UserView;

const note = (ext: string) => db.select().from(prepNotes).where(eq(prepNotes.externalId, ext)).get()!;
const project = () => db.select().from(prepProjects).where(eq(prepProjects.name, "P")).get()!;

function review(ext: string, values: (proposals: { id: string }[]) => MinimisationValues) {
  const id = listReviewerNotes(db, reviewer.id).find((n) => n.externalId === ext)!.noteId;
  const view = getReviewNote(db, { userId: reviewer.id, noteId: id })!;
  const r = saveMinimisationReview(db, {
    userId: reviewer.id,
    noteId: id,
    values: values(view.note.proposals),
    version: 0,
    intent: "submit",
  });
  expect(r.ok).toBe(true);
}

function translate(ext: string, sections: [string, string | null][]) {
  const id = note(ext).id;
  sections.forEach(([source, back], section) =>
    db
      .insert(prepTranslations)
      .values({ noteId: id, section, sourceText: source, translation: "(English)", backTranslation: back, model: "m" })
      .run(),
  );
}

/** ro-3's final text (the review below): the quality check scores only translations of a note's final text. */
const RO3 = [
  "Pacientă, vârsta 76, pentru tulburări de memorie.",
  "Colecistectomie în x.",
  "Dezorientată temporal.",
  "MMSE 10-18, GDS 5-8.",
] as const;
/** ro-1's final text, every proposal accepted. */
const RO1 = [
  "Pacientă în vârstă de 48-57 de ani, din Sibiu, internată la data de pentru insomnie.",
  "ruda are depresie. Tratată de.",
  "Plânsă, afirmă.",
] as const;

beforeEach(async () => {
  ({ db, cleanup } = freshDb());
  await makeUser(db, "admin", ["admin"]);
  reviewer = await makeUser(db, "one", ["rater"]);
  expect((await cli(["prep-import", "--project", "P", "--language", "ro", NOTES])).code).toBe(0);
  expect((await cli(["prep-reviewers", "--project", "P", "--add", "one"])).code).toBe(0);
  review("ro-1", (ps) => ({
    decisions: Object.fromEntries(ps.map((p) => [p.id, { action: "accept" as const }])),
    missed: [],
    excluded: false,
    exclusionReason: "",
  }));
  review("ro-2", () => ({ decisions: {}, missed: [], excluded: true, exclusionReason: "=HYPERLINK(1) violent case" }));
  review("ro-3", (ps) => ({
    decisions: Object.fromEntries(
      ps.map((p, i) => [
        p.id,
        i === 0
          ? { action: "reject" as const }
          : i === 1
            ? { action: "edit" as const, text: "x" }
            : { action: "accept" as const },
      ]),
    ),
    missed: [],
    excluded: false,
    exclusionReason: "",
  }));
  // ro-1: a faithful round trip, its last section not back-translated yet; ro-3: a poor one that loses MMSE's score.
  translate("ro-1", [
    [RO1[0], RO1[0]],
    [RO1[1], RO1[1]],
    [RO1[2], null],
  ]);
  translate("ro-3", [
    [RO3[0], "Femeie cu probleme de memorie."],
    [RO3[1], "Colecistectomie."],
    [RO3[2], "Dezorientată în timp."],
    [RO3[3], "MMSE din 30, GDS 5-8."],
  ]);
});
afterEach(() => cleanup());

const quality = (ext: string) =>
  db
    .select()
    .from(prepNoteQuality)
    .where(eq(prepNoteQuality.noteId, note(ext).id))
    .get();

describe("prep-quality", () => {
  it("scores sections and notes, flags the poor note with its reasons, and waits for missing back-translations", async () => {
    const r = await cli(["prep-quality", "--project", "P", "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ scored: 1, waiting: 1, needsCorrection: 1 });
    const rows = db
      .select()
      .from(prepTranslations)
      .where(eq(prepTranslations.noteId, note("ro-3").id))
      .all();
    for (const row of rows) {
      expect(row.bleu).toBe(sentenceBleu(row.backTranslation!, row.sourceText));
      expect(row.chrf).toBe(sentenceChrf(row.backTranslation!, row.sourceText));
    }
    const q = quality("ro-3")!;
    expect(q.bleu).toBe(corpusBleu(rows.map((t) => ({ hypothesis: t.backTranslation!, reference: t.sourceText }))));
    expect(q.needsCorrection).toBe(true);
    expect(q.mismatches).toEqual([{ section: 3, test: "MMSE", score: "10" }]);
    expect(q.bleu).toBeGreaterThan(25);
    expect(q.reason).toBe("chrF 45.3 below 50; MMSE 10 missing");
    expect(quality("ro-1")).toBeUndefined();

    db.update(prepTranslations)
      .set({ backTranslation: RO1[2] })
      .where(and(eq(prepTranslations.noteId, note("ro-1").id), eq(prepTranslations.section, 2)))
      .run();
    expect(JSON.parse((await cli(["prep-quality", "--project", "P", "--json"])).out)).toMatchObject({
      scored: 2,
      waiting: 0,
    });
    expect(quality("ro-1")).toMatchObject({ needsCorrection: false, reason: "", mismatches: [] });
    expect(quality("ro-1")!.bleu).toBeCloseTo(100, 9);
  });

  it("scores again, in the write's transaction, a note whose back-translation changed after the scores were computed", () => {
    const id = note("ro-3").id;
    const original = db.transaction.bind(db);
    // The scores are computed before the write; a translation runner writes a new back-translation just before it.
    (db as { transaction: unknown }).transaction = (fn: (tx: unknown) => unknown, options: unknown) => {
      db.update(prepTranslations)
        .set({ backTranslation: RO3[0] })
        .where(and(eq(prepTranslations.noteId, id), eq(prepTranslations.section, 0)))
        .run();
      return (original as (f: unknown, o: unknown) => unknown)(fn, options);
    };
    try {
      computeProjectQuality(db, { projectId: project().id, actorId: null });
    } finally {
      (db as { transaction: unknown }).transaction = original;
    }
    const row = db
      .select()
      .from(prepTranslations)
      .where(and(eq(prepTranslations.noteId, id), eq(prepTranslations.section, 0)))
      .get()!;
    expect(row.bleu).toBeCloseTo(100, 9);
  });

  it("stores the thresholds and test list given, and uses them on the next run", async () => {
    const dir = tmp();
    writeFileSync(join(dir, "tests.txt"), "# our tests\nGDS\n");
    const r = await cli([
      "prep-quality",
      "--project",
      "P",
      "--min-bleu",
      "none",
      "--min-chrf",
      "10",
      "--tests",
      join(dir, "tests.txt"),
    ]);
    expect(r.code).toBe(0);
    expect(project().settings.quality).toEqual({ minBleu: null, minChrf: 10, minComet: null, tests: ["GDS"] });
    expect(quality("ro-3")).toMatchObject({ needsCorrection: false, mismatches: [] });
    expect(JSON.parse((await cli(["prep-quality", "--project", "P", "--json"])).out).settings.tests).toEqual(["GDS"]);
  });

  it("refuses a bad threshold with exit 2 and changes nothing", async () => {
    for (const args of [
      ["--min-bleu", "abc"],
      ["--min-bleu", "200"],
    ]) {
      const r = await cli(["prep-quality", "--project", "P", ...args]);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/--min-bleu must be/);
      expect(r.err).not.toMatch(/\n\s+at /);
    }
    expect(project().settings.quality).toBeUndefined();
    expect(quality("ro-3")).toBeUndefined();
  });
});

describe("prep-comet", () => {
  it("refuses a file with any bad line, by FILE:LINE, with both lines of a duplicate, and writes nothing", async () => {
    const dir = tmp();
    const file = join(dir, "comet.csv");
    writeFileSync(
      file,
      [
        "note_id,section,score",
        "ro-3,0,0.81",
        "ro-9,0,0.5",
        "ro-3,7,0.5",
        "ro-3,1,abc",
        "ro-3,0,0.81",
        "ro-1,mental_status,0.7",
        "",
      ].join("\n"),
    );
    const r = await cli(["prep-comet", "--project", "P", file]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${file}:5: score must be a number`);
    expect(r.err).toContain(`${file}:6: note "ro-3" section 0 is given twice: on line 2 and on line 6`);
    expect(r.err).toMatch(/nothing was imported/);
    // The rows' own problems are reported first; fixed, the notes and sections are checked against the project.
    writeFileSync(
      file,
      [
        "note_id,section,score",
        "ro-3,0,0.81",
        "ro-9,0,0.5",
        "ro-3,7,0.5",
        "ro-3,psychiatric_exam,0.7",
        "ro-3,2,0.6",
        "",
      ].join("\n"),
    );
    const again = await cli(["prep-comet", "--project", "P", file]);
    expect(again.code).toBe(2);
    expect(again.err).toContain(`${file}:3: no note "ro-9" in this project`);
    expect(again.err).toContain(`${file}:4: note "ro-3" has no translated section 7`);
    expect(again.err).toContain(`${file}:6: note "ro-3" section 2 is given twice: on line 5 and on line 6`);
    expect(
      db
        .select()
        .from(prepTranslations)
        .all()
        .every((t) => t.comet === null),
    ).toBe(true);
  });

  it("passes the import contract's byte checks first: bad UTF-8, a NUL byte, an empty file", async () => {
    const dir = tmp();
    const cases: [string, Buffer, RegExp][] = [
      [
        "bad.csv",
        Buffer.concat([Buffer.from("note_id,section,score\nro-3,0,0."), Buffer.from([0xff, 0xfe]), Buffer.from("\n")]),
        /bad\.csv:2: .*UTF-8/,
      ],
      ["nul.csv", Buffer.from("note_id,section,score\nro-3\u0000,0,0.5\n"), /nul\.csv:2: /],
      ["empty.jsonl", Buffer.alloc(0), /empty\.jsonl: /],
    ];
    for (const [name, bytes, message] of cases) {
      writeFileSync(join(dir, name), bytes);
      const r = await cli(["prep-comet", "--project", "P", join(dir, name)]);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(message);
    }
    expect(
      db
        .select()
        .from(prepTranslations)
        .all()
        .every((t) => t.comet === null),
    ).toBe(true);
  });

  it("imports CSV or JSONL scores, which prep-quality then takes into the verdict", async () => {
    const dir = tmp();
    const file = join(dir, "comet.jsonl");
    writeFileSync(
      file,
      ["ro-3", "ro-3", "ro-3", "ro-3"]
        .map((id, s) => JSON.stringify({ note_id: id, section: s, score: 0.7 + s * 0.01 }))
        .join("\n") + "\n",
    );
    const r = await cli(["prep-comet", "--project", "P", file]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/Imported 4 COMET scores of 1 notes/);
    await cli(["prep-quality", "--project", "P", "--min-comet", "0.8"]);
    expect(quality("ro-3")!.comet).toBeCloseTo(0.715, 12);
    expect(quality("ro-3")!.reason).toContain("COMET 0.715 below 0.8");
  });
});

describe("the preparation report", () => {
  it("counts cases, decisions by category, exclusions, scores and corrections", async () => {
    await cli(["prep-quality", "--project", "P"]);
    db.update(prepTranslations)
      .set({ correctedText: "MMSE 10-18/30, GDS 5-8." })
      .where(and(eq(prepTranslations.noteId, note("ro-3").id), eq(prepTranslations.section, 3)))
      .run();
    const r = preparationReport(db, project().id)!;
    expect(r.cases).toEqual({ total: 3, reviewed: 2, excluded: 1, pending: 0, differ: 0 });
    expect(r.exclusions).toEqual([{ note: "ro-2", reason: "=HYPERLINK(1) violent case" }]);
    const decided = r.proposals.reduce((a, p) => a + p.accepted + p.edited + p.rejected, 0);
    expect(decided).toBe(note("ro-1").proposals.length + note("ro-3").proposals.length);
    expect(r.proposals.reduce((a, p) => a + p.rejected, 0)).toBe(1);
    expect(r.proposals.reduce((a, p) => a + p.edited, 0)).toBe(1);
    expect(r.scores[0]).toMatchObject({ metric: "BLEU", n: 1 });
    expect(r.scores[0]!.bins.reduce((a, b) => a + b.count, 0)).toBe(1);
    expect(r.quality).toEqual({
      scored: 1,
      needsCorrection: 1,
      corrected: 1,
      notesWithMismatches: 1,
      mismatches: 1,
      mismatchesCorrected: 1,
    });
    const csv = preparationReportCsv(db, project().id)!;
    expect(csv).toContain(`exclusion,ro-2,reason,'=HYPERLINK(1) violent case`);
    expect(csv).not.toMatch(/,=HYPERLINK/);
    expect(await preparationReportSvg(db, project().id)).toMatch(/^<svg/);
  });

  it("is admin only: anyone else is answered 404, the CSV too", async () => {
    const get = async (username: string, path: string) => {
      const r = await login(db, { username, password: TEST_PASSWORD, ip: "192.0.2.1" });
      if (!r.ok) throw new Error(r.error);
      return new Request(`http://concord.test${path}`, { headers: { Cookie: r.sessionCookie.split(";")[0]! } });
    };
    const id = String(project().id);
    const status = async (p: Promise<unknown>) => {
      try {
        await p;
        return 200;
      } catch (e) {
        return (e as Response).status;
      }
    };
    expect(
      await status(
        reportLoader({
          request: await get("one", `/admin/preparation/${id}/report`),
          params: { projectId: id },
          context: {},
        }),
      ),
    ).toBe(404);
    expect(
      await status(
        csvLoader({
          request: await get("one", `/admin/preparation/${id}/report.csv`),
          params: { projectId: id },
          context: {},
        }),
      ),
    ).toBe(404);
    const ok = (await reportLoader({
      request: await get("admin", `/admin/preparation/${id}/report`),
      params: { projectId: id },
      context: {},
    })) as {
      report: { cases: { total: number } };
    };
    expect(ok.report.cases.total).toBe(3);
    const res = (await csvLoader({
      request: await get("admin", `/admin/preparation/${id}/report.csv`),
      params: { projectId: id },
      context: {},
    })) as Response;
    expect(res.headers.get("Content-Type")).toMatch(/text\/csv/);
    expect(await res.text()).toMatch(/^part,item,measure,value\r\n/);
  });

  it("the page's button scores the project with the thresholds it was given", async () => {
    const r = await login(db, { username: "admin", password: TEST_PASSWORD, ip: "192.0.2.1" });
    if (!r.ok) throw new Error(r.error);
    const cookie = r.sessionCookie.split(";")[0]!;
    const { requireUser } = await import("../../app/accounts/guard.server");
    const user = await requireUser(new Request("http://concord.test/", { headers: { Cookie: cookie } }));
    const id = String(project().id);
    const request = new Request(`http://concord.test/admin/preparation/${id}/quality`, {
      method: "POST",
      headers: { Cookie: cookie },
      body: new URLSearchParams({
        csrf: user.csrf,
        intent: "quality",
        minBleu: "",
        minChrf: "",
        minComet: "",
        tests: "MMSE",
      }),
    });
    const answer = await qualityAction({ request, params: { projectId: id }, context: {} });
    expect(answer.ok).toBe(true);
    expect(answer.summary).toMatch(/^1 notes scored, 1 needing correction, 1 waiting/);
    expect(quality("ro-3")!.reason).toBe("MMSE 10 missing");
    expect(project().settings.quality).toEqual({ minBleu: null, minChrf: null, minComet: null, tests: ["MMSE"] });
  });
});
