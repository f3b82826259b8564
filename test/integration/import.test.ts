/**
 * Case import on a real SQLite database (docs/safe-psych.md#cases-and-sections, docs/formats.md#case-import-csv-and-jsonl): whole or nothing, re-import is a no-op, an annotated
 * case's text cannot change, an unannotated one gets a new version, reference labels are stored apart; and the
 * admin page's preview → confirm flow (pending imports).
 */
import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { annotations, assignments, cases, pendingImports, referenceLabels } from "../../db/schema";
import { LABEL_COLUMNS } from "../../app/annotation/domain/case-import";
import { SECTION_KINDS } from "../../app/annotation/domain/sections";
import type { Db } from "../../app/platform/db.server";
import { listCaseEvents } from "../../app/audit/audit.server";
import { getAdminCase } from "../../app/annotation/cases.server";
import {
  confirmPendingImport,
  discardPendingImport,
  stagePendingImport,
} from "../../app/annotation/pending-imports.server";
import {
  getCaseSections,
  getStudyByName,
  importCases,
  listStudyCases,
  planImport,
  requireStudyByName,
  type ImportInput,
} from "../../app/annotation/studies.server";
import { ServiceError } from "../../app/platform/service-error";
import { freshDb, makeUser } from "../support/db";

const HEADER = ["id", "age_group", "sex", ...SECTION_KINDS, ...LABEL_COLUMNS];

type Row = { id: string; sections: string[]; labels?: string[]; age?: string; sex?: string };

function cell(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

function csvFile(rows: Row[]): Uint8Array {
  const lines = [
    HEADER,
    ...rows.map((r) => [r.id, r.age ?? "38-47", r.sex ?? "F", ...r.sections, ...(r.labels ?? ["", "", "", "", ""])]),
  ];
  return new TextEncoder().encode(lines.map((l) => l.map(cell).join(",")).join("\r\n") + "\r\n");
}

const ROWS: Row[] = [
  {
    id: "c1",
    sections: ["Low mood, anhedonia.", "No prior admissions.", "Psychomotor slowing.", "MADRS 34", ""],
    labels: ["1", "1", "f32.2", "0", "3"],
  },
  {
    id: "c2",
    sections: ["Voices for 2 weeks.", "", "Paranoid ideation.", "", "Epilepsy"],
    labels: ["0", "1", "", "1", ""],
  },
  { id: "c3", sections: ["Forgetful.", "None.", "Disoriented in time.", "MMSE 18", "Stroke 2019"] },
];

let db: Db;
let cleanup: () => void;

beforeEach(() => {
  ({ db, cleanup } = freshDb());
});
afterEach(() => cleanup());

function input(bytes: Uint8Array, extra: Partial<ImportInput> = {}): ImportInput & { actorId: string | null } {
  return { studyName: "Pilot", bytes, filename: "pilot.csv", actorId: null, ...extra };
}

const TABLES = ["studies", "cases", "case_sections", "reference_labels", "imports", "events", "pending_imports"];

/** Every row of the tables an import touches, to show that something wrote nothing. */
function snapshot(): Record<string, unknown[]> {
  return Object.fromEntries(TABLES.map((t) => [t, db.$client.prepare(`select * from ${t} order by rowid`).all()]));
}

/** An annotator has started the case: an assignment and a draft annotation. */
async function annotate(caseId: number) {
  const annotator = await makeUser(db, "annotator1", ["annotator"]);
  const assignmentId = db
    .insert(assignments)
    .values({ caseId, annotatorId: annotator.id, assignedAt: 1 })
    .returning({ id: assignments.id })
    .get().id;
  db.insert(annotations).values({ assignmentId, caseId, annotatorId: annotator.id, updatedAt: 1 }).run();
}

function caseByExternalId(externalId: string) {
  const study = requireStudyByName(db, "Pilot");
  return listStudyCases(db, study.id).find((c) => c.externalId === externalId)!;
}

describe("importCases", () => {
  it("creates the study and its cases in file order, sections compacted, and records the import", () => {
    const result = importCases(db, input(csvFile(ROWS)));
    expect(result).toMatchObject({
      ok: true,
      written: true,
      create: 3,
      update: 0,
      unchanged: 0,
      total: 3,
      studyExists: false,
    });
    const study = getStudyByName(db, "Pilot")!;
    expect(study.numCases).toBe(3);
    const rows = listStudyCases(db, study.id);
    expect(
      rows.map((r) => [r.externalId, r.position, r.numSections, r.version, r.ageGroup, r.hasReferenceLabels]),
    ).toEqual([
      ["c1", 1, 4, 1, "38-47", true],
      ["c2", 2, 3, 1, "38-47", true],
      ["c3", 3, 5, 1, "38-47", false],
    ]);
    expect(getCaseSections(db, rows[1]!.id)).toEqual([
      { order: 1, kind: "presenting_symptoms", content: "Voices for 2 weeks." },
      { order: 2, kind: "psychiatric_exam", content: "Paranoid ideation." },
      { order: 3, kind: "secondary_diagnoses", content: "Epilepsy" },
    ]);
    const imported = db.$client
      .prepare("select filename, sha256, format, created, updated, unchanged from imports")
      .all();
    expect(imported).toEqual([
      { filename: "pilot.csv", sha256: result.sha256, format: "csv", created: 3, updated: 0, unchanged: 0 },
    ]);
    expect(result.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it("stores reference labels apart from the case text, canonicalised", () => {
    importCases(db, input(csvFile(ROWS)));
    const c1 = caseByExternalId("c1");
    expect(db.select().from(referenceLabels).where(eq(referenceLabels.caseId, c1.id)).get()).toEqual({
      caseId: c1.id,
      diagnosisSufficiency: "1",
      diagnosisSufficiencyAgreement: "1",
      diagnosis: "F32.2",
      diagnosisAgreement: "0",
      earliestSufficientSection: "3",
      sourceDiagnosis: null,
      extras: null,
    });
    // Nothing of the labels is in what annotators are shown.
    const text = JSON.stringify(getCaseSections(db, c1.id));
    expect(text).not.toMatch(/F32/i);
    // A case without labels has no reference row at all.
    expect(
      db
        .select()
        .from(referenceLabels)
        .where(eq(referenceLabels.caseId, caseByExternalId("c3").id))
        .get(),
    ).toBeUndefined();
    expect(getAdminCase(db, c1.id)!.referenceLabels).toMatchObject({ diagnosis: "F32.2" });
  });

  it("audits the study's creation and each imported case", () => {
    importCases(db, input(csvFile(ROWS)));
    const events = listCaseEvents(db, caseByExternalId("c2").id);
    expect(events.map((e) => [e.entity, e.action, e.changes])).toEqual([
      ["case", "import", { externalId: "c2", numSections: 3 }],
    ]);
    expect(db.$client.prepare("select entity, action from events where entity = 'study'").all()).toEqual([
      { entity: "study", action: "create" },
    ]);
  });

  it("writes nothing for a file with one bad row, and reports it by line", () => {
    const rows = [
      ...ROWS,
      { id: "c1", sections: ["a", "b", "c", "", ""] },
      { id: "c5", sections: ["a", "b", "c", "", ""], labels: ["1", "1", "F32.A", "1", "1"] },
    ];
    const before = snapshot();
    const result = importCases(db, input(csvFile(rows)));
    expect(result.ok).toBe(false);
    expect(result.written).toBe(false);
    expect(result.parse.errors.map((e) => `line ${e.line}: ${e.message}`)).toEqual([
      'line 5: (id c1) duplicate id "c1" (first on line 2).',
      'line 6: (id c5) diagnosis "F32.A" is not a WHO ICD-10 chapter V code (F00–F99).',
    ]);
    expect(snapshot()).toEqual(before);
    expect(getStudyByName(db, "Pilot")).toBeNull();
  });

  it("re-importing the same file changes nothing", () => {
    importCases(db, input(csvFile(ROWS)));
    const before = snapshot();
    const again = importCases(db, input(csvFile(ROWS)));
    expect(again).toMatchObject({
      ok: true,
      written: false,
      create: 0,
      update: 0,
      unchanged: 3,
      labelChanges: 0,
      studyExists: true,
    });
    expect(snapshot()).toEqual(before);
  });

  it("gives a changed, unannotated case a new version and leaves the others alone", () => {
    importCases(db, input(csvFile(ROWS)));
    const c2Before = caseByExternalId("c2");
    const c3Before = caseByExternalId("c3");
    const changed = ROWS.map((r) =>
      r.id === "c2"
        ? { ...r, sections: ["Voices for 3 weeks.", "One admission.", "Paranoid ideation.", "", "Epilepsy"] }
        : r,
    );
    const result = importCases(db, input(csvFile(changed)));
    expect(result).toMatchObject({ ok: true, written: true, create: 0, update: 1, unchanged: 2 });
    const c2 = caseByExternalId("c2");
    expect(c2.id).toBe(c2Before.id);
    expect(c2.version).toBe(2);
    expect(c2.numSections).toBe(4);
    expect(getCaseSections(db, c2.id).map((s) => s.content)).toEqual([
      "Voices for 3 weeks.",
      "One admission.",
      "Paranoid ideation.",
      "Epilepsy",
    ]);
    expect(caseByExternalId("c3")).toEqual(c3Before);
    const events = listCaseEvents(db, c2.id);
    expect(events.map((e) => e.action)).toEqual(["import", "replace_text"]);
    expect(events[1]!.changes).toMatchObject({ version: [1, 2] });
  });

  it("refuses to change the text of an annotated case, naming it, and writes nothing of the file", async () => {
    importCases(db, input(csvFile(ROWS)));
    await annotate(caseByExternalId("c1").id);
    const changed = [
      ...ROWS.map((r) =>
        r.id === "c1" ? { ...r, sections: ["Low mood, anhedonia, guilt.", ...r.sections.slice(1)] } : r,
      ),
      { id: "c4", sections: ["new", "case", "here", "", ""] },
    ];
    const before = snapshot();
    const result = importCases(db, input(csvFile(changed)));
    expect(result.ok).toBe(false);
    expect(result.written).toBe(false);
    expect(result.conflicts).toHaveLength(1);
    expect(result.conflicts[0]!.line).toBe(2);
    expect(result.conflicts[0]!.message).toMatch(/^\(id c1\) the case already has annotations/);
    expect(snapshot()).toEqual(before);
    expect(getCaseSections(db, caseByExternalId("c1").id)[0]!.content).toBe("Low mood, anhedonia.");
  });

  it("counts the metadata an annotator sees as part of an annotated case", async () => {
    importCases(db, input(csvFile(ROWS)));
    await annotate(caseByExternalId("c3").id);
    const result = planImport(db, input(csvFile(ROWS.map((r) => (r.id === "c3" ? { ...r, age: "48-57" } : r)))));
    expect(result.ok).toBe(false);
    expect(result.conflicts.map((c) => c.line)).toEqual([4]);
  });

  it("lets an annotated case's reference labels change, since annotators never see them", async () => {
    importCases(db, input(csvFile(ROWS)));
    const c1 = caseByExternalId("c1");
    await annotate(c1.id);
    const relabelled = ROWS.map((r) => (r.id === "c1" ? { ...r, labels: ["1", "1", "F33.1", "1", "2"] } : r));
    const result = importCases(db, input(csvFile(relabelled)));
    expect(result).toMatchObject({ ok: true, written: true, update: 0, unchanged: 3, labelChanges: 1 });
    expect(db.select().from(referenceLabels).where(eq(referenceLabels.caseId, c1.id)).get()).toMatchObject({
      diagnosis: "F33.1",
      diagnosisAgreement: "1",
      earliestSufficientSection: "2",
    });
    expect(caseByExternalId("c1").version).toBe(1);
    expect(listCaseEvents(db, c1.id).map((e) => [e.entity, e.action])).toEqual([
      ["case", "import"],
      ["reference_labels", "update"],
    ]);
    // The same labels again: nothing to do.
    const before = snapshot();
    expect(importCases(db, input(csvFile(relabelled))).written).toBe(false);
    expect(snapshot()).toEqual(before);
  });

  it("appends new cases after the existing ones", () => {
    importCases(db, input(csvFile(ROWS.slice(0, 2))));
    const result = importCases(db, input(csvFile([{ id: "c9", sections: ["a", "b", "c", "", ""] }, ...ROWS])));
    expect(result).toMatchObject({ create: 2, unchanged: 2 });
    expect(listStudyCases(db, requireStudyByName(db, "Pilot").id).map((c) => [c.externalId, c.position])).toEqual([
      ["c1", 1],
      ["c2", 2],
      ["c9", 3],
      ["c3", 4],
    ]);
  });

  it("keeps studies apart: the same id may exist in two studies", () => {
    importCases(db, input(csvFile(ROWS)));
    const other = importCases(db, input(csvFile(ROWS), { studyName: "Second" }));
    expect(other).toMatchObject({ ok: true, written: true, create: 3, studyExists: false });
    expect(db.select().from(cases).all()).toHaveLength(6);
  });

  it("imports JSONL and mapped CSV columns, with a source diagnosis stored apart", () => {
    const line = { id: "j1", sections: { presenting_symptoms: "p", psychiatric_exam: "e", secondary_diagnoses: "s" } };
    const jsonl = importCases(
      db,
      input(new TextEncoder().encode(JSON.stringify(line) + "\n"), { filename: "x.jsonl" }),
    );
    expect(jsonl).toMatchObject({ ok: true, written: true, create: 1 });
    expect(jsonl.parse.format).toBe("jsonl");

    const mapped =
      "Case,Symptoms,psychiatric_history,psychiatric_exam,psychological_exam,secondary_diagnoses,source_diagnosis\nm1,a,b,c,,,F20.0\n";
    const result = importCases(
      db,
      input(new TextEncoder().encode(mapped), {
        studyName: "Mapped",
        columnMap: { id: "Case", presenting_symptoms: "Symptoms" },
      }),
    );
    expect(result).toMatchObject({ ok: true, written: true, create: 1 });
    const m1 = listStudyCases(db, requireStudyByName(db, "Mapped").id)[0]!;
    expect(m1.externalId).toBe("m1");
    expect(m1.hasReferenceLabels).toBe(false);
    expect(db.select().from(referenceLabels).where(eq(referenceLabels.caseId, m1.id)).get()).toMatchObject({
      diagnosisSufficiency: null,
      sourceDiagnosis: "F20.0",
    });
  });

  it("refuses a study name it cannot use", () => {
    expect(() => importCases(db, input(csvFile(ROWS), { studyName: "../etc" }))).toThrow(/letters, digits/);
    expect(() => importCases(db, input(csvFile(ROWS), { studyName: "  " }))).toThrow(/Give the study a name/);
    expect(snapshot().studies).toEqual([]);
  });
});

describe("planImport", () => {
  it("previews counts and a sample without writing", () => {
    const before = snapshot();
    const plan = planImport(db, input(csvFile(ROWS)));
    expect(plan).toMatchObject({ ok: true, studyExists: false, create: 3, total: 3 });
    expect(plan.sample).toEqual([
      { externalId: "c1", numSections: 4, hasReferenceLabels: true, status: "new" },
      { externalId: "c2", numSections: 3, hasReferenceLabels: true, status: "new" },
      { externalId: "c3", numSections: 5, hasReferenceLabels: false, status: "new" },
    ]);
    expect(snapshot()).toEqual(before);
  });

  it("tells new, changed and unchanged cases apart", () => {
    importCases(db, input(csvFile(ROWS)));
    const next = [
      { ...ROWS[0]!, sections: ["x", "y", "z", "", ""] },
      ROWS[1]!,
      { id: "c7", sections: ["a", "b", "c", "", ""] },
    ];
    const plan = planImport(db, input(csvFile(next)));
    expect(plan.sample.map((s) => [s.externalId, s.status])).toEqual([
      ["c1", "changed"],
      ["c2", "unchanged"],
      ["c7", "new"],
    ]);
    expect(plan).toMatchObject({ create: 1, update: 1, unchanged: 1 });
  });
});

describe("pending imports (upload, preview, confirm)", () => {
  it("keeps a valid upload until its own admin confirms it, once", async () => {
    const admin = await makeUser(db, "admin1", ["admin"]);
    const other = await makeUser(db, "admin2", ["admin"]);
    const { plan, pendingId } = stagePendingImport(db, {
      userId: admin.id,
      studyName: "Pilot",
      filename: "pilot.csv",
      bytes: csvFile(ROWS),
    });
    expect(plan.ok).toBe(true);
    expect(pendingId).toEqual(expect.any(String));
    expect(getStudyByName(db, "Pilot")).toBeNull();

    expect(() => confirmPendingImport(db, { id: pendingId!, userId: other.id })).toThrow(ServiceError);
    discardPendingImport(db, { id: pendingId!, userId: other.id });
    expect(db.select().from(pendingImports).all()).toHaveLength(1);

    const confirmed = confirmPendingImport(db, { id: pendingId!, userId: admin.id });
    expect(confirmed.plan).toMatchObject({ ok: true, create: 3 });
    expect(confirmed.studyId).toBe(getStudyByName(db, "Pilot")!.id);
    expect(listStudyCases(db, confirmed.studyId)).toHaveLength(3);
    const events = db.$client.prepare("select actor_id as actorId from events where entity = 'case'").all() as {
      actorId: string;
    }[];
    expect(new Set(events.map((e) => e.actorId))).toEqual(new Set([admin.id]));

    expect(() => confirmPendingImport(db, { id: pendingId!, userId: admin.id })).toThrow(
      /expired or was already imported/,
    );
  });

  it("keeps nothing for a bad file or a file with nothing new, and discards on request", async () => {
    const admin = await makeUser(db, "admin1", ["admin"]);
    const bad = stagePendingImport(db, {
      userId: admin.id,
      studyName: "Pilot",
      filename: "p.csv",
      bytes: csvFile([{ id: "", sections: ["a", "b", "c", "", ""] }]),
    });
    expect(bad).toMatchObject({ pendingId: null, plan: { ok: false } });
    importCases(db, input(csvFile(ROWS)));
    expect(
      stagePendingImport(db, { userId: admin.id, studyName: "Pilot", filename: "p.csv", bytes: csvFile(ROWS) })
        .pendingId,
    ).toBeNull();
    expect(db.select().from(pendingImports).all()).toEqual([]);

    const staged = stagePendingImport(db, {
      userId: admin.id,
      studyName: "Pilot",
      filename: "p.csv",
      bytes: csvFile([...ROWS, { id: "n", sections: ["a", "b", "c", "", ""] }]),
    });
    discardPendingImport(db, { id: staged.pendingId!, userId: admin.id });
    expect(db.select().from(pendingImports).all()).toEqual([]);
  });

  it("keeps the upload's format and column mapping for the confirmation", async () => {
    const admin = await makeUser(db, "admin1", ["admin"]);
    // JSONL under a name that does not tell its format: the format chosen at upload must be kept.
    const bytes = new TextEncoder().encode(
      JSON.stringify({ id: "j", presenting_symptoms: "p", psychiatric_exam: "e", secondary_diagnoses: "s" }) + "\n",
    );
    const staged = stagePendingImport(db, {
      userId: admin.id,
      studyName: "Pilot",
      filename: "notes.txt",
      bytes,
      format: "jsonl",
    });
    expect(staged.pendingId).not.toBeNull();
    expect(confirmPendingImport(db, { id: staged.pendingId!, userId: admin.id }).plan).toMatchObject({
      ok: true,
      create: 1,
    });
  });

  it("refuses to confirm a preview older than a day", async () => {
    const admin = await makeUser(db, "admin1", ["admin"]);
    const { pendingId } = stagePendingImport(db, {
      userId: admin.id,
      studyName: "Pilot",
      filename: "pilot.csv",
      bytes: csvFile(ROWS),
    });
    db.update(pendingImports)
      .set({ createdAt: Date.now() - 25 * 60 * 60 * 1000 })
      .where(eq(pendingImports.id, pendingId!))
      .run();
    expect(() => confirmPendingImport(db, { id: pendingId!, userId: admin.id })).toThrow(/expired/);
    expect(getStudyByName(db, "Pilot")).toBeNull();
  });

  it("re-validates on confirmation: a case annotated since the preview stops the import", async () => {
    const admin = await makeUser(db, "admin1", ["admin"]);
    importCases(db, input(csvFile(ROWS)));
    const changed = ROWS.map((r) => (r.id === "c2" ? { ...r, sections: ["changed", "b", "c", "", ""] } : r));
    const { pendingId } = stagePendingImport(db, {
      userId: admin.id,
      studyName: "Pilot",
      filename: "pilot.csv",
      bytes: csvFile(changed),
    });
    expect(pendingId).not.toBeNull();
    await annotate(caseByExternalId("c2").id);
    const before = snapshot();
    const { plan } = confirmPendingImport(db, { id: pendingId!, userId: admin.id });
    expect(plan.ok).toBe(false);
    expect(plan.conflicts[0]!.message).toMatch(/^\(id c2\)/);
    expect(snapshot()).toEqual(before);
  });
});
