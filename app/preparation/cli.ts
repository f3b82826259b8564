/**
 * Commands of the preparation protocol (docs/preparation.md): the import of a project's source notes, its
 * reviewers, the detectors' recall and precision on a labelled set, the release of the final English notes and the
 * export of the minimised ones.
 */
import { z } from "zod";
import { listIssues, readImportFile, table } from "../cli/io";
import { CliError, parseOptions, requireOption, serviceCall, type CliIO, type Command } from "../cli/command";
import { writeFileAtomic } from "../platform/output-files.server";
import { refusalLine } from "../formats/import-contract";
import { parseColumnMap } from "../platform/forms";
import { getDb } from "../platform/db.server";
import { CASE_COLUMNS, formatOf, type CaseColumn } from "../annotation/public";
import type { PrepDetectorSettings } from "../../db/vocabulary";
import { CATEGORIES } from "./domain/detectors";
import { evaluateDetectors, type LabelledNote } from "./domain/detector-evaluation";
import { DEFAULT_SETTINGS, detectorConfig } from "./domain/review";
import { parseScoreTable } from "./domain/score-table";
import { parseListFile } from "./domain/settings-files";
import { changeReviewers, findProjectByName, importPreparationNotes } from "./projects.server";
import { missingLines, notesCsv, notesJsonl, readPlan, releaseToStudy } from "./release.server";

const importHelp = `Usage: npm run concord -- prep-import --project NAME --language LANG FILE [options]

Creates the preparation project NAME from source-language notes, with the detectors' proposals on every note
(docs/preparation.md). FILE has the case import's layout (CSV or JSONL: id, age_group, sex and the five sections;
docs/formats.md); LANG names the notes' language ("ro", "hu", "pt-BR").

The whole file is validated first: every bad row is reported as "FILE:LINE: reason" and nothing is imported (exit
code 2). A project is imported once: an existing name is refused.

Options:
  --project NAME          the new project
  --language LANG         the source language
  --format F              csv or jsonl (default: from the file's extension)
  --map M                 your column names, e.g. --map id=case_id,presenting_symptoms=Symptoms
  --places FILE           place names, one a line
  --names FILE            person names (clinicians, staff), one a line
  --institutions FILE     institution names, one a line
  --name-patterns FILE    regular expressions matching names, one a line
  --score-table FILE      test score ranges (CSV: test,aliases,from,to); default: the table in docs/preparation.md`;

export const prepImportCommand: Command = {
  name: "prep-import",
  summary: "Create a preparation project from source-language notes (validated as a whole)",
  help: importHelp,
  async run(argv, io) {
    const { values, positionals } = parseOptions(
      argv,
      {
        project: { type: "string" },
        language: { type: "string" },
        format: { type: "string" },
        map: { type: "string" },
        places: { type: "string" },
        names: { type: "string" },
        institutions: { type: "string" },
        "name-patterns": { type: "string" },
        "score-table": { type: "string" },
      },
      true,
    );
    const project = requireOption(values.project, "--project");
    const language = requireOption(values.language, "--language");
    if (positionals.length !== 1) throw new CliError("give exactly one FILE to import. See --help.");
    const file = positionals[0]!;
    if (values.format && values.format !== "csv" && values.format !== "jsonl")
      throw new CliError(`--format must be csv or jsonl, not "${values.format}".`);
    const columnMap = values.map ? parseColumnMap(values.map) : {};
    if (columnMap === null) throw new CliError('--map must look like "id=case_id,presenting_symptoms=Symptoms".');
    const unknown = Object.keys(columnMap).filter((k) => !(CASE_COLUMNS as readonly string[]).includes(k));
    if (unknown.length)
      throw new CliError(`--map names unknown column ${unknown.join(", ")}; known: ${CASE_COLUMNS.join(", ")}.`);
    // Every file through the import contract (docs/reliability.md, "The import contract"), all read before a write.
    const list = (path: string | undefined) =>
      path === undefined ? [] : parseListFile(readImportFile(path, "preparation", { json: false }));
    const settings: PrepDetectorSettings = {
      ...DEFAULT_SETTINGS,
      places: list(values.places),
      names: list(values.names),
      institutions: list(values.institutions),
      namePatterns: list(values["name-patterns"]),
    };
    if (values["score-table"]) {
      const path = values["score-table"];
      const parsed = parseScoreTable(readImportFile(path, "preparation", { json: false }));
      if (parsed.errors.length) {
        listIssues(io, parsed.errors, { file: path });
        io.err(`${parsed.errors.length} error${parsed.errors.length === 1 ? "" : "s"}; nothing was imported.\n`);
        return 2;
      }
      settings.scoreTable = parsed.table;
    }
    const format = formatOf(file, values.format as "csv" | "jsonl" | undefined);
    const text = readImportFile(file, "preparation", { json: format === "jsonl" });
    const result = importPreparationNotes(getDb(), {
      projectName: project,
      language,
      text,
      filename: file,
      format: values.format as "csv" | "jsonl" | undefined,
      columnMap: columnMap as Partial<Record<CaseColumn, string>>,
      settings,
      actorId: null,
    });
    listIssues(io, result.warnings, { file, kind: "warning" });
    if (!result.ok) {
      listIssues(io, result.errors, { file });
      io.err(`${result.errors.length} error${result.errors.length === 1 ? "" : "s"}; nothing was imported.\n`);
      return 2;
    }
    io.out(
      `Created preparation project "${result.projectName}" (${language}): ${result.notes} notes, ${result.proposals} proposals.\n`,
    );
    return 0;
  },
};

export const prepReviewersCommand: Command = {
  name: "prep-reviewers",
  summary: "Name or remove the reviewers of a preparation project",
  help: `Usage: npm run concord -- prep-reviewers --project NAME [--add USER,…] [--remove USER,…]

Names the users who review the project's notes (with the admins, the only people who see its source text;
docs/security.md) or takes them off. Without --add or --remove, lists them.`,
  async run(argv, io) {
    const { values } = parseOptions(argv, {
      project: { type: "string" },
      add: { type: "string" },
      remove: { type: "string" },
    });
    const name = requireOption(values.project, "--project");
    const db = getDb();
    const project = findProjectByName(db, name);
    if (!project) throw new CliError(`no preparation project "${name}".`);
    const split = (v: string | undefined) =>
      (v ?? "")
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
    const changed = serviceCall(() =>
      changeReviewers(db, {
        projectId: project.id,
        add: split(values.add),
        remove: split(values.remove),
        actorId: null,
      }),
    );
    if (changed.added.length) io.out(`Added: ${changed.added.join(", ")}\n`);
    if (changed.removed.length) io.out(`Removed: ${changed.removed.join(", ")}\n`);
    return 0;
  },
};

const LabelledFileSchema = z.object({
  config: z
    .object({
      places: z.array(z.string()).default([]),
      names: z.array(z.string()).default([]),
      institutions: z.array(z.string()).default([]),
      namePatterns: z.array(z.string()).default([]),
    })
    .default({ places: [], names: [], institutions: [], namePatterns: [] }),
  notes: z.array(
    z.object({
      id: z.string(),
      language: z.string(),
      sections: z.array(z.string()),
      gold: z.array(
        z.object({
          section: z.number().int().min(0),
          category: z.enum(CATEGORIES),
          text: z.string().min(1),
          nth: z.number().int().min(1).optional(),
        }),
      ),
    }),
  ),
});

const pct = (x: number | null) => (x === null ? "–" : `${(x * 100).toFixed(1)}%`);

export const prepDetectorsCommand: Command = {
  name: "prep-detectors",
  summary: "Recall and precision of the minimisation detectors on a labelled set",
  help: `Usage: npm run concord -- prep-detectors FILE [--score-table CSV] [--json]

Runs the minimisation detectors over the notes of FILE (JSON: { config: { places, names, institutions,
namePatterns }, notes: [{ id, language, sections: [text…], gold: [{ section, category, text, nth? }] }] }) and
prints, per category, the gold spans, the detections, the matches (a detection overlapping a gold span of its
category, one to one), the exact matches, precision and recall (docs/preparation.md, "How well the detectors do").`,
  async run(argv, io) {
    const { values, positionals } = parseOptions(
      argv,
      { json: { type: "boolean", default: false }, "score-table": { type: "string" } },
      true,
    );
    if (positionals.length !== 1) throw new CliError("give exactly one labelled FILE. See --help.");
    const file = positionals[0]!;
    let raw: unknown;
    try {
      raw = JSON.parse(readImportFile(file, "preparation", { json: true }));
    } catch (e) {
      throw new CliError(refusalLine(file, { line: 0, message: `not JSON: ${(e as Error).message}` }));
    }
    const parsed = LabelledFileSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new CliError(refusalLine(file, { line: 0, message: `${issue.path.join(".")}: ${issue.message}` }));
    }
    let scoreTable = null;
    if (values["score-table"]) {
      const t = parseScoreTable(readImportFile(values["score-table"], "preparation", { json: false }));
      if (t.errors.length) {
        listIssues(io, t.errors, { file: values["score-table"] });
        return 2;
      }
      scoreTable = t.table;
    }
    const config = detectorConfig({ ...DEFAULT_SETTINGS, ...parsed.data.config, scoreTable });
    let scores;
    try {
      scores = evaluateDetectors(parsed.data.notes as LabelledNote[], config);
    } catch (e) {
      throw new CliError(refusalLine(file, { line: 0, message: (e as Error).message }));
    }
    if (values.json) {
      io.out(`${JSON.stringify(scores, null, 2)}\n`);
      return 0;
    }
    const rows = [
      ["category", "gold", "detected", "matched", "exact", "precision", "recall"],
      ...scores.map((s) => [
        s.category,
        String(s.gold),
        String(s.detected),
        String(s.matched),
        String(s.exact),
        pct(s.precision),
        pct(s.recall),
      ]),
    ];
    io.out(`${table(rows).join("\n")}\n`);
    return 0;
  },
};

const projectOrFail = (name: string) => {
  const project = findProjectByName(getDb(), name);
  if (!project) throw new CliError(`no preparation project "${name}".`);
  return project;
};

/** The refusal of a release or an export: one line per note that is not ready, then what was (not) done. */
function refuseMissing(io: CliIO, message: string, lines: readonly string[]): number {
  for (const l of lines) io.err(`${l}\n`);
  io.err(`${message} Nothing was written.\n`);
  return 2;
}

export const prepReleaseCommand: Command = {
  name: "prep-release",
  summary: "Release a preparation project's final English notes as a Safe-Psych study (or a released CSV)",
  help: `Usage: npm run concord -- prep-release --project NAME (--study STUDY | --csv FILE)

Turns the project's final, non-excluded notes into English cases (docs/preparation.md, "Release"): per section the
text a reviewer corrected, else the translation; age group and sex as imported. With --study, a new Safe-Psych study
made through the case import (the study must not exist); with --csv, a file in the released CSV's layout (the label
columns empty), written whole or not at all, every cell formula-safe.

Refused as a whole (exit code 2, one line per note) while any note is not reviewed, waits for a settlement or a
correction, or has a section not translated from its final text. Nothing is half-released.`,
  async run(argv, io) {
    const { values } = parseOptions(argv, {
      project: { type: "string" },
      study: { type: "string" },
      csv: { type: "string" },
    });
    const project = projectOrFail(requireOption(values.project, "--project"));
    if ((values.study === undefined) === (values.csv === undefined))
      throw new CliError("give --study STUDY or --csv FILE (one of them). See --help.");
    const db = getDb();
    if (values.study !== undefined) {
      const study = values.study;
      const r = serviceCall(() =>
        releaseToStudy(db, { projectId: project.id, projectName: project.name, studyName: study, actorId: null }),
      );
      if (!r.ok) return refuseMissing(io, r.message, r.lines);
      io.out(
        `Released "${project.name}" as study "${r.study}": ${r.notes} notes (excluded cases left out: ${r.excluded}).\n`,
      );
      return 0;
    }
    const plan = readPlan(db, project.id, "release");
    if (plan.missing.length)
      return refuseMissing(io, `Not released: ${plan.missing.length} notes are not ready.`, missingLines(plan.missing));
    writeFileAtomic(values.csv!, notesCsv(plan.notes, { released: true }));
    io.out(
      `Wrote ${plan.notes.length} notes of "${project.name}" to ${values.csv} (excluded cases left out: ${plan.excluded}).\n`,
    );
    return 0;
  },
};

export const prepExportCommand: Command = {
  name: "prep-export",
  summary: "Export a preparation project's final minimised notes (source language) as CSV or JSONL",
  help: `Usage: npm run concord -- prep-export --project NAME --out FILE [--format csv|jsonl]

Writes the project's notes after their final review, in the source language, excluded cases left out, in the case
import's layout (docs/preparation.md, "Export"; docs/formats.md): CSV (every cell formula-safe) or JSONL, from
--format or the file's extension. The file is written whole or not at all; refused (exit code 2, one line per note)
while any note is not reviewed or waits for a settlement.`,
  async run(argv, io) {
    const { values } = parseOptions(argv, {
      project: { type: "string" },
      out: { type: "string" },
      format: { type: "string" },
    });
    const project = projectOrFail(requireOption(values.project, "--project"));
    const out = requireOption(values.out, "--out");
    if (values.format && values.format !== "csv" && values.format !== "jsonl")
      throw new CliError(`--format must be csv or jsonl, not "${values.format}".`);
    const format = formatOf(out, values.format as "csv" | "jsonl" | undefined);
    if (!format) throw new CliError("name the format: --format csv or jsonl, or an --out ending in .csv or .jsonl.");
    const plan = readPlan(getDb(), project.id, "export");
    if (plan.missing.length)
      return refuseMissing(io, `Not exported: ${plan.missing.length} notes are not final.`, missingLines(plan.missing));
    writeFileAtomic(out, format === "csv" ? notesCsv(plan.notes) : notesJsonl(plan.notes));
    io.out(
      `Wrote ${plan.notes.length} minimised notes of "${project.name}" to ${out} (excluded cases left out: ${plan.excluded}).\n`,
    );
    return 0;
  },
};
