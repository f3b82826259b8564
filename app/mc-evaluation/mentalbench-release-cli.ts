/**
 * `mc-import-mentalbench`: MentalBench's released data set folder as one items file that `mc-run --items` reads
 * (docs/mc-evaluation.md, "MentalBench's released folder"). The folder is read whole and checked first; any problem
 * is listed as FILE:LINE and nothing is written (exit 2). The items file goes through the output layer: complete
 * or absent.
 */
import { readdirSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { CliError, parseOptions, requireOption, type CliIO, type Command } from "../cli/command";
import { listIssues, readImportFile, table } from "../cli/io";
import { writeFileAtomic } from "../platform/output-files.server";
import { CASE_TYPES, parseItems, type CaseType } from "./domain/items";
import { releaseFile, releaseItems, type ReleaseItem, type ReleaseProblem } from "./domain/mentalbench-release";

const MAX_FILES_LISTED = 30;

/** Every file under `dir`, relative and `/`-separated, in name order. */
function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (at: string) => {
    for (const name of readdirSync(at).sort()) {
      const full = join(at, name);
      if (statSync(full).isDirectory()) walk(full);
      else out.push(relative(dir, full).split(sep).join("/"));
    }
  };
  walk(dir);
  return out;
}

/** The release's dataset folder: DIR itself, or DIR/resources/dataset when DIR is the repository. */
function datasetFolder(from: string): string {
  let isDir: boolean;
  try {
    isDir = statSync(from).isDirectory();
  } catch {
    throw new CliError(`cannot read ${from}: no such folder.`);
  }
  if (!isDir) throw new CliError(`${from} is not a folder: give MentalBench's resources/dataset folder.`);
  const nested = join(from, "resources", "dataset");
  try {
    if (statSync(nested).isDirectory()) return nested;
  } catch {
    // not the repository root: DIR is the dataset folder itself
  }
  return from;
}

function listOption(value: string | undefined, flag: string): string[] | null {
  if (value === undefined) return null;
  const list = [
    ...new Set(
      value
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
  if (list.length === 0) throw new CliError(`${flag}: give a comma-separated list. See --help.`);
  return list;
}

function typesOption(value: string | undefined): Set<CaseType> {
  const list = listOption(value, "--types");
  if (!list) return new Set(CASE_TYPES);
  const byNumber: Record<string, CaseType> = { "1": "I", "2": "II", "3": "III", "4": "IV" };
  return new Set(
    list.map((t) => {
      const type = byNumber[t] ?? (CASE_TYPES as readonly string[]).find((c) => c === t.toUpperCase());
      if (!type) throw new CliError(`--types ${value}: use I, II, III, IV (or 1–4), comma-separated.`);
      return type as CaseType;
    }),
  );
}

export const mcImportMentalbenchCommand: Command = {
  name: "mc-import-mentalbench",
  summary: "Turn MentalBench's released data set folder into one items file for mc-run",
  help: `Usage: npm run concord -- mc-import-mentalbench --from DIR --out FILE.jsonl [--types I,II,III,IV]
                                                [--generators gemini,gpt5,qwen235] [--no-clusters]

Reads MentalBench's released folder (its repository, or its resources/dataset folder) and writes every case as one
MentalBench item of mc-run (docs/mc-evaluation.md): Type I from low/<D>/main_<generator>.json, Type II from
medium/…, Type III from high/<D>/<D'>/type3/…, Type IV from high/<D>/<D'>/type4/a_… and b_…; the features/ files
are generation inputs and are not read. Ids are <case key>/<generator> (Type IV <case key>/<a|b>/<generator>);
the disease is the code MentalBench's scripts group by (D001, or the pair D001-D005); the cluster is the disease's
DSM-5 chapter (a pair takes its first disease's). Every file is checked first; problems are listed as FILE:LINE
and nothing is written (exit 2).

Options:
  --from DIR              MentalBench's repository or its resources/dataset folder (required)
  --out FILE              the items file to write, JSON Lines (required)
  --types LIST            case types to keep, comma-separated (default all: I,II,III,IV)
  --generators LIST       generating models to keep, by file name (default all the folder holds: the paper's
                          counts; MentalBench's evaluation scripts list gemini, gpt5 and anthropic, so as written
                          they read the gemini and gpt5 files only)
  --no-clusters           leave clusters out (give mc-report --clusters FILE instead)`,
  async run(argv: string[], io: CliIO) {
    const { values } = parseOptions(argv, {
      from: { type: "string" },
      out: { type: "string" },
      types: { type: "string" },
      generators: { type: "string" },
      "no-clusters": { type: "boolean", default: false },
    });
    const from = requireOption(values.from, "--from");
    const out = requireOption(values.out, "--out");
    const types = typesOption(values.types);
    const generators = listOption(values.generators, "--generators");
    const dataset = datasetFolder(from);

    const files = listFiles(dataset)
      .map((rel) => ({ rel, file: releaseFile(rel) }))
      .filter((f): f is { rel: string; file: NonNullable<ReturnType<typeof releaseFile>> } => f.file !== null);
    if (files.length === 0)
      throw new CliError(
        `${dataset} holds none of MentalBench's case files (low/<D>/main_<generator>.json, medium/…, high/…/type3/…, high/…/type4/…).`,
      );
    const found = [...new Set(files.map((f) => f.file.generator))].sort();
    const unknown = (generators ?? []).filter((g) => !found.includes(g));
    if (unknown.length)
      throw new CliError(`--generators: ${unknown.join(", ")} not in ${dataset} (it holds ${found.join(", ")}).`);
    const chosen = files.filter(
      (f) => types.has(f.file.type) && (!generators || generators.includes(f.file.generator)),
    );
    if (chosen.length === 0) throw new CliError(`no case files of the chosen types and generators in ${dataset}.`);

    // Read and check every file before writing anything.
    const items: ReleaseItem[] = [];
    /** Where each item came from, to name the file and line of a problem the item check finds. */
    const origins: { source: string; line: number }[] = [];
    const problems = new Map<string, ReleaseProblem[]>();
    for (const { rel, file } of chosen) {
      const path = join(dataset, rel);
      const text = readImportFile(path, "mcItems", { json: true });
      const r = releaseItems(file, rel, text, { clusters: !values["no-clusters"] });
      if (r.problems.length) problems.set(path, r.problems);
      for (const item of r.items) {
        items.push(item);
        const at = text.indexOf(`${JSON.stringify(item.id.split("/")[0])}:`);
        origins.push({ source: path, line: at < 0 ? 1 : text.slice(0, at).split("\n").length });
      }
    }
    // The items as mc-run will read them, checked by its own reader (answers, option letters, ids, text policy).
    const jsonl = items.map((i) => JSON.stringify(i)).join("\n") + "\n";
    const checked = parseItems(jsonl, { csv: false, format: "mentalbench" });
    const add = (map: Map<string, ReleaseProblem[]>, issue: { line: number; message: string }) => {
      const origin = origins[issue.line - 1] ?? { source: out, line: issue.line };
      const list = map.get(origin.source) ?? [];
      list.push({ line: origin.line, message: issue.message });
      map.set(origin.source, list);
    };
    for (const e of checked.errors) add(problems, e);
    const warnings = new Map<string, ReleaseProblem[]>();
    for (const w of checked.warnings) add(warnings, w);

    const listAll = (map: Map<string, ReleaseProblem[]>, kind: "error" | "warning") => {
      let n = 0;
      for (const [file, list] of map) {
        if (n++ >= MAX_FILES_LISTED) {
          io.err(`… and ${map.size - MAX_FILES_LISTED} more files with ${kind}s\n`);
          break;
        }
        listIssues(io, list, { file, kind });
      }
    };
    listAll(warnings, "warning");
    if (problems.size > 0) {
      listAll(problems, "error");
      const count = [...problems.values()].reduce((s, l) => s + l.length, 0);
      io.err(`concord mc-import-mentalbench: ${count} problem(s) in ${problems.size} file(s); nothing was written.\n`);
      return 2;
    }

    writeFileAtomic(out, jsonl);

    const gens = [...new Set(items.map((i) => i.generator))].sort();
    const rows: string[][] = [["type", ...gens, "all"]];
    for (const type of CASE_TYPES) {
      if (!types.has(type)) continue;
      const of = items.filter((i) => i.type === type);
      rows.push([type, ...gens.map((g) => String(of.filter((i) => i.generator === g).length)), String(of.length)]);
    }
    io.out(`Wrote ${items.length} items from ${chosen.length} files to ${out}.\n`);
    for (const line of table(rows)) io.out(`${line}\n`);
    return 0;
  },
};
