import { importFileChunks, listIssues } from "../../cli/io";
import { CASE_COLUMNS, formatOf, type CaseColumn } from "../domain/case-import";
import { getDb } from "../../platform/db.server";
import { parseColumnMap } from "../../platform/forms";
import { importCases, planImport, StudyNameSchema, type ImportPlan } from "../studies.server";
import { CliError, parseOptions, requireOption, type CliIO, type Command } from "../../cli/command";
import { ServiceError } from "../../platform/service-error";
import { REFERENCE_LABEL_COLUMNS } from "../../labels/labels";

const help = `Usage: npm run concord -- import --study NAME FILE [--format csv|jsonl] [--map COL=HEADER,…] [--dry-run]

Imports notes (cases) into a study, creating the study if it does not exist.

FILE is CSV (one row per case) or JSONL (one object per line), told apart by its extension unless --format is given.
Columns (CSV) or keys (JSONL): id, age_group, sex, presenting_symptoms, psychiatric_history, psychiatric_exam,
psychological_exam, secondary_diagnoses; optionally the Safe-Psych label columns
${REFERENCE_LABEL_COLUMNS.join(", ")} (kept as the study's
reference labels, never shown to annotators or adjudicators) and source_diagnosis.

The whole file is validated: every bad row is reported as "FILE:LINE: reason" and nothing is imported (exit code 2).
Files over 16 GB, lines over 8 MB, NUL bytes and bytes that are not UTF-8 are refused (docs/formats.md).
Re-importing the same file changes nothing. A case that already has annotations cannot have its text changed.

Options:
  --study NAME      the study (created if new)
  --format F        csv or jsonl (default: from the file's extension)
  --map M           your column names, e.g. --map id=case_id,presenting_symptoms=Symptoms
  --dry-run         validate and report, write nothing`;

export function printPlan(io: CliIO, plan: ImportPlan, written: boolean, dryRun: boolean, file: string) {
  listIssues(io, plan.parse.warnings, { kind: "warning", file });
  const problems = [...plan.parse.errors, ...plan.conflicts].sort((a, b) => a.line - b.line);
  if (problems.length) {
    listIssues(io, problems, { file });
    io.err(`${problems.length} error${problems.length === 1 ? "" : "s"}; nothing was imported.\n`);
    return;
  }
  const counts =
    `${plan.total} cases in file: ${plan.create} new, ${plan.update} changed, ${plan.unchanged} unchanged` +
    (plan.labelChanges ? `, ${plan.labelChanges} with changed reference labels` : "");
  if (dryRun) io.out(`Dry run for study "${plan.studyName}": ${counts}. Nothing was written.\n`);
  else if (!written) io.out(`Study "${plan.studyName}": ${counts}. Nothing to change.\n`);
  else io.out(`Imported into study "${plan.studyName}": ${counts}.\n`);
}

export const importCommand: Command = {
  name: "import",
  summary: "Import notes from CSV or JSONL into a study (validated as a whole)",
  help,
  async run(argv, io) {
    const { values, positionals } = parseOptions(
      argv,
      {
        study: { type: "string" },
        format: { type: "string" },
        map: { type: "string" },
        "dry-run": { type: "boolean", default: false },
      },
      true,
    );
    const studyName = StudyNameSchema.safeParse(requireOption(values.study, "--study"));
    if (!studyName.success) throw new CliError(studyName.error.issues[0]!.message);
    const study = studyName.data;
    if (positionals.length !== 1) throw new CliError("give exactly one FILE to import. See --help.");
    const file = positionals[0]!;
    if (values.format && values.format !== "csv" && values.format !== "jsonl")
      throw new CliError(`--format must be csv or jsonl, not "${values.format}".`);
    const columnMap = values.map ? parseColumnMap(values.map) : {};
    if (columnMap === null) throw new CliError('--map must look like "id=case_id,presenting_symptoms=Symptoms".');
    const unknown = Object.keys(columnMap).filter((k) => !(CASE_COLUMNS as readonly string[]).includes(k));
    if (unknown.length)
      throw new CliError(`--map names unknown column ${unknown.join(", ")}; known: ${CASE_COLUMNS.join(", ")}.`);
    // Read as a stream, chunk by chunk as the import writes (docs/reliability.md, "Bulk imports"), through the
    // import contract (docs/reliability.md, "The import contract").
    const format = formatOf(file, values.format as "csv" | "jsonl" | undefined);
    const input = {
      studyName: study,
      bytes: importFileChunks(file, "cases", { json: format === "jsonl" }),
      filename: file,
      format: values.format as "csv" | "jsonl" | undefined,
      columnMap: columnMap as Partial<Record<CaseColumn, string>>,
    };
    const db = getDb();
    if (values["dry-run"]) {
      const plan = planImport(db, input);
      printPlan(io, plan, false, true, file);
      return plan.ok ? 0 : 2;
    }
    let result;
    try {
      result = importCases(db, { ...input, actorId: null });
    } catch (e) {
      // Another import of the same study still running after the wait (docs/reliability.md, "Bulk imports").
      if (e instanceof ServiceError) throw new CliError(e.message);
      throw e;
    }
    printPlan(io, result, result.written, false, file);
    return result.ok ? 0 : 2;
  },
};
