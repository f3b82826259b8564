/**
 * Probes of test–retest blinding as an annotator would make them (docs/rater-quality.md, "Blinding"), through the
 * annotator's own routes and services, in a study with rater quality on (retest 0.2, wash-out 5 cases, calibration
 * 0.1): a case number typed into the address answers 404 for every item; a retest or calibration case is listed,
 * saved and locked as an ordinary case would be at that point; a retest is compared with its first label as it stood
 * when the retest entered the queue, whatever the annotator does to the first label afterwards; a new retest is not
 * placed where the annotator goes next; an empty test–retest report speaks of retests.
 */
import { and, eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assignments, cases, qualityItems } from "../../db/schema";
import type { Db } from "../../app/platform/db.server";
import type { UserView } from "../../app/accounts/users.server";
import { runCli } from "../../app/cli/index";
import type { CliIO } from "../../app/cli/command";
import { autoAssign } from "../../app/annotation/assignments.server";
import { importCases, listStudyCases, requireStudyByName } from "../../app/annotation/studies.server";
import {
  addCalibrationCase,
  getRaterQualityReport,
  raterQualityCsv,
  setQualitySettings,
} from "../../app/annotation/rater-quality.server";
import { QUALITY_OFF, type QualitySettings } from "../../app/annotation/domain/rater-quality";
import { OPEN_AHEAD } from "../../app/work-items/domain/rater-quality";
import type { AnnotationValues, MyCaseRow } from "../../app/annotation/annotations.server";
import { loader as listLoader } from "../../app/routes/annotate._index";
import { action as caseAction, loader as caseLoader } from "../../app/routes/annotate.$caseId";
import { freshDb, makeUser } from "../support/db";
import { bodyOf, signedIn } from "../support/route-calls";
import { smallStudyJsonl } from "../support/fixtures";
import { cloneDb, sufficient } from "../support/labels";

let template: { db: Db; cleanup: () => void };
let db: Db;
let cleanup: () => void;
const users: Record<string, UserView> = {};
const sessions: Record<string, Awaited<ReturnType<typeof signedIn>>> = {};
let studyId: number;

const SETTINGS: QualitySettings = {
  ...QUALITY_OFF,
  retestFraction: 0.2,
  washoutCases: 5,
  calibrationRate: 0.1,
  seed: 11,
};

/**
 * Three annotators over 30 cases (two per case, so each has 20 with varying partners), 6 calibration cases of an
 * earlier study, the annotators signed in; each test works on a copy.
 */
beforeAll(async () => {
  template = freshDb();
  const tdb = template.db;
  for (const name of ["ann1", "ann2", "ann3"]) users[name] = await makeUser(tdb, name, ["annotator"]);
  importCases(tdb, { studyName: "Earlier", bytes: smallStudyJsonl(6), filename: "e.jsonl", actorId: null });
  importCases(tdb, { studyName: "Main", bytes: smallStudyJsonl(30), filename: "m.jsonl", actorId: null });
  studyId = requireStudyByName(tdb, "Main").id;
  autoAssign(tdb, { studyId, annotatorIds: Object.values(users).map((u) => u.id), seed: 3, actorId: null });
  for (let i = 1; i <= 6; i++)
    addCalibrationCase(tdb, {
      studyId,
      actorId: null,
      entry: {
        sourceStudy: "Earlier",
        externalId: `case-0${i}`,
        purpose: "calibration",
        rationale: "",
        reference: { sufficiency: "sufficient", icd10: "F32.1", earliestSection: 2, missingInfo: [], missingOther: "" },
      },
    });
  for (const name of Object.keys(users)) sessions[name] = await signedIn(tdb, name);
}, 120_000);
afterAll(() => template.cleanup());
beforeEach(() => ({ db, cleanup } = cloneDb(template.db)));
afterEach(() => cleanup());

/** The study's rater quality: the settings above, with `settings` over them. */
function setup(settings: Partial<QualitySettings> = {}) {
  setQualitySettings(db, { studyId, settings: { ...SETTINGS, ...settings }, actorId: null });
  return { users, study: { id: studyId } };
}

/** An annotator's session on the annotator's routes: the list, a case page, and a save, as the browser makes them. */
function annotator(username: string) {
  const { user, post } = sessions[username]!;
  const cookie = post("/", {}).headers.get("Cookie")!;
  const get = (path: string) => new Request(`http://concord.test${path}`, { headers: { Cookie: cookie } });
  /** The route's answer: its data, or the status of the Response it threw. */
  const call = async <T>(fn: () => Promise<T>): Promise<{ status: number; data?: T }> => {
    try {
      return { status: 200, data: await fn() };
    } catch (e) {
      if (e instanceof Response) return { status: e.status };
      throw e;
    }
  };
  return {
    user,
    list: async () =>
      (await listLoader({ request: get("/annotate"), params: {}, context: {} } as never)).window.rows as MyCaseRow[],
    page: (key: string) =>
      call(() => caseLoader({ request: get(`/annotate/${key}`), params: { caseId: key }, context: {} } as never)),
    save: async (key: string, intent: "draft" | "submit", values: AnnotationValues, version: number) => {
      const out = await call(() =>
        caseAction({
          request: post(`/annotate/${key}`, { intent, version: String(version), values: JSON.stringify(values) }),
          params: { caseId: key },
          context: {},
        } as never),
      );
      if (out.status !== 200) return { status: out.status, body: {} as Record<string, unknown> };
      return bodyOf(out.data);
    },
  };
}
type Session = ReturnType<typeof annotator>;

/**
 * Submits the page `key` as the workspace does: with the version the page read. A moment apart from the one before,
 * as a person's submissions are: the wash-out counts submissions made strictly after the first label.
 */
async function submit(s: Session, key: string, values: AnnotationValues) {
  await new Promise((resolve) => setTimeout(resolve, 2));
  const page = await s.page(key);
  expect(page.status).toBe(200);
  const r = await s.save(key, "submit", values, (page.data as { version: number }).version);
  expect(r.body.ok, JSON.stringify(r.body)).toBe(true);
  return r.body as { ok: true; state: string; version: number };
}

/** Which quality item (if any) a list key is, as the database knows it; never sent to an annotator. */
function kindOf(key: string): string {
  return (
    db.select({ kind: qualityItems.kind }).from(qualityItems).where(eq(qualityItems.itemKey, key)).get()?.kind ?? "case"
  );
}

describe("a case number in the address", () => {
  it("answers 404 for every case, ordinary or not, in a study with rater quality, on the page and the save", async () => {
    const { users, study } = setup();
    const s = annotator("ann1");
    // Work through cases until a retest and a calibration case are in the list (where they are placed is drawn at
    // random, so a fixed count of submissions is not always enough).
    let rows = await s.list();
    for (let i = 0; i < 30; i++) {
      if (rows.some((r) => kindOf(r.key) === "retest") && rows.some((r) => kindOf(r.key) === "calibration")) break;
      const open = rows.find((r) => r.state === "not_started");
      if (!open) break;
      await submit(s, open.key, sufficient("F32.1", 2));
      rows = await s.list();
    }
    expect(rows.some((r) => kindOf(r.key) === "retest")).toBe(true);
    expect(rows.some((r) => kindOf(r.key) === "calibration")).toBe(true);
    // Every case of every study, by its number: the assigned ones, the ones behind retests and calibration items.
    const all = db.select({ id: cases.id }).from(cases).all();
    let probes = 0;
    for (const { id } of all) {
      expect((await s.page(String(id))).status, `GET /annotate/${id}`).toBe(404);
      expect((await s.save(String(id), "draft", sufficient("F32.1", 2), 0)).status, `POST /annotate/${id}`).toBe(404);
      probes += 2;
    }
    expect(probes).toBe(2 * 36);
    // Every row is addressed by an opaque key of one form, and opens by it.
    for (const r of rows) {
      expect(r.key).toMatch(/^k[0-9a-f]{12}$/);
      expect((await s.page(r.key)).status).toBe(200);
    }
    // Without rater quality the same case numbers open (the study's own ids are not secret there).
    setQualitySettings(db, { studyId: study.id, settings: QUALITY_OFF, actorId: null });
    const assigned = db
      .select({ caseId: assignments.caseId })
      .from(assignments)
      .where(eq(assignments.annotatorId, users.ann1!.id))
      .all();
    expect((await s.page(String(assigned[0]!.caseId))).status).toBe(200);
  });
});

describe("the state column and the save path", () => {
  it("keeps a submitted retest or calibration case editable until the case beside it completes, as an ordinary case", async () => {
    const { users } = setup();
    const s1 = annotator("ann1");
    // ann1 submits everything they get, in list order, before anyone else submits anything.
    const results: { kind: string; state: string }[] = [];
    for (;;) {
      const open = (await s1.list()).find((r) => r.state === "not_started");
      if (!open) break;
      const r = await submit(s1, open.key, sufficient("F32.1", 2));
      results.push({ kind: kindOf(open.key), state: r.state });
    }
    const kinds = new Set(results.map((r) => r.kind));
    expect(kinds).toEqual(new Set(["case", "retest", "calibration"]));
    // Nobody else has submitted: every save answered "submitted", and every row says so.
    expect(results.filter((r) => r.state !== "submitted")).toEqual([]);
    const rows = await s1.list();
    expect(rows.map((r) => r.state)).toEqual(rows.map(() => "submitted"));

    // A submitted quality item is revised as an ordinary case is: a draft is refused with the same message, a new
    // submission is taken.
    const retest = rows.find((r) => kindOf(r.key) === "retest")!;
    const ordinary = rows.find((r) => kindOf(r.key) === "case")!;
    const refusals = [];
    for (const key of [retest.key, ordinary.key]) {
      const page = (await s1.page(key)).data as { version: number; state: string };
      expect(page.state).toBe("submitted");
      refusals.push(await s1.save(key, "draft", sufficient("F33.0", 2), page.version));
      expect(await submit(s1, key, sufficient("F33.0", 3))).toMatchObject({ ok: true, state: "submitted" });
    }
    expect(refusals[0]).toEqual(refusals[1]);
    expect(refusals[0]!.status).toBe(409);

    // The co-annotators submit half their cases: each quality row of ann1's shows exactly the state of the ordinary
    // row beside it (its paired case), so the column shows the same mix of Submitted and Locked for every kind.
    const co = ["ann2", "ann3"].map((name) => annotator(name));
    const coRows = await Promise.all(co.map(async (s) => (await s.list()).filter((x) => kindOf(x.key) === "case")));
    for (const [i, s] of co.entries())
      for (const r of coRows[i]!.slice(0, Math.ceil(coRows[i]!.length / 2)))
        await submit(s, r.key, sufficient("F32.1", 2));
    const middle = await s1.list();
    const keyOfCase = new Map(
      db
        .select({ caseId: assignments.caseId, key: assignments.itemKey })
        .from(assignments)
        .where(eq(assignments.annotatorId, users.ann1!.id))
        .all()
        .map((a) => [a.caseId, a.key!]),
    );
    const stateOf = new Map(middle.map((r) => [r.key, r.state]));
    const quality = db.select().from(qualityItems).where(eq(qualityItems.annotatorId, users.ann1!.id)).all();
    // (A revision counts as a later submission for the wash-out, so a new retest may have come in meanwhile: it is
    // not submitted yet, and is left out.)
    const submitted = quality.filter((q) => rows.some((r) => r.key === q.itemKey));
    expect(submitted.length).toBeGreaterThan(2);
    for (const q of submitted)
      expect(stateOf.get(q.itemKey), q.kind).toBe(stateOf.get(keyOfCase.get(q.pairedCaseId!)!));
    // (A real mix: some of ann1's ordinary cases are locked by now, some not.)
    expect(new Set(middle.filter((r) => kindOf(r.key) === "case").map((r) => r.state))).toEqual(
      new Set(["submitted", "locked"]),
    );

    // The co-annotators submit everything: every row of ann1's list is locked now, quality items included, and a
    // save is refused with the same message.
    for (const [i, s] of co.entries())
      for (const r of coRows[i]!.slice(Math.ceil(coRows[i]!.length / 2)))
        await submit(s, r.key, sufficient("F32.1", 2));
    const after = (await s1.list()).filter((r) => rows.some((x) => x.key === r.key));
    expect(after).toHaveLength(rows.length);
    expect(after.map((r) => r.state)).toEqual(after.map(() => "locked"));
    const locked = [];
    for (const key of [retest.key, ordinary.key]) {
      const page = (await s1.page(key)).data as { version: number };
      locked.push(await s1.save(key, "submit", sufficient("F20.0", 1), page.version));
    }
    expect(locked[0]).toEqual(locked[1]);
    expect(locked[0]!.status).toBe(409);
    expect(users.ann1).toBeDefined();
  });

  it("locks a quality item on its submission when the case beside it is already complete, as that case would", async () => {
    setup();
    // ann2 and ann3 first: every case of ann1's has its co-annotator's label in.
    for (const name of ["ann2", "ann3"]) {
      const s = annotator(name);
      for (const r of (await s.list()).filter((x) => kindOf(x.key) === "case"))
        await submit(s, r.key, sufficient("F32.1", 2));
    }
    const s1 = annotator("ann1");
    const states = new Map<string, string[]>();
    for (;;) {
      const open = (await s1.list()).find((r) => r.state === "not_started");
      if (!open) break;
      const r = await submit(s1, open.key, sufficient("F32.1", 2));
      states.set(kindOf(open.key), [...(states.get(kindOf(open.key)) ?? []), r.state]);
    }
    for (const kind of ["case", "retest", "calibration"])
      expect(new Set(states.get(kind))).toEqual(new Set(["locked"]));
  });
});

describe("the first label of a retest", () => {
  it("is the label submitted before the retest entered the queue; a later revision is kept and shown, not used", async () => {
    const { users, study } = setup({ calibrationRate: 0 });
    const s1 = annotator("ann1");
    const firstLabelOf = new Map<number, string>();
    let retestKey: string | undefined;
    // Submit in list order until a retest is in the list.
    for (let t = 0; !retestKey; t++) {
      const open = (await s1.list()).find((r) => r.state === "not_started")!;
      await submit(s1, open.key, sufficient("F32.1", 2));
      retestKey = (await s1.list()).find((r) => kindOf(r.key) === "retest")?.key;
      expect(t).toBeLessThan(20);
    }
    const q = db.select().from(qualityItems).where(eq(qualityItems.itemKey, retestKey)).get()!;
    // The annotator finds the case the retest repeats (its note is the same) and revises it to what they will say on
    // the retest, then submits the retest.
    const originalKey = db
      .select({ key: assignments.itemKey })
      .from(assignments)
      .where(and(eq(assignments.caseId, q.caseId), eq(assignments.annotatorId, users.ann1!.id)))
      .get()!.key!;
    firstLabelOf.set(q.caseId, "F32.1");
    await submit(s1, originalKey, sufficient("F41.1", 3));
    await submit(s1, retestKey, sufficient("F41.1", 3));

    const report = getRaterQualityReport(db, study.id);
    expect(report.retest.pooled.n).toBe(1);
    // Compared with F32.1 at section 2 (the label as it was), not with the revision.
    expect(report.retest.pooled.diagnosis.diagnosis_level.percent_agreement).toBe(0);
    expect(report.retest.pooled.earliest_section.exact_agreement).toBe(0);
    // The revision is kept and shown to the admin: on the report and in the CSV.
    expect(report.revisedFirstLabels).toHaveLength(1);
    expect(report.revisedFirstLabels[0]).toMatchObject({
      annotator: "ann1",
      asCompared: { icd10: "F32.1", earliestSection: 2 },
      now: { icd10: "F41.1", earliestSection: 3 },
    });
    const csv = raterQualityCsv(db, study.id).split("\r\n");
    const header = csv[0]!.split(",");
    const row = csv[1]!.split(",");
    const cell = (name: string) => row[header.indexOf(name)];
    expect(cell("compared_icd10")).toBe("F32.1");
    expect(cell("icd10")).toBe("F41.1");
    expect(cell("first_label_revised")).toBe("yes");
    expect(cell("first_label_now_icd10")).toBe("F41.1");
    expect(firstLabelOf.size).toBe(1);
  });
});

describe("where a retest enters the list", () => {
  it("is never among the next three open items after the submission that brought it", { timeout: 90_000 }, async () => {
    // Several seeds, so that the rule is tested rather than one draw.
    const places: number[] = [];
    for (const seed of [1, 2, 3]) {
      cleanup();
      ({ db, cleanup } = cloneDb(template.db));
      setup({ seed, calibrationRate: 0 });
      const s1 = annotator("ann1");
      for (;;) {
        const before = await s1.list();
        const at = before.findIndex((r) => r.state === "not_started");
        if (at < 0) break;
        await submit(s1, before[at]!.key, sufficient("F32.1", 2));
        const after = await s1.list();
        const known = new Set(before.map((r) => r.key));
        const openAfter = after.filter((r) => r.state === "not_started");
        for (const added of after.filter((r) => !known.has(r.key))) {
          expect(kindOf(added.key)).toBe("retest");
          // Its place among the open items: 0 is where "Next" leads.
          const place = openAfter.findIndex((r) => r.key === added.key);
          places.push(place);
          // Three open items come before it, or all of them when there are fewer (then it is the last).
          expect(place, `seed ${seed}`).toBeGreaterThanOrEqual(Math.min(OPEN_AHEAD, openAfter.length - 1));
        }
      }
    }
    expect(places.length).toBeGreaterThan(3);
  });
});

describe("an empty test–retest report", () => {
  it("says no retest has been submitted yet, in its own words, on the report and the command line", async () => {
    const { study } = setup();
    const report = getRaterQualityReport(db, study.id);
    expect(report.retest.pooled.n).toBe(0);
    const reasons = Object.values(report.retest.pooled.reasons);
    expect(reasons.length).toBeGreaterThan(0);
    for (const r of reasons) expect(r).not.toMatch(/primary annotations|both annotators/);
    expect(report.retest.pooled.reasons["sufficiency.percent_agreement"]).toBe("no retest has been submitted yet");
    let out = "";
    const io: CliIO = { out: (t) => (out += t), err: () => {}, readStdin: async () => "", isTTY: false };
    expect(await runCli(["rater-quality", "--study", "Main"], io)).toBe(0);
    expect(out).toContain("no retest has been submitted yet");
    expect(out).not.toMatch(/primary annotations/);
    expect(listStudyCases(db, study.id)).toHaveLength(30);
  });
});
