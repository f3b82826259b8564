/**
 * The one mapping between Concord's label fields and the Safe-Psych reference format (app/labels/labels.ts,
 * docs/formats.md#data_gtjson): every label survives the trip out and back, the exporters write through it, and no
 * other module spells the reference's names in code — a second spelling is how the names drifted apart before.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import {
  type CaseLabel,
  fromReferenceAgreement,
  fromReferenceLabel,
  MISSING_INFO_KEYS,
  REFERENCE_LABEL_COLUMNS,
  REFERENCE_NAMES,
  referenceLabelCells,
  storedReferenceCells,
  storedReferenceColumns,
  toReferenceLabel,
  toReferenceRecord,
} from "../../app/labels/labels";
import { buildDataGtRecord, type GoldCase } from "../../app/gold/domain/safe-psych-format";
import { readGoldCase } from "../../app/gold/domain/safe-psych-read";
import { DATA_CSV_COLUMNS, releasedCsvRow } from "../../app/gold/domain/safe-psych-serialize";
import { LABEL_COLUMNS } from "../../app/annotation/domain/case-import";

const ROOT = join(__dirname, "..", "..");

/** Every shape a label takes: each code form, each τ, each missing-information key alone, all of them, and none. */
const LABELS: CaseLabel[] = [
  ...["F32.1", "F03", "F10.2", "F99"].flatMap((icd10) =>
    [1, 2, 3, 4, 5].map((earliestSection): CaseLabel => ({ sufficiency: "sufficient", icd10, earliestSection })),
  ),
  ...MISSING_INFO_KEYS.map((k): CaseLabel => ({
    sufficiency: "insufficient",
    missingInfo: [k],
    missingInfoOther: k === "other" ? "family history" : null,
  })),
  { sufficiency: "insufficient", missingInfo: [...MISSING_INFO_KEYS], missingInfoOther: "family history" },
  { sufficiency: "insufficient", missingInfo: [], missingInfoOther: null },
];

const AGREEMENTS = [
  { sufficiency: true, diagnosis: true },
  { sufficiency: true, diagnosis: false },
  { sufficiency: false, diagnosis: true },
  { sufficiency: false, diagnosis: false },
];

const missingOf = (l: CaseLabel) =>
  l.sufficiency === "insufficient"
    ? { missingInfo: l.missingInfo, missingInfoOther: l.missingInfoOther }
    : { missingInfo: [], missingInfoOther: null };

describe("the mapping to the reference format", () => {
  it("round-trips every label and every agreement", () => {
    for (const label of LABELS) {
      const fields = toReferenceLabel(label);
      expect(fields.diagnosis_sufficiency).toBe(label.sufficiency === "sufficient" ? "1" : "0");
      expect(fromReferenceLabel(fields, missingOf(label))).toEqual(label);
      for (const agreement of AGREEMENTS) {
        const record = toReferenceRecord(label, agreement);
        // The reference's five columns, in its order, all strings.
        expect(Object.keys(record)).toEqual([...REFERENCE_LABEL_COLUMNS]);
        expect(fromReferenceLabel(record, missingOf(label))).toEqual(label);
        expect(fromReferenceAgreement(record)).toEqual(agreement);
        // Through the database's columns and back.
        const stored = storedReferenceCells(storedReferenceColumns(record));
        expect(stored).toEqual(record);
        expect(referenceLabelCells(stored)).toEqual(REFERENCE_LABEL_COLUMNS.map((c) => record[c]));
      }
    }
  });

  it("writes the reference's strings: flags 1/0, τ as text, empty fields when insufficient", () => {
    expect(
      toReferenceRecord({ sufficiency: "sufficient", icd10: "F33.1", earliestSection: 2 }, AGREEMENTS[1]!),
    ).toEqual({
      diagnosis_sufficiency: "1",
      diagnosis_sufficiency_agreement: "1",
      diagnosis: "F33.1",
      diagnosis_agreement: "0",
      earliest_sufficient_section: "2",
    });
    expect(
      toReferenceLabel({ sufficiency: "insufficient", missingInfo: ["laboratory"], missingInfoOther: null }),
    ).toEqual({ diagnosis_sufficiency: "0", diagnosis: "", earliest_sufficient_section: "" });
    expect(storedReferenceColumns(null)).toEqual({
      diagnosisSufficiency: null,
      diagnosisSufficiencyAgreement: null,
      diagnosis: null,
      diagnosisAgreement: null,
      earliestSufficientSection: null,
    });
  });

  it("is what data_gt.json, data.csv and the case import use", () => {
    const sections = {
      presenting_symptoms: "a",
      psychiatric_exam: "b",
      psychological_exam: "c",
      secondary_diagnoses: "d",
      psychiatric_history: "e",
    };
    for (const gold of LABELS) {
      const annotators = { A: LABELS[0]!, B: gold };
      const goldCase: GoldCase = {
        id: "c1",
        ageGroup: "18-27",
        sex: "F",
        sections,
        gold,
        agreement: AGREEMENTS[2]!,
        adjudicated: false,
        adjudicationReason: null,
        annotators,
      };
      const record = buildDataGtRecord(goldCase);
      expect(Object.keys(record).slice(3, 8)).toEqual([...REFERENCE_LABEL_COLUMNS]);
      expect(record.annotators!.B).toMatchObject(toReferenceLabel(gold));
      expect(readGoldCase(record).goldCase).toEqual(goldCase);
      expect(releasedCsvRow(record).slice(-5)).toEqual(referenceLabelCells(record));
    }
    expect(DATA_CSV_COLUMNS.slice(-5)).toEqual([...REFERENCE_LABEL_COLUMNS]);
    expect(LABEL_COLUMNS).toBe(REFERENCE_LABEL_COLUMNS);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// No second spelling

/** The reference's own names; "diagnosis" alone is a common word and is left to the type checker. */
const NAMES = [
  REFERENCE_NAMES.sufficiency,
  REFERENCE_NAMES.sufficiencyAgreement,
  REFERENCE_NAMES.diagnosisAgreement,
  REFERENCE_NAMES.earliestSection,
];
const NAME = new RegExp(`(?<![\\w])(${NAMES.join("|")})(?![\\w])`);

/** The one module allowed to spell them. */
const MAPPING = "app/labels/labels.ts";

/**
 * Spellings that are not the mapping: the study report's own statistic named `diagnosis_agreement` (the share of a
 * rater pair's cases on which the two codes agree; docs/formats.md, "Study report"), which the reference does not have.
 */
const NOT_THE_REFERENCE: { file: RegExp; name: string }[] = [
  { file: /^app\/study-report\//, name: REFERENCE_NAMES.diagnosisAgreement },
];

/**
 * Where code spells a reference name: in a string or template (which no compiler checks) or as a declared key of an
 * object or type. A property read (`record.diagnosis_sufficiency`) is checked by the compiler against the types the
 * mapping declares, and comments may cite the names. SQL text names the columns of the reference_labels table,
 * which db/schema.ts declares (db/ imports nothing from app/).
 */
function spellings(file: string, text: string): { line: number; name: string }[] {
  const kind = file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const found: { line: number; name: string }[] = [];
  const visit = (n: ts.Node): void => {
    let spelled: string | null = null;
    if (ts.isStringLiteralLike(n) || ts.isTemplateHead(n) || ts.isTemplateMiddle(n) || ts.isTemplateTail(n)) {
      spelled = /^\s*(select|insert|update|delete|with|case)\b/i.test(n.text) ? null : n.text;
    } else if (ts.isJsxText(n)) spelled = n.text;
    else if (
      (ts.isPropertySignature(n) || ts.isPropertyAssignment(n) || ts.isPropertyDeclaration(n)) &&
      (ts.isIdentifier(n.name) || ts.isStringLiteral(n.name))
    ) {
      spelled = n.name.text;
    } else if (ts.isShorthandPropertyAssignment(n)) spelled = n.name.text;
    const m = spelled === null ? null : NAME.exec(spelled);
    if (m) found.push({ line: src.getLineAndCharacterOfPosition(n.getStart()).line + 1, name: m[1]! });
    ts.forEachChild(n, visit);
  };
  visit(src);
  return found;
}

describe("the reference's names", () => {
  it("are spelled in code by the mapping only", () => {
    const files = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "app", "scripts"], {
      cwd: ROOT,
      encoding: "utf8",
    })
      .split("\n")
      .filter((f) => /\.tsx?$/.test(f) && f !== MAPPING);
    expect(files.length).toBeGreaterThan(100);
    const offenders: string[] = [];
    for (const file of files) {
      const text = readFileSync(join(ROOT, file), "utf8");
      // Only a file that holds a name anywhere (comments too) is parsed.
      if (!NAME.test(text)) continue;
      for (const s of spellings(file, text)) {
        if (NOT_THE_REFERENCE.some((x) => x.file.test(file) && x.name === s.name)) continue;
        offenders.push(`${file}:${s.line}: ${s.name}`);
      }
    }
    expect(offenders, "use REFERENCE_NAMES / the mapping of app/labels/labels.ts").toEqual([]);
  });

  it("are found by the check wherever code spells them", () => {
    const code = [
      `const a = { diagnosis_sufficiency: "1" };`,
      `interface B { earliest_sufficient_section: string }`,
      "const c = `x ${1} diagnosis_agreement`;",
      `get(row, "diagnosis_sufficiency_agreement");`,
      `// diagnosis_sufficiency in a comment is a citation`,
      `const d = record.diagnosis_sufficiency;`,
      `db.prepare("select diagnosis_sufficiency from reference_labels");`,
      `const e = "gold_earliest_sufficient_section";`,
    ].join("\n");
    expect(spellings("x.ts", code)).toEqual([
      { line: 1, name: "diagnosis_sufficiency" },
      { line: 2, name: "earliest_sufficient_section" },
      { line: 3, name: "diagnosis_agreement" },
      { line: 4, name: "diagnosis_sufficiency_agreement" },
    ]);
  });
});
