/**
 * Gold labels out and back in, on a real temporary SQLite database (docs/safe-psych.md#gold-labels-and-expert-action-labels, docs/formats.md#released-csv-datacsv, docs/formats.md#data_gtjson, docs/safe-psych.md#disagreement-and-adjudication): a study taken
 * through annotation and adjudication exports deterministic data_gt.json / samples.json / data.csv with a manifest;
 * non-final cases are refused with counts unless the export is partial; Concord's fields (action labels, stage-1
 * label, anonymised annotators A/B in the stored order) are right; the reference fixture survives import → export
 * byte for byte; a bad import writes nothing.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { count, eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { caseOutcomes, cases, events, imports, referenceLabels, studies } from "../../db/schema";
import type { Db } from "../../app/platform/db.server";
import { decide, recordIndependent, type LabelInput } from "../../app/adjudication/adjudication.server";
import { submitAnnotation } from "../../app/annotation/annotations.server";
import { countByState, exportGold, importGold, listCaseProgress } from "../../app/gold/gold-export.server";
import { labelOfAnnotation } from "../../app/gold/outcomes.server";
import { importCases, requireStudyByName } from "../../app/annotation/studies.server";
import type { UserView } from "../../app/accounts/users.server";
import type { DataGtRecord } from "../../app/gold/domain/safe-psych-format";
import { freshDb, makeUser } from "../support/db";
import {
  annotationsOf,
  cloneDb,
  insufficient,
  outcomeOf,
  studyForPair,
  submitPair,
  sufficient,
} from "../support/labels";

const FIXTURES = new URL("../fixtures/safe-psych/", import.meta.url).pathname;

let db: Db;
let cleanup: () => void;
let alice: UserView;
let bruno: UserView;
let judy: UserView;

let template: { db: Db; cleanup: () => void };

beforeAll(async () => {
  template = freshDb();
  [alice, bruno, judy] = await Promise.all([
    makeUser(template.db, "alice", ["annotator"]),
    makeUser(template.db, "bruno", ["annotator"]),
    makeUser(template.db, "judy", ["adjudicator"]),
  ]);
});
afterAll(() => template.cleanup());
beforeEach(() => {
  ({ db, cleanup } = cloneDb(template.db));
});
afterEach(() => cleanup());

const F31_1: LabelInput = {
  sufficiency: "sufficient",
  icd10: "F31.1",
  earliestSection: 3,
  missingInfo: [],
  missingOther: "",
};

function adjudicate(caseId: number, label: LabelInput, rationale = "decided") {
  expect(recordIndependent(db, { userId: judy.id, caseId, label })).toMatchObject({ ok: true });
  expect(
    decide(db, { userId: judy.id, caseId, label, rationale, outcomeVersion: outcomeOf(db, caseId)!.version }),
  ).toMatchObject({ ok: true });
}

/**
 * Six cases (smallStudyJsonl: T = 3 for cases 1 and 4, else 4):
 * 1 agreed sufficient (τ = 2), 2 agreed sufficient at section 1, 3 agreed insufficient, 4 adjudicated,
 * 5 disputed, 6 with one annotation only.
 */
function goldStudy() {
  const { study, caseIds } = studyForPair(db, { name: "Gold", cases: 6, annotatorIds: [alice.id, bruno.id] });
  const a = (values: ReturnType<typeof sufficient>) => ({ userId: alice.id, values });
  const b = (values: ReturnType<typeof sufficient>) => ({ userId: bruno.id, values });
  submitPair(db, caseIds[0]!, a(sufficient("F32.1", 3)), b(sufficient("F32.1", 2)));
  submitPair(db, caseIds[1]!, b(sufficient("F20.0", 1)), a(sufficient("F20.0", 2)));
  submitPair(
    db,
    caseIds[2]!,
    a(insufficient(["substance_use"])),
    b(insufficient(["onset_duration", "other"], "Family history")),
  );
  submitPair(db, caseIds[3]!, a(sufficient("F32.1", 1)), b(sufficient("F31.1", 3)));
  submitPair(db, caseIds[4]!, a(sufficient("F41.1", 2)), b(insufficient(["laboratory"])));
  submitAnnotation(db, { userId: alice.id, caseId: caseIds[5]!, values: sufficient("F32.1", 2), version: 0 });
  adjudicate(caseIds[3]!, F31_1, "Manic episode in the history.");
  // Fix the stored A/B orders so both directions occur: case 1 shows its second annotation as A.
  for (const [i, reversed] of [
    [0, true],
    [1, false],
    [2, true],
    [3, false],
    [4, true],
  ] as const) {
    const ids = annotationsOf(db, caseIds[i]!).map((r) => r.id);
    db.update(caseOutcomes)
      .set({ annotatorOrder: (reversed ? [...ids].reverse() : ids) as [number, number] })
      .where(eq(caseOutcomes.caseId, caseIds[i]!))
      .run();
  }
  return { study, caseIds };
}

function finishGoldStudy(caseIds: number[]) {
  adjudicate(caseIds[4]!, {
    sufficiency: "insufficient",
    icd10: "",
    earliestSection: null,
    missingInfo: ["laboratory"],
    missingOther: "",
  });
  submitAnnotation(db, { userId: bruno.id, caseId: caseIds[5]!, values: sufficient("F32.1", 4), version: 0 });
}

function records(files: { "data_gt.json": string }): DataGtRecord[] {
  return JSON.parse(files["data_gt.json"]);
}

function manifestOf(files: { "manifest.json": string }) {
  return JSON.parse(files["manifest.json"]);
}

describe("refusing cases that are not final", () => {
  it("refuses with counts by state unless allowPartial, which the manifest records", () => {
    const { study, caseIds } = goldStudy();
    const refused = exportGold(db, { studyId: study.id });
    expect(refused.ok).toBe(false);
    expect(refused.counts).toEqual({
      unassigned: 0,
      in_annotation: 1,
      disputed: 1,
      agreed: 3,
      adjudicated: 1,
      reference: 0,
    });
    if (!refused.ok) {
      expect(refused.message).toMatch(/2 of 6 cases are not final/);
      expect(refused.message).toMatch(/1 in annotation/);
      expect(refused.message).toMatch(/1 disputed/);
    }

    const partial = exportGold(db, { studyId: study.id, allowPartial: true, now: new Date("2030-01-01T00:00:00Z") });
    if (!partial.ok) throw new Error(partial.message);
    expect(partial.exported).toBe(4);
    expect(records(partial.files).map((r) => r.id)).toEqual(["case-01", "case-02", "case-03", "case-04"]);
    const m = manifestOf(partial.files);
    expect(m).toMatchObject({
      allow_partial: true,
      as_released: false,
      adjudication_mode: "two_phase",
      study: "Gold",
      exported_at: "2030-01-01T00:00:00.000Z",
    });
    expect(m.counts).toMatchObject({
      cases_in_study: 6,
      exported: 4,
      by_state: refused.counts,
      adjudicated: 1,
      sufficient: 3,
      insufficient: 1,
      agreement_cases: 3,
    });
    expect(m.files["data_gt.json"].records).toBe(4);

    finishGoldStudy(caseIds);
    const full = exportGold(db, { studyId: study.id });
    if (!full.ok) throw new Error(full.message);
    expect(full.exported).toBe(6);
    expect(manifestOf(full.files)).toMatchObject({
      allow_partial: false,
      counts: { exported: 6, by_state: { agreed: 4, adjudicated: 2, disputed: 0, in_annotation: 0 } },
    });
  });

  it("counts unassigned cases as not final", () => {
    const { study } = goldStudy();
    const progress = listCaseProgress(db, study.id);
    expect(progress.map((p) => p.state)).toEqual([
      "agreed",
      "agreed",
      "agreed",
      "adjudicated",
      "disputed",
      "in_annotation",
    ]);
    db.insert(cases)
      .values({ studyId: study.id, externalId: "late", position: 99, numSections: 3, contentHash: "x", createdAt: 1 })
      .run();
    expect(exportGold(db, { studyId: study.id, allowPartial: false }).counts.unassigned).toBe(1);
  });
});

describe("the exported files", () => {
  it("are byte-identical on repeat; only the manifest's exported_at differs", () => {
    const { study, caseIds } = goldStudy();
    finishGoldStudy(caseIds);
    const one = exportGold(db, { studyId: study.id, now: new Date("2030-01-01T00:00:00Z") });
    const two = exportGold(db, { studyId: study.id, now: new Date("2031-06-15T12:30:00Z") });
    if (!one.ok || !two.ok) throw new Error("export refused");
    for (const f of ["data_gt.json", "samples.json", "data.csv"] as const) expect(two.files[f], f).toBe(one.files[f]);
    expect(two.files["manifest.json"]).not.toBe(one.files["manifest.json"]);
    const [m1, m2] = [manifestOf(one.files), manifestOf(two.files)];
    expect(m1.exported_at).toBe("2030-01-01T00:00:00.000Z");
    expect(m2.exported_at).toBe("2031-06-15T12:30:00.000Z");
    expect({ ...m2, exported_at: null }).toEqual({ ...m1, exported_at: null });
    // The manifest's hashes are those of the files.
    for (const f of ["data_gt.json", "samples.json", "data.csv"] as const)
      expect(m1.files[f].sha256).toBe(createHash("sha256").update(one.files[f], "utf8").digest("hex"));
    // The record order is the study's import order, not the order the cases became final.
    expect(records(one.files).map((r) => r.id)).toEqual([
      "case-01",
      "case-02",
      "case-03",
      "case-04",
      "case-05",
      "case-06",
    ]);
  });

  it("carry the gold labels, expert action labels and stage-1 labels of docs/safe-psych.md#gold-labels-and-expert-action-labels, docs/evaluation.md#stage-1-clarification-script", () => {
    const { study, caseIds } = goldStudy();
    finishGoldStudy(caseIds);
    const out = exportGold(db, { studyId: study.id });
    if (!out.ok) throw new Error(out.message);
    const byId = Object.fromEntries(records(out.files).map((r) => [r.id, r]));
    const pick = (r: DataGtRecord) => ({
      diagnosis_sufficiency: r.diagnosis_sufficiency,
      diagnosis: r.diagnosis,
      earliest_sufficient_section: r.earliest_sufficient_section,
      diagnosis_sufficiency_agreement: r.diagnosis_sufficiency_agreement,
      diagnosis_agreement: r.diagnosis_agreement,
      num_sections_in_input: r.num_sections_in_input,
      action_labels: r.action_labels,
      presenting_symptoms_label: r.presenting_symptoms_label,
      adjudicated: r.adjudicated,
      adjudication_reason: r.adjudication_reason,
      missing_info: r.missing_info,
      missing_info_other: r.missing_info_other,
    });
    expect(pick(byId["case-01"]!)).toEqual({
      diagnosis_sufficiency: "1",
      diagnosis: "F32.1",
      earliest_sufficient_section: "2",
      diagnosis_sufficiency_agreement: "1",
      diagnosis_agreement: "1",
      num_sections_in_input: 3,
      action_labels: ["Clarify", "Diagnose", "Diagnose"],
      presenting_symptoms_label: "Clarify",
      adjudicated: false,
      adjudication_reason: null,
      missing_info: [],
      missing_info_other: null,
    });
    expect(pick(byId["case-02"]!)).toMatchObject({
      diagnosis: "F20.0",
      earliest_sufficient_section: "1",
      num_sections_in_input: 4,
      action_labels: ["Diagnose", "Diagnose", "Diagnose", "Diagnose"],
      presenting_symptoms_label: "Diagnose",
    });
    expect(pick(byId["case-03"]!)).toEqual({
      diagnosis_sufficiency: "0",
      diagnosis: "",
      earliest_sufficient_section: "",
      diagnosis_sufficiency_agreement: "1",
      diagnosis_agreement: "1",
      num_sections_in_input: 4,
      action_labels: ["Clarify", "Clarify", "Clarify", "Abstain"],
      presenting_symptoms_label: "Clarify",
      adjudicated: false,
      adjudication_reason: null,
      missing_info: ["onset_duration", "substance_use", "other"],
      missing_info_other: "Family history",
    });
    expect(pick(byId["case-04"]!)).toEqual({
      diagnosis_sufficiency: "1",
      diagnosis: "F31.1",
      earliest_sufficient_section: "3",
      diagnosis_sufficiency_agreement: "1",
      diagnosis_agreement: "0",
      num_sections_in_input: 3,
      action_labels: ["Clarify", "Clarify", "Diagnose"],
      presenting_symptoms_label: "Clarify",
      adjudicated: true,
      adjudication_reason: "diagnosis",
      missing_info: [],
      missing_info_other: null,
    });
    expect(pick(byId["case-05"]!)).toMatchObject({
      diagnosis_sufficiency: "0",
      diagnosis_sufficiency_agreement: "0",
      diagnosis_agreement: "0",
      adjudicated: true,
      adjudication_reason: "sufficiency",
      action_labels: ["Clarify", "Clarify", "Clarify", "Abstain"],
      missing_info: ["laboratory"],
    });
    // samples.json: present sections only, numbered 1..T.
    const samples = JSON.parse(out.files["samples.json"]);
    expect(samples[0]).toEqual({
      sample_id: "case-01",
      sections: [
        { order: 1, content: "Presenting complaint number 1: low mood and poor sleep for several weeks." },
        { order: 2, content: "No previous admissions." },
        { order: 3, content: "Depressed affect, no psychotic features." },
      ],
    });
    // data.csv: the 13 reference columns, flags as 1/0.
    const lines = out.files["data.csv"].split(/\r?\n/);
    expect(lines[0]).toBe(
      "id,age_group,sex,presenting_symptoms,psychiatric_history,psychiatric_exam,psychological_exam,secondary_diagnoses,diagnosis_sufficiency,diagnosis_sufficiency_agreement,diagnosis,diagnosis_agreement,earliest_sufficient_section",
    );
    expect(lines[1]).toMatch(/^case-01,28-37,M,.*,1,1,F32\.1,1,2$/);
  });

  it("give the two annotations as A/B in the stored order, without identities", () => {
    const { study, caseIds } = goldStudy();
    finishGoldStudy(caseIds);
    const out = exportGold(db, { studyId: study.id });
    if (!out.ok) throw new Error(out.message);
    const recs = records(out.files);
    const asRecord = (id: number, caseId: number) => {
      const row = annotationsOf(db, caseId).find((r) => r.id === id)!;
      const l = labelOfAnnotation(row);
      return l.sufficiency === "sufficient"
        ? {
            diagnosis_sufficiency: "1",
            diagnosis: l.icd10,
            earliest_sufficient_section: String(l.earliestSection),
            missing_info: [],
            missing_info_other: null,
          }
        : {
            diagnosis_sufficiency: "0",
            diagnosis: "",
            earliest_sufficient_section: "",
            missing_info: l.missingInfo,
            missing_info_other: l.missingInfoOther,
          };
    };
    for (const [i, caseId] of caseIds.entries()) {
      const [a, b] = outcomeOf(db, caseId)!.annotatorOrder as [number, number];
      expect(recs[i]!.annotators, recs[i]!.id).toEqual({ A: asRecord(a, caseId), B: asRecord(b, caseId) });
    }
    // Case 1 was stored reversed: its second annotation (bruno's τ = 2) is A.
    expect(recs[0]!.annotators!.A.earliest_sufficient_section).toBe("2");
    expect(recs[0]!.annotators!.B.earliest_sufficient_section).toBe("3");
    for (const text of Object.values(out.files))
      for (const secret of [alice.id, bruno.id, judy.id, "alice", "bruno", "judy"]) expect(text).not.toContain(secret);
  });

  it("leave presenting_symptoms_label out as released, and nothing else changes", () => {
    const { study, caseIds } = goldStudy();
    finishGoldStudy(caseIds);
    const full = exportGold(db, { studyId: study.id });
    const released = exportGold(db, { studyId: study.id, asReleased: true });
    if (!full.ok || !released.ok) throw new Error("export refused");
    expect(released.files["data_gt.json"]).not.toContain("presenting_symptoms_label");
    expect(full.files["data_gt.json"]).toContain("presenting_symptoms_label");
    const withoutStage1 = records(full.files).map(
      ({ presenting_symptoms_label, ...r }) => (void presenting_symptoms_label, r),
    );
    expect(records(released.files)).toEqual(withoutStage1);
    expect(released.files["samples.json"]).toBe(full.files["samples.json"]);
    expect(released.files["data.csv"]).toBe(full.files["data.csv"]);
    expect(manifestOf(released.files).as_released).toBe(true);
  });
});

describe("import-gold", () => {
  it("round-trips the Concord reference fixture byte for byte (data_gt.json, samples.json, data.csv)", () => {
    const text = readFileSync(FIXTURES + "concord.data_gt.json", "utf8");
    const r = importGold(db, { studyName: "Round trip", text, filename: "concord.data_gt.json", actorId: null });
    if (!r.ok) throw new Error(r.errors.join("\n"));
    const study = requireStudyByName(db, "Round trip");
    expect(listCaseProgress(db, study.id).every((p) => p.state === "reference")).toBe(true);
    const out = exportGold(db, { studyId: study.id });
    if (!out.ok) throw new Error(out.message);
    expect(out.files["data_gt.json"]).toBe(text);
    expect(out.files["samples.json"]).toBe(readFileSync(FIXTURES + "concord.samples.json", "utf8"));
    expect(out.files["data.csv"]).toBe(readFileSync(FIXTURES + "concord.data.csv", "utf8"));
    // Importing the same file again changes nothing.
    const again = importGold(db, { studyName: "Round trip", text, filename: "concord.data_gt.json", actorId: null });
    expect(again.ok).toBe(true);
    const out2 = exportGold(db, { studyId: study.id });
    expect(out2.ok && out2.files["data_gt.json"]).toBe(text);
  });

  it("round-trips a Concord export of an annotated study", () => {
    const { study, caseIds } = goldStudy();
    finishGoldStudy(caseIds);
    const first = exportGold(db, { studyId: study.id });
    if (!first.ok) throw new Error(first.message);
    const r = importGold(db, {
      studyName: "Copy",
      text: first.files["data_gt.json"],
      filename: "data_gt.json",
      actorId: null,
    });
    if (!r.ok) throw new Error(r.errors.join("\n"));
    const copy = exportGold(db, { studyId: requireStudyByName(db, "Copy").id });
    if (!copy.ok) throw new Error(copy.message);
    for (const f of ["data_gt.json", "samples.json", "data.csv"] as const)
      expect(copy.files[f], f).toBe(first.files[f]);
  });

  it("writes nothing when the file has errors, and says where they are", () => {
    const good = JSON.parse(readFileSync(FIXTURES + "concord.data_gt.json", "utf8")) as DataGtRecord[];
    const tables = () => ({
      studies: db.select({ n: count() }).from(studies).get()!.n,
      cases: db.select({ n: count() }).from(cases).get()!.n,
      labels: db.select({ n: count() }).from(referenceLabels).get()!.n,
      imports: db.select({ n: count() }).from(imports).get()!.n,
      events: db.select({ n: count() }).from(events).get()!.n,
    });
    const before = tables();
    const broken = [
      { name: "not JSON", text: "[{" },
      { name: "not an array", text: "{}" },
      {
        name: "code not in chapter V",
        text: JSON.stringify(
          [good[0], { ...good[1], diagnosis_sufficiency: "1", diagnosis: "F99.9", earliest_sufficient_section: "2" }],
          null,
          2,
        ),
      },
      { name: "duplicate id", text: JSON.stringify([good[0], { ...good[2], id: good[0]!.id }], null, 2) },
      {
        name: "τ beyond T",
        text: JSON.stringify([good[0], { ...good[3], earliest_sufficient_section: "9" }], null, 2),
      },
      { name: "numeric flag", text: JSON.stringify([{ ...good[0], diagnosis_sufficiency: 1 }], null, 2) },
    ];
    for (const { name, text } of broken) {
      const r = importGold(db, { studyName: "Broken", text, filename: "bad.json", actorId: null });
      expect(r.ok, name).toBe(false);
      if (!r.ok) {
        expect(r.errors.length, name).toBeGreaterThan(0);
        for (const e of r.errors) expect(e, name).toMatch(/^bad\.json/);
      }
      expect(tables(), name).toEqual(before);
    }
    // The element is named for record errors.
    const r = importGold(db, { studyName: "Broken", text: broken[2]!.text, filename: "bad.json", actorId: null });
    expect(!r.ok && r.errors.join("\n")).toMatch(/element 2/);
  });
});

describe("a study larger than one batch of the export", () => {
  it("counts and orders the cases as the progress page does, page after page", () => {
    const header =
      "id,age_group,sex,presenting_symptoms,psychiatric_history,psychiatric_exam,psychological_exam,secondary_diagnoses";
    const row = (id: string) => `${id},38-47,F,Low mood.,No admissions.,Tearful.,,`;
    const labelled = [
      header +
        ",diagnosis_sufficiency,diagnosis_sufficiency_agreement,diagnosis,diagnosis_agreement,earliest_sufficient_section",
    ];
    // 1,100 cases with reference labels (final), in an order the ids do not sort in, then 103 without (not final).
    for (let i = 0; i < 1100; i++) labelled.push(`${row(`z${(i * 7919) % 1100}`)},1,1,F32.1,1,2`);
    const bare = [header];
    for (let i = 0; i < 103; i++) bare.push(row(`a${i}`));
    for (const [lines, filename] of [
      [labelled, "labelled.csv"],
      [bare, "bare.csv"],
    ] as const) {
      const r = importCases(db, {
        studyName: "Big",
        bytes: new TextEncoder().encode(lines.join("\n") + "\n"),
        filename,
        actorId: null,
      });
      expect(r.ok).toBe(true);
    }
    const study = requireStudyByName(db, "Big");
    const progress = listCaseProgress(db, study.id);
    const refused = exportGold(db, { studyId: study.id });
    expect(refused.ok).toBe(false);
    expect(refused.counts).toEqual(countByState(progress));
    expect(refused.counts).toMatchObject({ reference: 1100, unassigned: 103 });
    if (!refused.ok) expect(refused.message).toMatch(/^103 of 1203 cases are not final \(103 unassigned\)/);
    const partial = exportGold(db, { studyId: study.id, allowPartial: true });
    if (!partial.ok) throw new Error(partial.message);
    expect(records(partial.files).map((r) => r.id)).toEqual(
      progress.filter((p) => p.state === "reference").map((p) => p.externalId),
    );
    expect(manifestOf(partial.files).counts).toMatchObject({ cases_in_study: 1203, exported: 1100 });
  });
});
