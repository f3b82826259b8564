/**
 * `mentat-import-ratings`: MENTAT's own annotation files (jsPsych exports of its `annotated_data/` folder) as
 * submitted option ratings of a bank (services/mentat-annotations.server.ts; docs/mentat.md).
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { getDb } from "../platform/db.server";
import { importMentatAnnotations, type AnnotationFileInput, type FileIssue } from "./mentat-annotations.server";
import { importMentatRelease } from "./mentat-release.server";
import { CliError, parseOptions, requireOption, serviceCall, type CliIO, type Command } from "../cli/command";
import { importFileSource } from "../cli/io";

const MAX_LISTED = 30;

function readInputs(paths: string[]): AnnotationFileInput[] {
  const files: AnnotationFileInput[] = [];
  for (const path of paths) {
    let isDir: boolean;
    try {
      isDir = statSync(path).isDirectory();
    } catch {
      throw new CliError(`cannot read ${path}: no such file or folder.`);
    }
    // A folder: its CSV files in name order (MENTAT lists them unsorted; the order only matters for --duplicates).
    const names = isDir
      ? readdirSync(path)
          .filter((n) => n.toLowerCase().endsWith(".csv"))
          .sort()
          .map((n) => join(path, n))
      : [path];
    if (isDir && names.length === 0) throw new CliError(`${path} has no .csv files.`);
    // Every file through the import contract and the one streaming reader (docs/reliability.md, "The import
    // contract", "Memory bounded by the longest line"): strict UTF-8, never U+FFFD; the size and line limits; no NUL;
    // read record by record, never held whole.
    for (const name of names) files.push({ name, text: importFileSource(name, "mentatRatings", { json: false }) });
  }
  return files;
}

function listIssues(io: CliIO, issues: FileIssue[], prefix = ""): void {
  for (const i of issues.slice(0, MAX_LISTED)) io.err(`${i.file}:${i.line}: ${prefix}${i.message}\n`);
  if (issues.length > MAX_LISTED) io.err(`… and ${issues.length - MAX_LISTED} more\n`);
}

function raterMap(values: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of values ?? []) {
    const m = /^([^=\s]+)=([^=\s]+)$/.exec(v.trim());
    if (!m) throw new CliError(`--rater ${v}: give MENTAT_ID=USERNAME, e.g. --rater x1=alice.`);
    out[m[1]!.toLowerCase()] = m[2]!;
  }
  return out;
}

export const mentatImportRatingsCommand: Command = {
  name: "mentat-import-ratings",
  summary: "Import MENTAT's own annotation files (annotated_data/*.csv) as option ratings of a bank",
  help: `Usage: npm run concord -- mentat-import-ratings --bank NAME FILE|DIR … [--ids TEMPLATE] [--rater ID=USER …]
                                                [--duplicates refuse|last] [--replace] [--dry-run]
       npm run concord -- mentat-import-ratings --layout mentat-release --bank NAME DIR … [--ids TEMPLATE]
                                                [--no-creator] [--creator-skip N,N,…] [--dry-run]

Reads MENTAT's public rating exports (x{rater}_annotation_data_{n}.csv, jsPsych CSV) as MENTAT's pipeline reads
them: the rater is rater_id of the second row (lower-cased); the first four rows and the last are instructions;
each other row is a survey-slider rating with response {"Q0".."Q4", "comment"} in slider order, question_order
the permutation (option i's score is Q{question_order[i]}), q_no the question and q_key the gender text shown.
They become submitted ratings of the bank's questions, so mentat-fit refits MENTAT's data. Every file is checked
first; problems are listed as FILE:LINE and nothing is written (exit 2).

--layout mentat-release reads MENTAT's released annotated_data/ folder as MENTAT's own pipeline does: every row is
kept (a rater rated most questions several times, once per wording), the question's creator is added as the
pseudo-rater crtr with 100 on the intended answer (except MENTAT's questions 92, 173, 175), and the rows are
stored as the bank's MENTAT release (not as experts' ratings; a new import replaces the previous one). mentat-fit
then reproduces MENTAT's labels; its raters appear as mentat:ID.

Options:
  --layout L              ratings (default: one rating per expert and question, as Concord's workspace holds them)
                          or mentat-release (MENTAT's released files as its pipeline reads them)
  --bank NAME             the bank (import MENTAT's questions first with mentat-import)
  --ids TEMPLATE          the bank question id of q_no, {q_no} replaced (default "{q_no}")
  --rater ID=USER         the Concord user (rater role) of a MENTAT rater id; default the user named like the id
  --duplicates MODE       a rater's second rating of a question: refuse (default) or keep the last one read
  --replace               overwrite submitted ratings that differ
  --no-creator            mentat-release: leave the creator's pseudo-rater out
  --creator-skip N,N,…    mentat-release: MENTAT question numbers without a creator row (default 92,173,175)
  --dry-run               check and report without writing`,
  async run(argv, io) {
    const { values, positionals } = parseOptions(
      argv,
      {
        bank: { type: "string" },
        layout: { type: "string" },
        "no-creator": { type: "boolean", default: false },
        "creator-skip": { type: "string" },
        ids: { type: "string" },
        rater: { type: "string", multiple: true },
        duplicates: { type: "string" },
        replace: { type: "boolean", default: false },
        "dry-run": { type: "boolean", default: false },
      },
      true,
    );
    const bankName = requireOption(values.bank, "--bank");
    if (positionals.length === 0) throw new CliError("give at least one annotation FILE or DIR. See --help.");
    if (values.duplicates !== undefined && !["refuse", "last"].includes(values.duplicates))
      throw new CliError(`--duplicates ${values.duplicates}: use refuse or last.`);
    if (values.ids !== undefined && !values.ids.includes("{q_no}"))
      throw new CliError(`--ids ${values.ids}: the template must contain {q_no}.`);
    const layout = values.layout ?? "ratings";
    if (!["ratings", "mentat-release"].includes(layout))
      throw new CliError(`--layout ${layout}: use ratings or mentat-release.`);
    if (layout !== "mentat-release" && (values["no-creator"] || values["creator-skip"] !== undefined))
      throw new CliError("--no-creator and --creator-skip go with --layout mentat-release.");
    if (layout === "mentat-release" && (values.rater || values.duplicates || values.replace))
      throw new CliError("--rater, --duplicates and --replace do not apply to --layout mentat-release.");
    const files = readInputs(positionals);
    if (layout === "mentat-release") return importRelease(io, files, values);
    const result = serviceCall(() =>
      importMentatAnnotations(getDb(), {
        files,
        options: {
          bankName,
          idTemplate: values.ids,
          raters: raterMap(values.rater),
          duplicates: values.duplicates as "refuse" | "last" | undefined,
          replace: values.replace,
          dryRun: values["dry-run"],
        },
        actorId: null,
      }),
    );
    if (!result.ok) {
      listIssues(io, result.errors);
      listIssues(io, result.warnings, "warning: ");
      io.err(`concord mentat-import-ratings: ${result.errors.length} problem(s); nothing was written.\n`);
      if (result.errors.some((e) => e.message.includes("Concord keeps one rating per expert and question")))
        io.err(
          "These files hold several ratings per rater and question, as MENTAT's released annotation files do (one per " +
            "wording): --layout mentat-release imports them as MENTAT's pipeline reads them.\n",
        );
      return 2;
    }
    listIssues(io, result.warnings, "warning: ");
    io.out(
      `${result.written ? "Imported" : "Dry run: would import"} ${result.ratings} ratings from ${result.files} file(s) into bank "${result.bankName}": ` +
        `${result.created} new, ${result.replaced} replaced, ${result.unchanged} unchanged` +
        `${result.duplicatesDropped ? `, ${result.duplicatesDropped} earlier duplicate(s) dropped` : ""}.\n`,
    );
    for (const r of result.raters) io.out(`  ${r.mentat} → ${r.username}: ${r.ratings}\n`);
    if (result.outsidePreferenceDomains)
      io.out(
        `${result.outsidePreferenceDomains} rating(s) are of questions outside the bank's preference domains: mentat-fit leaves them out.\n`,
      );
    return 0;
  },
};

function importRelease(
  io: CliIO,
  files: AnnotationFileInput[],
  values: { bank?: string; ids?: string; "no-creator"?: boolean; "creator-skip"?: string; "dry-run"?: boolean },
): number {
  const skip = values["creator-skip"];
  if (skip !== undefined && !/^\s*(\d+\s*(,\s*\d+\s*)*)?$/.test(skip))
    throw new CliError(`--creator-skip ${skip}: give MENTAT question numbers separated by commas, e.g. 92,173,175.`);
  const result = serviceCall(() =>
    importMentatRelease(getDb(), {
      files,
      options: {
        bankName: requireOption(values.bank, "--bank"),
        idTemplate: values.ids,
        creator: !values["no-creator"],
        noCreator:
          skip === undefined ? undefined : skip.split(",").flatMap((n) => (n.trim() ? [String(Number(n))] : [])),
        dryRun: values["dry-run"],
      },
      actorId: null,
    }),
  );
  if (!result.ok) {
    listIssues(io, result.errors);
    listIssues(io, result.warnings, "warning: ");
    io.err(`concord mentat-import-ratings: ${result.errors.length} problem(s); nothing was written.\n`);
    return 2;
  }
  listIssues(io, result.warnings, "warning: ");
  io.out(
    `${result.written ? "Imported" : "Dry run: would import"} MENTAT's release into bank "${result.bankName}": ` +
      `${result.ratings} ratings from ${result.files} file(s) of ${result.questions} questions (all kept; ` +
      `${result.repeats} repeat a rater's question in another wording or file), ${result.creatorRows} creator rows` +
      `${result.replacedRelease ? `; replaces the previous release (${result.replacedRelease} rows)` : ""}.\n`,
  );
  for (const r of result.raters) io.out(`  ${r.rater}: ${r.ratings}\n`);
  return 0;
}
