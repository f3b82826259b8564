/**
 * Commands of the preparation project's quality check (docs/preparation.md, "Quality"): the scores and verdicts
 * (`prep-quality`) and the import of COMET scores computed elsewhere (`prep-comet`).
 */
import type { PrepQualitySettings } from "../../db/vocabulary";
import { CliError, parseOptions, requireOption, serviceCall, type Command } from "../cli/command";
import { listIssues, readImportFile, table } from "../cli/io";
import { getDb } from "../platform/db.server";
import { formatOf } from "../annotation/public";
import { parseListFile } from "./domain/settings-files";
import { findProjectByName } from "./projects.server";
import { computeProjectQuality, importCometScores } from "./quality.server";

/** A threshold flag: a number, or "none" for no check. */
function threshold(flag: string, value: string | undefined): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === "none") return null;
  if (!/^[+-]?(\d+(\.\d*)?|\.\d+)$/.test(value))
    throw new CliError(`${flag} must be a number or "none", not "${value}".`);
  return Number(value);
}

export const prepQualityCommand: Command = {
  name: "prep-quality",
  summary:
    "Score a preparation project's back-translations (BLEU, chrF, COMET, test names) and flag notes for correction",
  help: `Usage: npm run concord -- prep-quality --project NAME [--min-bleu X] [--min-chrf Y] [--min-comet Z] [--tests FILE]

Computes, for every note whose translated sections all have a back-translation, BLEU and chrF of each section's
back-translation against its source text (sacreBLEU's defaults) and of the note as a whole, takes the COMET scores
imported with prep-comet, and checks that the test names and scores of the source are in the back-translation. A
note below a threshold or with a missing test name or score needs correction, with the reason in words
(docs/preparation.md, "Quality").

Thresholds and the test list given here are stored as the project's and used from then on; without them the
stored ones (defaults: BLEU 25, chrF 50, COMET not checked, the tests of the Safe-Psych translation prompt).

Options:
  --project NAME      the preparation project
  --min-bleu X        a note's BLEU (0-100) below X needs correction; "none" for no check
  --min-chrf Y        the same for chrF (0-100)
  --min-comet Z       the same for the note's mean COMET (the COMET model's scale); "none" for no check
  --tests FILE        the test names to check, one a line, matched exactly as written
  --json              the result as JSON`,
  async run(argv, io) {
    const { values } = parseOptions(argv, {
      project: { type: "string" },
      "min-bleu": { type: "string" },
      "min-chrf": { type: "string" },
      "min-comet": { type: "string" },
      tests: { type: "string" },
      json: { type: "boolean" },
    });
    const name = requireOption(values.project, "--project");
    const settings: Partial<PrepQualitySettings> = {};
    const bleu = threshold("--min-bleu", values["min-bleu"]);
    const chrf = threshold("--min-chrf", values["min-chrf"]);
    const comet = threshold("--min-comet", values["min-comet"]);
    if (bleu !== undefined) settings.minBleu = bleu;
    if (chrf !== undefined) settings.minChrf = chrf;
    if (comet !== undefined) settings.minComet = comet;
    if (values.tests !== undefined) {
      const tests = parseListFile(readImportFile(values.tests, "preparation", { json: false }));
      if (tests.length === 0) throw new CliError(`${values.tests}: the file names no test.`);
      settings.tests = tests;
    }
    const db = getDb();
    const project = findProjectByName(db, name);
    if (!project) throw new CliError(`no preparation project "${name}".`);
    const r = serviceCall(() =>
      computeProjectQuality(db, {
        projectId: project.id,
        ...(Object.keys(settings).length ? { settings } : {}),
        actorId: null,
      }),
    );
    if (values.json) {
      io.out(JSON.stringify(r, null, 2) + "\n");
      return 0;
    }
    const f = (x: number | null) => (x === null ? "–" : x.toFixed(1));
    const t = (x: number | null) => (x === null ? "not checked" : String(x));
    for (const line of table([
      ["notes scored", String(r.scored)],
      ["waiting for back-translation", String(r.waiting)],
      ["not scored: translation not of the final text", String(r.stale)],
      ["needing correction", String(r.needsCorrection)],
      ["project BLEU", f(r.bleu)],
      ["project chrF", f(r.chrf)],
      [
        "thresholds (BLEU, chrF, COMET)",
        `${t(r.settings.minBleu)}, ${t(r.settings.minChrf)}, ${t(r.settings.minComet)}`,
      ],
    ]))
      io.out(line + "\n");
    return 0;
  },
};

export const prepCometCommand: Command = {
  name: "prep-comet",
  summary: "Import COMET scores of a preparation project's translated sections (validated as a whole)",
  help: `Usage: npm run concord -- prep-comet --project NAME FILE

Imports COMET scores computed elsewhere, one per note and section (docs/preparation.md, "Quality"). FILE is CSV with
the header note_id,section,score, or JSONL with those keys: note_id the note's id as imported, section the section's
number (0-based) or its kind, score a number. The whole file is checked first: every problem is reported as
"FILE:LINE: reason" (an unknown note or section, a note and section given twice with both lines) and nothing is
imported (exit code 2). Run prep-quality afterwards to take the scores into the notes' verdicts.

Options:
  --project NAME   the preparation project
  --format F       csv or jsonl (default: from the file's extension)`,
  async run(argv, io) {
    const { values, positionals } = parseOptions(
      argv,
      { project: { type: "string" }, format: { type: "string" } },
      true,
    );
    const name = requireOption(values.project, "--project");
    if (positionals.length !== 1) throw new CliError("give exactly one FILE to import. See --help.");
    const file = positionals[0]!;
    if (values.format && values.format !== "csv" && values.format !== "jsonl")
      throw new CliError(`--format must be csv or jsonl, not "${values.format}".`);
    const format = formatOf(file, values.format as "csv" | "jsonl" | undefined);
    if (!format)
      throw new CliError(
        `${file}: name the format with --format csv or --format jsonl (the file's name ends in neither).`,
      );
    const db = getDb();
    const project = findProjectByName(db, name);
    if (!project) throw new CliError(`no preparation project "${name}".`);
    const text = readImportFile(file, "preparation", { json: format === "jsonl" });
    const r = serviceCall(() => importCometScores(db, { projectId: project.id, text, format, actorId: null }));
    if (!r.ok) {
      listIssues(io, r.errors, { file });
      io.err(`${r.errors.length} error${r.errors.length === 1 ? "" : "s"}; nothing was imported.\n`);
      return 2;
    }
    io.out(`Imported ${r.scores} COMET scores of ${r.notes} notes into "${project.name}".\n`);
    return 0;
  },
};
