import { getDb } from "../../platform/db.server";
import { CliError, parseOptions, requireOption, serviceCall, type CliIO, type Command } from "../../cli/command";
import { importRunFolders } from "../evaluations.server";

const help = `Usage: npm run concord -- eval-import --evaluation NAME [--gold data_gt.json [--study ID]]
                                       --runs DIR [DIR …] [--dry-run]

Imports run folders written by \`concord run\` or by the Safe-Psych reference under an evaluation of the app
(docs/evaluation.md, "Runs in the app"), where the evaluation pages show its runs, the paper's tables and each
case step by step. A run is one model × strategy × seed: its trajectories.jsonl (one record per case), with
run.json and timing.json when present (status, retries, time).

  --evaluation NAME  the evaluation to add the runs to; created when --gold is given
  --gold FILE        the gold labels the runs are scored against (data_gt.json, as \`metrics --gold\`); only to
                     create the evaluation
  --study ID         the study whose cases these are (the case page shows their sections); optional
  --runs DIR …       run folders, or folders of run folders (as \`metrics --runs\`; a path naming runs_seeds is
                     the seed script's)
  --dry-run          check everything and list the runs; write nothing

All or nothing: every file is checked before anything is written. A record that is not JSON, a case not in the
gold labels, a case twice in a file, a run already imported or a second run of the same model, strategy and seed
is refused as FILE:LINE: reason, and nothing is written (exit code 2). The evaluation's metrics are those
\`concord metrics\` prints for the same folders and gold file (paper mode and --compat reference).
`;

async function run(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseOptions(
    argv,
    {
      evaluation: { type: "string" },
      gold: { type: "string" },
      study: { type: "string" },
      runs: { type: "string", multiple: true },
      "dry-run": { type: "boolean", default: false },
    },
    true,
  );
  const evaluation = requireOption(values.evaluation, "--evaluation");
  const dirs = [...(values.runs ?? []), ...positionals];
  if (dirs.length === 0) throw new CliError("--runs is required. See --help.");
  if (values.study !== undefined && values.gold === undefined)
    throw new CliError("--study is given only with --gold, to create the evaluation. See --help.");
  const studyId = values.study === undefined ? null : Number(values.study);
  if (studyId !== null && !(Number.isInteger(studyId) && studyId > 0))
    throw new CliError(`--study takes a study id, got "${values.study}"`);
  const result = serviceCall(() =>
    importRunFolders(getDb(), {
      evaluation,
      create: values.gold !== undefined ? { goldFile: values.gold, studyId } : undefined,
      dirs,
      dryRun: values["dry-run"],
      actor: "cli",
    }),
  );
  if (result.problems.length > 0) {
    for (const p of result.problems) io.err(`${p}\n`);
    if (result.moreProblems > 0) io.err(`… and ${result.moreProblems} more\n`);
    const n = result.problems.length + result.moreProblems;
    throw new CliError(`${n} problem${n === 1 ? "" : "s"}; nothing was imported.`);
  }
  for (const r of result.runs)
    io.out(`${r.model}\t${r.strategy}\tseed ${r.seed ?? "-"}\t${r.trajectories} cases\t${r.status}\t${r.path}\n`);
  io.out(
    `${result.runs.length} runs, ${result.trajectories} trajectories. ` +
      (result.dryRun ? "Dry run: nothing was written.\n" : `Imported into "${evaluation}".\n`),
  );
  return 0;
}

export const evalImportCommand: Command = {
  name: "eval-import",
  summary: "Import Safe-Psych run folders under an evaluation of the app (its pages, metrics and cases)",
  help,
  run,
};
