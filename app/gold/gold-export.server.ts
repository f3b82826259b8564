/**
 * Gold labels out (docs/safe-psych.md#gold-labels-and-expert-action-labels, docs/formats.md#released-csv-datacsv, docs/formats.md#data_gtjson): data_gt.json, samples.json and the released data.csv in the reference
 * implementation's formats, with a manifest. Deterministic: records in import order, byte-identical repeats (only the
 * manifest's export time differs). And back in: import-gold reads a data_gt.json as a study with reference labels.
 */
import { jsonDumpsIndent2 } from "../python-compat/json";
import { createHash } from "node:crypto";
import { and, asc, count, eq, inArray } from "drizzle-orm";
import { annotations, assignments, caseOutcomes, caseSections, cases, referenceLabels, studies } from "../../db/schema";
import { CASE_STATES, FINAL_STATES, type CaseProgressState } from "../annotation/domain/case-progress";
import type { CaseLabel, DisputeReason } from "./domain/gold";
import { buildDataGtRecord, buildSamplesRecord, type DataGtRecord, type GoldCase } from "./domain/safe-psych-format";
import { parseDataGtJson, readGoldCase, formatDataGtError } from "./domain/safe-psych-read";
import { serializeDataGt, serializeReleasedCsv, serializeSamples } from "./domain/safe-psych-serialize";
import type { SectionKind } from "../annotation/domain/sections";
import type { Db } from "../platform/db.server";
import { icd10Index } from "../icd10/icd10.server";
import { softwareVersion } from "../platform/paths.server";
import { labelOfAnnotation } from "./outcomes.server";
import { guidelinesManifest } from "../guidelines/guidelines.server";
import { importCases, type ImportPlan } from "../annotation/studies.server";
import { readManifestSeed } from "./domain/gold-manifest";

export { CASE_STATES, FINAL_STATES, type CaseProgressState };

export interface CaseProgress {
  caseId: number;
  externalId: string;
  position: number;
  state: CaseProgressState;
  submitted: number;
  assigned: number;
}

/** Where every case of a study stands; Concord's own outcome takes precedence over imported reference labels. */
export function listCaseProgress(db: Db, studyId: number): CaseProgress[] {
  const rows = db
    .select({
      caseId: cases.id,
      externalId: cases.externalId,
      position: cases.position,
      outcome: caseOutcomes.status,
      reference: referenceLabels.diagnosisSufficiency,
    })
    .from(cases)
    .leftJoin(caseOutcomes, eq(caseOutcomes.caseId, cases.id))
    .leftJoin(referenceLabels, eq(referenceLabels.caseId, cases.id))
    .where(eq(cases.studyId, studyId))
    .orderBy(asc(cases.position))
    .all();
  const assigned = new Map<number, number>();
  for (const r of db
    .select({ caseId: assignments.caseId, n: count() })
    .from(assignments)
    .innerJoin(cases, eq(cases.id, assignments.caseId))
    .where(eq(cases.studyId, studyId))
    .groupBy(assignments.caseId)
    .all())
    assigned.set(r.caseId, r.n);
  const submitted = new Map<number, number>();
  for (const r of db
    .select({ caseId: annotations.caseId, n: count() })
    .from(annotations)
    .innerJoin(cases, eq(cases.id, annotations.caseId))
    .where(and(eq(cases.studyId, studyId), inArray(annotations.status, ["submitted", "locked"])))
    .groupBy(annotations.caseId)
    .all())
    submitted.set(r.caseId, r.n);
  return rows.map((r) => {
    const a = assigned.get(r.caseId) ?? 0;
    let state: CaseProgressState;
    if (r.outcome) state = r.outcome;
    else if (r.reference !== null && r.reference !== undefined) state = "reference";
    else if (a < 2) state = "unassigned";
    else state = "in_annotation";
    return {
      caseId: r.caseId,
      externalId: r.externalId,
      position: r.position,
      state,
      assigned: a,
      submitted: submitted.get(r.caseId) ?? 0,
    };
  });
}

export function countByState(rows: CaseProgress[]): Record<CaseProgressState, number> {
  const out = Object.fromEntries(CASE_STATES.map((s) => [s, 0])) as Record<CaseProgressState, number>;
  for (const r of rows) out[r.state]++;
  return out;
}

interface Extras {
  adjudicated: boolean;
  adjudicationReason: DisputeReason | null;
  missingInfo: string[];
  missingInfoOther: string | null;
  annotators: GoldCase["annotators"];
}

function referenceGold(row: typeof referenceLabels.$inferSelect): { gold: CaseLabel; extras: Extras | null } {
  const extras = row.extras ? (row.extras as Extras) : null;
  const gold: CaseLabel =
    row.diagnosisSufficiency === "1"
      ? {
          sufficiency: "sufficient",
          icd10: row.diagnosis ?? "",
          earliestSection: Number(row.earliestSufficientSection),
        }
      : {
          sufficiency: "insufficient",
          missingInfo: (extras?.missingInfo ?? []) as never,
          missingInfoOther: extras?.missingInfoOther ?? null,
        };
  return { gold, extras };
}

export interface ExportOptions {
  studyId: number;
  /** Leave out presenting_symptoms_label: the reference's stage-1 script then behaves as released (docs/evaluation.md#stage-1-clarification-script). */
  asReleased?: boolean;
  /** Export the final cases even when others are not final; recorded in the manifest. */
  allowPartial?: boolean;
  /** The export time written into the manifest (the only thing that differs between repeated exports). */
  now?: Date;
}

export type ExportResult =
  | {
      ok: true;
      files: Record<"data_gt.json" | "samples.json" | "data.csv" | "manifest.json", string>;
      counts: Record<CaseProgressState, number>;
      exported: number;
    }
  | { ok: false; message: string; counts: Record<CaseProgressState, number> };

/** How the command line names the way round a refusal; the web page names its checkbox instead. */
const CLI_PARTIAL_HINT = "export with --allow-partial";

/**
 * Why a full export is refused now (some cases not final), or null when it is not. `partialHint` says how to export
 * the final cases only, in the words of the caller (the command's flag, the progress page's checkbox).
 */
export function goldExportRefusal(db: Db, studyId: number, partialHint = CLI_PARTIAL_HINT): string | null {
  const progress = listCaseProgress(db, studyId);
  return refusalOf(progress, countByState(progress), partialHint);
}

function refusalOf(
  progress: CaseProgress[],
  counts: Record<CaseProgressState, number>,
  partialHint: string,
): string | null {
  const notFinal = progress.filter((p) => !FINAL_STATES.includes(p.state));
  if (!notFinal.length) return null;
  const parts = CASE_STATES.filter((s) => !FINAL_STATES.includes(s) && counts[s]).map(
    (s) => `${counts[s]} ${s.replace("_", " ")}`,
  );
  return `${notFinal.length} of ${progress.length} cases are not final (${parts.join(", ")}). Finish them, or ${partialHint}.`;
}

export function exportGold(db: Db, options: ExportOptions): ExportResult {
  const study = db.select().from(studies).where(eq(studies.id, options.studyId)).get();
  if (!study) throw new Error(`no study ${options.studyId}`);
  const progress = listCaseProgress(db, study.id);
  const counts = countByState(progress);
  const refusal = options.allowPartial ? null : refusalOf(progress, counts, CLI_PARTIAL_HINT);
  if (refusal) return { ok: false, counts, message: refusal };
  const finalIds = progress.filter((p) => FINAL_STATES.includes(p.state)).map((p) => p.caseId);
  const records: DataGtRecord[] = [];
  for (const p of progress.filter((x) => FINAL_STATES.includes(x.state))) {
    const c = db.select().from(cases).where(eq(cases.id, p.caseId)).get()!;
    const sectionRows = db
      .select()
      .from(caseSections)
      .where(eq(caseSections.caseId, c.id))
      .orderBy(asc(caseSections.ord))
      .all();
    const sections: GoldCase["sections"] = {};
    for (const s of sectionRows) sections[s.kind as SectionKind] = s.content;
    let goldCase: GoldCase;
    if (p.state === "reference") {
      const ref = db.select().from(referenceLabels).where(eq(referenceLabels.caseId, c.id)).get()!;
      const { gold, extras } = referenceGold(ref);
      goldCase = {
        id: c.externalId,
        ageGroup: c.ageGroup,
        sex: c.sex,
        sections,
        gold,
        agreement: {
          sufficiency: ref.diagnosisSufficiencyAgreement === "1",
          diagnosis: ref.diagnosisAgreement === "1",
        },
        adjudicated: extras?.adjudicated ?? false,
        adjudicationReason: extras?.adjudicationReason ?? null,
        annotators: extras?.annotators ?? null,
      };
    } else {
      const o = db.select().from(caseOutcomes).where(eq(caseOutcomes.caseId, c.id)).get()!;
      const [a, b] = o.annotatorOrder as [number, number];
      const rows = db
        .select()
        .from(annotations)
        .where(inArray(annotations.id, [a, b]))
        .all();
      const label = (id: number) => labelOfAnnotation(rows.find((r) => r.id === id)!);
      goldCase = {
        id: c.externalId,
        ageGroup: c.ageGroup,
        sex: c.sex,
        sections,
        gold: o.gold! as CaseLabel,
        agreement: { sufficiency: o.sufficiencyAgreement, diagnosis: o.diagnosisAgreement },
        adjudicated: o.status === "adjudicated",
        adjudicationReason: (o.disputeReason as DisputeReason | null) ?? null,
        annotators: { A: label(a), B: label(b) },
      };
    }
    records.push(buildDataGtRecord(goldCase, { asReleased: options.asReleased }));
  }
  const dataGt = serializeDataGt(records);
  const samples = serializeSamples(records.map(buildSamplesRecord));
  const csv = serializeReleasedCsv(records);
  const sha = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
  const manifest = {
    software: "concord",
    software_version: softwareVersion(),
    study: study.name,
    adjudication_mode: study.adjudicationMode,
    // Replays each record's `annotators` {A, B} order (docs/safe-psych.md, "Annotator A and B").
    annotator_order_seed: study.annotatorOrderSeed,
    exported_at: (options.now ?? new Date()).toISOString(),
    as_released: Boolean(options.asReleased),
    // The guidelines in force and the version each submission was made under (docs/guidelines.md).
    guidelines: guidelinesManifest(db, { scope: "safe_psych", scopeId: study.id }),
    allow_partial: Boolean(options.allowPartial),
    counts: {
      cases_in_study: progress.length,
      exported: finalIds.length,
      by_state: counts,
      sufficient: records.filter((r) => r.diagnosis_sufficiency === "1").length,
      insufficient: records.filter((r) => r.diagnosis_sufficiency === "0").length,
      agreement_cases: records.filter((r) => r.diagnosis_sufficiency_agreement === "1" && r.diagnosis_agreement === "1")
        .length,
      adjudicated: records.filter((r) => r.adjudicated).length,
    },
    files: {
      "data_gt.json": { sha256: sha(dataGt), records: records.length },
      "samples.json": { sha256: sha(samples), records: records.length },
      "data.csv": { sha256: sha(csv), records: records.length },
    },
  };
  return {
    ok: true,
    counts,
    exported: records.length,
    files: {
      "data_gt.json": dataGt,
      "samples.json": samples,
      "data.csv": csv,
      "manifest.json": jsonDumpsIndent2(manifest) + "\n",
    },
  };
}

/**
 * Reads a data_gt.json (Concord's or the reference's) into a study: the cases with their labels as reference labels,
 * Concord's extra fields kept, so that exporting the study writes the same records again. With the export's
 * manifest.json, the study also gets the export's A/B order seed (docs/safe-psych.md, "Annotator A and B"), so that
 * it draws every case's order as the original study did; without one (the reference's files, older exports) a
 * notice says that a new seed will be drawn.
 */
export function importGold(
  db: Db,
  input: {
    studyName: string;
    text: string;
    filename: string;
    actorId: string | null;
    /** The export's manifest.json, when there is one. */
    manifest?: { text: string; filename: string } | null;
  },
):
  | { ok: false; errors: string[] }
  | ({ ok: true } & ImportPlan & { written: boolean; annotatorOrderSeed: number | null; notices: string[] }) {
  const notices: string[] = [];
  let annotatorOrderSeed: number | null = null;
  let seedLine = 1;
  if (input.manifest) {
    const m = readManifestSeed(input.manifest.text, input.manifest.filename);
    if (!m.ok) return { ok: false, errors: [m.error] };
    annotatorOrderSeed = m.seed;
    seedLine = m.line;
    if (m.notice) notices.push(m.notice);
    const sha = createHash("sha256").update(input.text, "utf8").digest("hex");
    if (m.dataGtSha256 !== null && m.dataGtSha256 !== sha)
      notices.push(
        `${input.manifest.filename}: its sha256 of data_gt.json is not that of ${input.filename} (the file was changed after the export); its annotator_order_seed is used all the same.`,
      );
  } else
    notices.push(
      `${input.filename}: no manifest.json beside it (the reference's files, or an export without its manifest): the study's A/B order will be drawn from a new seed.`,
    );
  const parsed = parseDataGtJson(input.text, { isValidCode: (c) => icd10Index().isValidChapterVCode(c) });
  if (!parsed.ok) return { ok: false, errors: parsed.errors.map((e) => formatDataGtError(e, input.filename)) };
  // Re-expressed as Concord's JSONL import, so one import path validates and writes every case file.
  const lines = parsed.records.map((record) => {
    const { goldCase } = readGoldCase(record);
    const extras: Extras | null =
      record.action_labels === undefined
        ? null
        : {
            adjudicated: goldCase.adjudicated,
            adjudicationReason: goldCase.adjudicationReason,
            missingInfo: goldCase.gold.sufficiency === "insufficient" ? goldCase.gold.missingInfo : [],
            missingInfoOther: goldCase.gold.sufficiency === "insufficient" ? goldCase.gold.missingInfoOther : null,
            annotators: goldCase.annotators,
          };
    return JSON.stringify({
      id: record.id,
      age_group: record.age_group,
      sex: record.sex,
      ...Object.fromEntries(record.sections_metadata.map((m) => [m.section_name, m.content])),
      labels: {
        diagnosis_sufficiency: record.diagnosis_sufficiency,
        diagnosis_sufficiency_agreement: record.diagnosis_sufficiency_agreement,
        diagnosis: record.diagnosis,
        diagnosis_agreement: record.diagnosis_agreement,
        earliest_sufficient_section: record.earliest_sufficient_section,
      },
      concord_extras: extras,
    });
  });
  const bytes = new TextEncoder().encode(lines.join("\n") + "\n");
  const referenceExtras = new Map<string, object | null>();
  for (const line of lines) {
    const o = JSON.parse(line) as { id: string; concord_extras: object | null };
    referenceExtras.set(o.id, o.concord_extras ?? null);
  }
  const result = importCases(db, {
    studyName: input.studyName,
    bytes,
    filename: input.filename.replace(/\.json$/, "") + ".jsonl",
    format: "jsonl",
    actorId: input.actorId,
    referenceExtras,
    annotatorOrderSeed,
  });
  if (!result.ok)
    return {
      ok: false,
      errors: [
        ...[...result.parse.errors, ...result.conflicts].map(
          (e) => `${input.filename}: element ${e.line}: ${e.message}`,
        ),
        ...(result.seedConflict ? [`${input.manifest!.filename}:${seedLine}: ${result.seedConflict}`] : []),
      ],
    };
  return { ...result, ok: true, annotatorOrderSeed, notices };
}
