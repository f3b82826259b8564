/**
 * Judge validation on the command line (docs/judge-validation.md): import responses, draw the bucket sample, assign raters,
 * export the sheets, import candidate judges' outputs, and the report. The same services and core as the admin pages.
 */
import { compareCodePoints } from "../python-compat/text";
import { readdirSync, statSync } from "node:fs";
import { writeFolderAtomic } from "../platform/output-files.server";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import type { ResponseFormat, RunSource } from "./domain/judge-import";
import { RESPONSE_FORMATS } from "./domain/judge-import";
import { parseJudgeLabelsCsv } from "./domain/judge-labels-csv";
import { buildJudgeReport, judgeLabelsCsv, TASKS, type JudgeReport } from "./domain/judge-report";
import { BUCKET_SAMPLING_ORDER, type ValidationBucket } from "./domain/validation-set";
import { getDb } from "../platform/db.server";
import { importJudgeOutputs, planJudgeImport, setLabels } from "./judge-candidates.server";
import { drawSample, type BucketRow } from "./judge-sample.server";
import { exportSetFile, SET_EXPORT_FILES } from "./judge-set-export.server";
import {
  importResponses,
  planResponsesImport,
  type ResponsesFile,
  type ResponsesImportPlan,
} from "./judge-responses.server";
import { listSetRaters, startRating } from "./judge-raters.server";
import { requireJudgeSetByName } from "./judge-sets.server";
import { ServiceError } from "../platform/service-error";
import { CliError, parseOptions, requireOption, type CliIO, type Command } from "../cli/command";
import { importFileSource, listIssues, table } from "../cli/io";
import type { ImportSource } from "../formats/import-source";
import { maxOf, pushAll } from "../stats/extremes";

/**
 * A responses file through the import contract and the one streaming reader (docs/reliability.md, "The import
 * contract", "Memory bounded by the longest line"): read line by line, never held whole.
 */
function responsesStream(path: string): ImportSource {
  return importFileSource(path, "judge", { json: !/\.csv$/i.test(path) });
}

function serviceErrors<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof ServiceError) throw new CliError(e.message);
    if (e && typeof e === "object" && "issues" in e)
      throw new CliError((e as { issues: { message: string }[] }).issues[0].message);
    throw e;
  }
}

// Path segments compared one by one, as Python sorts `Path` objects (sorted(root.glob("**/trajectories.jsonl"))).
function byPathParts(a: string, b: string): number {
  const pa = a.split(sep);
  const pb = b.split(sep);
  for (let i = 0; i < Math.min(pa.length, pb.length); i++)
    if (pa[i] !== pb[i]) return compareCodePoints(pa[i]!, pb[i]!);
  return pa.length - pb.length;
}

function trajectoryFiles(dir: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name === "trajectories.jsonl") found.push(path);
    }
  };
  walk(dir);
  return found.sort(byPathParts);
}

/**
 * The run a trajectories.jsonl belongs to (docs/formats.md#run-folders, docs/judge-validation.md#importing-responses): its folder's name, and that folder relative to the
 * parent of `root` (so `runs/<name>` when the runs/ folder is given, or the file inside it).
 */
function runSource(file: string, root: string): RunSource {
  const runDir = dirname(resolve(file));
  const dir = relative(dirname(resolve(root)), runDir)
    .split(sep)
    .join("/");
  // collect_trajectories.py writes str(traj_path): the file's path from where runs/ is, not its bare name.
  return { name: basename(runDir), dir, file: dir ? `${dir}/${basename(file)}` : basename(file) };
}

function printImportPlan(io: CliIO, plan: ResponsesImportPlan) {
  if (plan.refusal) {
    io.err(`${plan.refusal}\n`);
    return;
  }
  for (const f of plan.files) listIssues(io, f.parse.warnings, { file: f.filename, kind: "warning" });
  let errors = 0;
  for (const f of plan.files) {
    listIssues(io, f.parse.errors, { file: f.filename, kind: "error" });
    errors += f.parse.errors.length;
  }
  if (errors) io.err(`${errors} error${errors === 1 ? "" : "s"}; nothing was imported.\n`);
}

export const judgeImportCommand: Command = {
  name: "judge-import",
  summary: "Import model responses into a judge-validation set (validated as a whole)",
  help: `Usage: npm run concord -- judge-import --set NAME FILE|DIR [--format F] [--run NAME] [--dry-run]

Imports model responses to validate a judge on (docs/judge-validation.md) into a validation set, creating the set if it is new.
FILE is JSONL in one of three formats, detected from its first line:
  trajectories  the reference's trajectories.jsonl (one case per line with its steps, docs/judge-validation.md), flattened to
                one response per step as the reference's collect_trajectories.py does: source_run_name (the run
                folder), source_run_dir, source_file, the run keys and the ten step fields, then any other step keys
                (e.g. the first parse new_judge_output)
  flattened     rows as collect_trajectories.py writes them (one step per line), optionally with new_judge_output
  simple        {"id", "model", "strategy", "step", "is_last_section", "response", "features"?} per line, features
                being the first parse {primary_answer, contingency, info_request, icd_codes, diagnosis_names}
DIR imports every trajectories.jsonl below it, in sorted path order, as the reference collects runs/.

The whole input is validated first: every bad line is reported as FILE:LINE: reason and nothing is written. The same
file twice, or a response already in the set (same run, model, strategy, sample and step), is an error. Responses can
be added only while the set is drafting; adding some discards a drawn sample (draw it again with judge-sample).

Options:
  --set NAME    the validation set (created if new)
  --format F    trajectories, flattened or simple (default: detected)
  --run NAME    the run folder name of a single trajectories.jsonl (default: the folder the file is in)
  --dry-run     validate and report, write nothing`,
  async run(argv, io) {
    const { values, positionals } = parseOptions(
      argv,
      {
        set: { type: "string" },
        format: { type: "string" },
        run: { type: "string" },
        "dry-run": { type: "boolean", default: false },
      },
      true,
    );
    const setName = requireOption(values.set, "--set");
    if (positionals.length !== 1) throw new CliError("give exactly one FILE or DIR to import. See --help.");
    if (values.format !== undefined && !(RESPONSE_FORMATS as readonly string[]).includes(values.format))
      throw new CliError(`--format must be one of ${RESPONSE_FORMATS.join(", ")}, not "${values.format}".`);
    const path = positionals[0];
    let files: ResponsesFile[];
    let isDir: boolean;
    try {
      isDir = statSync(path).isDirectory();
    } catch {
      throw new CliError(`cannot read ${path}: no such file.`);
    }
    if (isDir) {
      if (values.run)
        throw new CliError("--run names the run of a single trajectories.jsonl; a folder's runs are its subfolders.");
      const found = trajectoryFiles(path);
      if (found.length === 0) throw new CliError(`no trajectories.jsonl below ${path}.`);
      files = found.map((f) => ({ stream: responsesStream(f), filename: f, source: runSource(f, path) }));
    } else {
      const source = runSource(path, dirname(dirname(path)));
      if (values.run) {
        source.name = values.run;
        source.dir = `runs/${values.run}`;
        source.file = `${source.dir}/${basename(path)}`;
      }
      files = [{ stream: responsesStream(path), filename: path, source }];
    }
    const input = { setName, files, format: values.format as ResponseFormat | undefined };
    const db = getDb();
    if (values["dry-run"]) {
      const plan = serviceErrors(() => planResponsesImport(db, input));
      printImportPlan(io, plan);
      if (!plan.ok) return 2;
      io.out(
        `Dry run for set "${plan.setName}": ${plan.total} responses would be imported` +
          `${plan.discardsDraw ? " (the drawn sample would be discarded)" : ""}. Nothing was written.\n`,
      );
      return 0;
    }
    const result = serviceErrors(() => importResponses(db, { ...input, actorId: null }));
    printImportPlan(io, result);
    if (!result.ok) return 2;
    const formats = [...new Set(result.files.map((f) => f.parse.format))].join(", ");
    io.out(
      `Imported ${result.written} responses (${formats}) into set "${result.setName}"` +
        `${result.discardsDraw ? "; the previous sample was discarded: draw it again with judge-sample" : ""}.\n`,
    );
    return 0;
  },
};

function bucketTable(rows: readonly BucketRow[]): string {
  const width = Math.max(maxOf(rows.map((r) => r.bucket.length)), "bucket".length);
  const line = (a: string, b: string, c: string, d: string) =>
    `  ${a.padEnd(width)}  ${b.padStart(6)}  ${c.padStart(9)}  ${d.padStart(8)}`;
  const total = (k: "target" | "available" | "selected") => String(rows.reduce((s, r) => s + r[k], 0));
  return [
    line("bucket", "target", "available", "selected"),
    ...rows.map((r) => line(r.bucket, String(r.target), String(r.available), String(r.selected))),
    line("total", total("target"), total("available"), total("selected")),
  ].join("\n");
}

function parseTargets(values: string[] | undefined): Partial<Record<ValidationBucket, number>> {
  const targets: Partial<Record<ValidationBucket, number>> = {};
  for (const part of (values ?? []).flatMap((v) => v.split(","))) {
    const m = /^\s*([a-z_]+)\s*=\s*(\d+)\s*$/.exec(part);
    if (!m) throw new CliError(`--target must look like BUCKET=N, not "${part}".`);
    if (!(BUCKET_SAMPLING_ORDER as readonly string[]).includes(m[1]))
      throw new CliError(`unknown bucket "${m[1]}"; buckets: ${BUCKET_SAMPLING_ORDER.join(", ")}.`);
    targets[m[1] as ValidationBucket] = Number(m[2]);
  }
  return targets;
}

function parseSeed(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)))
    throw new CliError(`--seed must be a whole number ≥ 0, not "${value}".`);
  return Number(value);
}

export const judgeSampleCommand: Command = {
  name: "judge-sample",
  summary: "Draw (or re-draw) a validation set's bucket sample, as the reference does",
  help: `Usage: npm run concord -- judge-sample --set NAME [--seed N] [--target BUCKET=N …] [--json]

Draws the sample to be rated from the set's responses exactly as the reference's build_human_validation_set.py
(docs/judge-validation.md): the rule-based first parse puts each response in one of nine buckets, then one Python
random.Random(seed) shuffles each bucket's candidates (in input order) and takes up to its target, and shuffles the
selection again into ids ann_0001…. Prints target, available and selected per bucket.

Re-drawing (another seed or other targets) replaces the sample while the set is drafting; once rating has started
(judge-assign) it is refused. Candidate judges imported on the old sample are removed.

Options:
  --set NAME            the validation set
  --seed N              the seed (default: the set's seed, 123 for a new set)
  --target BUCKET=N     a bucket's target (repeatable, or comma-separated); defaults sum to 200
  --json                print {seed, items, summary: {bucket: {target, available, selected}}}`,
  async run(argv, io) {
    const { values } = parseOptions(argv, {
      set: { type: "string" },
      seed: { type: "string" },
      target: { type: "string", multiple: true },
      json: { type: "boolean", default: false },
    });
    const db = getDb();
    const set = serviceErrors(() => requireJudgeSetByName(db, requireOption(values.set, "--set")));
    const seed = parseSeed(values.seed, set.seed);
    const targets = parseTargets(values.target);
    const result = serviceErrors(() => drawSample(db, { setId: set.id, seed, targets, actorId: null }));
    if (values.json) {
      const summary = Object.fromEntries(result.summary.map(({ bucket, ...s }) => [bucket, s]));
      io.out(JSON.stringify({ seed, items: result.items, summary }, null, 2) + "\n");
      return 0;
    }
    io.out(`${result.redrawn ? "Re-drew" : "Drew"} ${result.items} responses for set "${set.name}" (seed ${seed}).\n`);
    io.out(bucketTable(result.summary) + "\n");
    return 0;
  },
};

export const judgeAssignCommand: Command = {
  name: "judge-assign",
  summary: "Give every sampled response of a validation set three raters (starts rating)",
  help: `Usage: npm run concord -- judge-assign --set NAME --raters a,b,c[,…] [--seed N]

Every sampled response goes to three different raters chosen from the listed usernames (active users with the rater
role), the load balanced, ties broken by a random order drawn from --seed (default 1). The set then moves to rating:
the sample is frozen and can no longer be re-drawn. Every assignment is audited.`,
  async run(argv, io) {
    const { values } = parseOptions(argv, {
      set: { type: "string" },
      raters: { type: "string" },
      seed: { type: "string" },
    });
    const db = getDb();
    const set = serviceErrors(() => requireJudgeSetByName(db, requireOption(values.set, "--set")));
    const names = requireOption(values.raters, "--raters")
      .split(",")
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean);
    const known = listSetRaters(db, set.id);
    const missing = names.filter((n) => !known.some((k) => k.username === n));
    if (missing.length)
      throw new CliError(
        `not raters: ${missing.join(", ")}. Raters: ${known.map((k) => k.username).join(", ") || "none"}.`,
      );
    const seed = parseSeed(values.seed, 1);
    const ids = names.map((n) => known.find((k) => k.username === n)!.id);
    const r = serviceErrors(() => startRating(db, { setId: set.id, raterIds: ids, seed, actorId: null }));
    io.out(
      `Assigned ${r.items} responses of "${set.name}" to three raters each (${r.assignments} ratings, seed ${seed}).\n`,
    );
    for (const a of listSetRaters(db, set.id).filter((x) => x.assigned > 0)) io.out(`  ${a.username}: ${a.assigned}\n`);
    return 0;
  },
};

export const judgeExportCommand: Command = {
  name: "judge-export",
  summary: "Write a validation set's sheets, key, sample and labels to a folder",
  help: `Usage: npm run concord -- judge-export --set NAME --out DIR

Writes into DIR:
  annotator-sheet.csv  the blinded annotator sheet (docs/judge-validation.md without model_evaluated and strategy): give it to
                       raters who annotate outside the app
  key.csv              the reference's own sheet, with model_evaluated and strategy: the admin's key, never for raters
  selected.jsonl       the sampled rows (input row + validation_bucket, derived_action, annotation_id)
  summary.json         {seed, summary: {bucket: {target, available, selected}}}
  labels.csv           the submitted ratings and the candidate judges' outputs in the judge-report --labels format`,
  async run(argv, io) {
    const { values } = parseOptions(argv, { set: { type: "string" }, out: { type: "string" } });
    const db = getDb();
    const set = serviceErrors(() => requireJudgeSetByName(db, requireOption(values.set, "--set")));
    const out = requireOption(values.out, "--out");
    if (set.items === 0) throw new CliError(`set "${set.name}" has no sample yet: run judge-sample first.`);
    // The folder whole or not at all (docs/reliability.md, "Atomic files").
    const files: Record<string, string> = {};
    for (const file of SET_EXPORT_FILES) files[file] = exportSetFile(db, set.id, file);
    files["labels.csv"] = judgeLabelsCsv(setLabels(db, set.id));
    writeFolderAtomic(out, files);
    io.out(`Wrote ${[...SET_EXPORT_FILES, "labels.csv"].join(", ")} for set "${set.name}" to ${out}.\n`);
    return 0;
  },
};

export const judgeImportOutputsCommand: Command = {
  name: "judge-import-outputs",
  summary: "Import a candidate judge's outputs for a validation set's sample",
  help: `Usage: npm run concord -- judge-import-outputs --set NAME --judge NAME FILE [--replace] [--dry-run]

FILE is JSONL, one sampled response per line, in either form:
  {"annotation_id": "ann_0001", "new_judge_output": {"primary_answer": …, "info_request": …, "action": …}}
      as the reference writes a re-judged validation set (docs/judge-validation.md)
  {"annotation_id": "ann_0001", "judge_output_raw": "PRIMARY_ANSWER: committed\\nINFO_REQUEST: none\\n…"}
      the judge's raw text, parsed with the reference's rules (docs/judge-validation.md) and mapped to an action (CLARIFY on the
      last section becomes ABSTAIN)
Labels are normalised (trim, lower-case; empty/nan/null missing; no, n/a … none). The whole file is validated first:
an unknown or repeated annotation_id or a value outside the features' domains is reported as FILE:LINE and nothing is
written.

Options:
  --set NAME     the validation set (its sample must be drawn)
  --judge NAME   the judge's name, e.g. gemma-3-27b (shown in the report as judge:NAME)
  --replace      replace the outputs of a judge of the same name
  --dry-run      validate and report, write nothing`,
  async run(argv, io) {
    const { values, positionals } = parseOptions(
      argv,
      {
        set: { type: "string" },
        judge: { type: "string" },
        replace: { type: "boolean", default: false },
        "dry-run": { type: "boolean", default: false },
      },
      true,
    );
    const db = getDb();
    const set = serviceErrors(() => requireJudgeSetByName(db, requireOption(values.set, "--set")));
    const name = requireOption(values.judge, "--judge");
    if (positionals.length !== 1) throw new CliError("give exactly one FILE. See --help.");
    const file = positionals[0];
    // Streamed through the import contract, read line by line (docs/reliability.md, "Bulk imports").
    const text = importFileSource(file, "judge", { json: !/\.csv$/i.test(file) });
    const input = { setId: set.id, name, text, filename: basename(file), replace: values.replace };
    const plan = serviceErrors(() =>
      values["dry-run"] ? planJudgeImport(db, input) : importJudgeOutputs(db, { ...input, actorId: null }),
    );
    if (plan.refusal) throw new CliError(plan.refusal);
    listIssues(io, plan.parse.warnings, { file: file, kind: "warning" });
    if (!plan.ok) {
      listIssues(io, plan.parse.errors, { file: file, kind: "error" });
      io.err(`${plan.parse.errors.length} error${plan.parse.errors.length === 1 ? "" : "s"}; nothing was imported.\n`);
      return 2;
    }
    io.out(
      values["dry-run"]
        ? `Dry run: ${plan.parse.rows.length} outputs of judge "${plan.name}" would be imported. Nothing was written.\n`
        : `Imported ${plan.parse.rows.length} outputs of judge "${plan.name}" into set "${set.name}"${
            plan.exists ? " (replaced)" : ""
          }.\n`,
    );
    return 0;
  },
};

const num = (v: number | null | undefined) => (v === null || v === undefined ? "—" : v.toFixed(3));

/** The readable report printed without --json. */
export function formatJudgeReport(r: JudgeReport): string {
  const withMajority = Object.values(r.majority).filter((a) => a !== null).length;
  const lines = [
    `Judge validation: ${r.n_responses} responses, ${withMajority} with a human majority action, ${r.ties.length} ties (split votes, no majority)` +
      `${r.too_few_votes.length ? `, ${r.too_few_votes.length} with fewer than two human actions` : ""}.`,
  ];
  if (r.ties.length) lines.push(`Ties (left out of the scores): ${r.ties.join(", ")}`);
  if (r.too_few_votes.length) lines.push(`Fewer than two human actions: ${r.too_few_votes.join(", ")}`);
  lines.push("", "Human consistency (action macro-F1 against the majority):");
  pushAll(lines, [
    ...table([
      ["rater", "macro-F1", "n"],
      ...Object.entries(r.humans).map(([n, h]) => [n, num(h.macro_f1), String(h.n)]),
    ]),
  ]);
  lines.push(
    `  mean macro-F1: ${num(r.human_macro_f1_mean)}; Fleiss' kappa across raters: ${num(r.human_fleiss_kappa)} (${
      r.human_fleiss_n
    } responses)`,
  );
  const names = Object.keys(r.judges);
  if (names.length === 0) {
    lines.push("", "No candidate judges (raters named judge:NAME).");
    return lines.join("\n") + "\n";
  }
  lines.push("", "Candidate judges (action, over the responses with a majority):");
  pushAll(lines, [
    ...table([
      ["judge", "macro-F1", "Fleiss κ with judge", "n"],
      ...names.map((n) => [
        n + (n === r.best_judge ? " (best)" : ""),
        num(r.judges[n].macro_f1),
        num(r.judges[n].fleiss_kappa_with_judge),
        String(r.judges[n].n),
      ]),
    ]),
  ]);
  for (const n of names) {
    const j = r.judges[n];
    lines.push("", `judge:${n}`);
    pushAll(lines, [
      ...table([
        [
          "task",
          "n",
          "accuracy",
          "bal. acc.",
          "macro-F1",
          "weighted F1",
          "Cohen κ",
          "Fleiss κ cons.+judge",
          "Fleiss κ humans+judge",
          "n Fleiss",
        ],
        ...TASKS.map((t) => {
          const s = j.tasks[t];
          return [
            t,
            String(s.n),
            num(s.accuracy),
            num(s.balanced_accuracy),
            num(s.macro_f1),
            num(s.weighted_f1),
            num(s.cohen_kappa),
            num(s.fleiss_kappa_consensus_judge),
            num(s.fleiss_kappa_humans_plus_judge),
            String(s.n_fleiss),
          ];
        }),
      ]),
    ]);
    const labels = Object.keys(j.confusion);
    if (labels.length) {
      lines.push("  action precision / recall:");
      pushAll(lines, [
        ...table([
          ["label", "precision", "recall"],
          ...labels.map((l) => [l, num(j.precision[l]), num(j.recall[l])]),
        ]).map((s) => "  " + s),
      ]);
      lines.push("  confusion (rows: majority, columns: judge):");
      pushAll(lines, [
        ...table([["", ...labels], ...labels.map((t) => [t, ...labels.map((p) => String(j.confusion[t][p]))])]).map(
          (s) => "  " + s,
        ),
      ]);
    }
  }
  lines.push("", `Best judge (action macro-F1): ${r.best_judge ?? "none"}`);
  return lines.join("\n") + "\n";
}

export const judgeReportCommand: Command = {
  name: "judge-report",
  summary: "Score candidate judges against the raters' majority (judge validation report)",
  help: `Usage: npm run concord -- judge-report (--labels FILE | --set NAME) [--json]

The judge-validation report (docs/judge-validation.md), from a labels file or from a set's labels in the app (the same
computation either way).

FILE is CSV with the header response_id,rater,primary_answer,info_request and an optional action column, one row per
response and rater. A rater named judge:NAME is candidate judge NAME; every other rater is a human. Labels are
normalised (trim, lower-case; empty, nan, null → missing; no, n/a, na, not_applicable → none). A human's action follows
from their features (committed: CLARIFY if specific else DIAGNOSE; differential/none: CLARIFY if specific else
ABSTAIN; missing if a feature is missing); a judge's action is its action column, else the same rule.

The majority per response and task is the label with at least 2 human votes (3 raters: 2 of 3); a 1-1-1 split has no
majority, is listed under ties and is left out of the scores.

--json prints one object:
  majority                {response_id: action or null}
  ties                    [response_id …]: split human actions, no label with two votes (the 1-1-1 split)
  too_few_votes           [response_id …]: fewer than two human actions
  humans                  {NAME: {macro_f1, n}}: each human's action macro-F1 against the majority
  human_macro_f1_mean     their mean
  human_fleiss_kappa      Fleiss' kappa of the human actions (responses where every rater gave one; human_fleiss_n)
  judges                  {NAME: {macro_f1, fleiss_kappa_with_judge, n, precision {label: v}, recall {label: v},
                          confusion {majority: {judge: count}}, tasks {action|primary_answer|info_request: {n,
                          accuracy, balanced_accuracy, macro_f1, weighted_f1, cohen_kappa,
                          fleiss_kappa_consensus_judge, fleiss_kappa_humans_plus_judge, n_fleiss}}}}
                          (top-level values: action, over the responses with a majority; tasks: as the reference's
                          evaluate_judges_against_consensus.py)
  best_judge              the judge with the highest action macro-F1 (ties: first by name), or null
  n_responses, human_fleiss_n, warnings
Undefined values (no data, a kappa whose chance agreement is 1) are null.

Exit status: 0 on success, 2 for a bad file or bad options.`,
  async run(argv, io) {
    const { values } = parseOptions(argv, {
      labels: { type: "string" },
      set: { type: "string" },
      json: { type: "boolean", default: false },
    });
    if ((values.labels === undefined) === (values.set === undefined))
      throw new CliError("give either --labels FILE or --set NAME. See --help.");
    let report: JudgeReport;
    if (values.labels !== undefined) {
      const parsed = parseJudgeLabelsCsv(importFileSource(values.labels, "judge", { json: false }));
      if (parsed.errors.length) {
        listIssues(io, parsed.errors, { file: values.labels, kind: "error" });
        io.err(`${parsed.errors.length} error${parsed.errors.length === 1 ? "" : "s"} in ${values.labels}.\n`);
        return 2;
      }
      report = buildJudgeReport(parsed.labels);
    } else {
      const db = getDb();
      const set = serviceErrors(() => requireJudgeSetByName(db, values.set!));
      report = buildJudgeReport(setLabels(db, set.id));
    }
    if (values.json) {
      io.out(JSON.stringify(report, null, 2) + "\n");
      return 0;
    }
    for (const w of report.warnings) io.err(`warning: ${w}\n`);
    io.out(formatJudgeReport(report));
    return 0;
  },
};
