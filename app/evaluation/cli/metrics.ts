import { writeFolderAtomic, type FileContent } from "../../platform/output-files.server";
import { join } from "node:path";
import { computePaperMetrics } from "../domain/paper-metrics";
import type { MetricsOutput } from "../domain/metrics";
import { computeReferenceMetrics } from "../compat";
import { buildReport, metricsFigures } from "../domain/metrics-report";
import { softwareVersion } from "../../platform/paths.server";
import { findTrajectoryFiles } from "../trajectory-files";
import { CliError, parseOptions, requireOption, type CliIO, type Command } from "../../cli/command";
import { readText } from "../../cli/io";

const help = `Usage: npm run concord -- metrics --gold data_gt.json --runs DIR [DIR …] [--json] [--out DIR]
                                   [--compat reference]

Evaluation metrics (docs/evaluation.md) from run folders written by \`concord run\` or by the Safe-Psych reference, per
model × strategy over seeds (mean, sample s.d., 95% Student-t interval mean ± t(0.975, n−1)·s/√n):
under-abstention, over-abstention, stage-1 clarification rate, timing of the first diagnosis (premature,
on time, late, never), the cumulative diagnosis curve beside the expert sufficiency curve, and diagnostic
accuracy at diagnosis level, category and WHO group — overall, by timing, by annotator agreement and per gold
category — with quality-control counts.

Modes:
  (default)            the paper's definitions, the same for every strategy and seed: trajectories with an
                       empty model output or a judge failure are excluded from every metric and counted; timing
                       over cases with a sufficient gold label; the stage-1 denominator from the expert labels
                       (cases not sufficient at section 1); accuracy over diagnosed cases with a gold code.
  --compat reference   each reference script's own numbers, quirks included (docs/evaluation.md): its case filters,
                       file globs, folder-name models, pooled seeds, code fallback, F40-F49 vs F40-F48, the seed
                       script's abstained definition, and its crashes (reported, not fatal). Per model ×
                       strategy: under/over-abstention from abstention_rate, stage 1 from clarification_seeking,
                       timing from premature_diagnoses, accuracy from diagnosis_accuracy (n = 1, pooled); the seed
                       script's mean/s.d./CI in seed_variability. Every table of every script: reference_scripts.

Options:
  --gold FILE        data_gt.json (required)
  --runs DIR …       folders of run folders (the reference's runs/), or run folders themselves; repeat --runs
                     or list several. A folder whose path names runs_seeds is read by the seed script only.
  --json             print one JSON object (below) and nothing else
  --out DIR          write report.md (it names its mode), metrics.json and figures/*.svg and *.png:
                     abstention-tradeoff (under vs over with CI bars), timing (stacked), cumulative (with the
                     expert sufficiency curve), accuracy (three ICD-10 levels with CI bars)
  --compat MODE      reference (see above)

JSON: {mode: "paper"|"reference", software, gold: {cases, sufficient, insufficient, unusable},
  results: [{model, strategy, n_seeds, seeds, metrics: {under_abstention, over_abstention,
  stage1_clarification_rate, timing: {premature, on_time, late, never}, accuracy: {diagnosis, category, group}},
  cumulative: {stages, model: [metric…], expert: [metric…]} | null, accuracy_by_timing: {premature, on_time,
  late} | null, accuracy_by_agreement: {agreement, disagreement}, accuracy_by_category: [{category, cases,
  accuracy}], qc: {…counts}, sources (reference), seed_variability (reference)}], expert_curve: [5 fractions],
  warnings, reference_scripts (reference)}.
Every metric is {mean, sd, ci95: [low, high], n} over seeds, proportions as fractions in [0, 1]; sd and ci95
are null with one seed; a metric whose denominator is empty is null. Timing, stage 1 and the curves apply to
the sequential strategies only (null otherwise); the paper reports stage 1 for sequential_info_neutral_prompting.

Exit status: 0 on success, 2 for bad input.
`;

async function run(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseOptions(
    argv,
    {
      gold: { type: "string" },
      runs: { type: "string", multiple: true },
      json: { type: "boolean", default: false },
      out: { type: "string" },
      compat: { type: "string" },
    },
    true,
  );
  const goldPath = requireOption(values.gold, "--gold");
  const dirs = [...(values.runs ?? []), ...positionals];
  if (dirs.length === 0) throw new CliError("--runs is required. See --help.");
  if (values.compat !== undefined && values.compat !== "reference") {
    throw new CliError(`--compat takes "reference", got "${values.compat}"`);
  }
  const text = readText(goldPath);
  let gold: unknown;
  try {
    gold = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (e) {
    throw new CliError(`cannot read ${goldPath}: ${(e as Error).message}`);
  }
  if (!Array.isArray(gold)) throw new CliError(`${goldPath} must be one JSON array (data_gt.json)`);
  let files;
  try {
    files = findTrajectoryFiles(dirs);
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  const output: MetricsOutput =
    values.compat === "reference"
      ? computeReferenceMetrics(gold, files.runs, files.seeds)
      : computePaperMetrics(gold, [...files.runs, ...files.seedsOnly]);
  const version = softwareVersion();
  const document = {
    mode: output.mode,
    software: { name: "concord", version },
    gold: output.gold,
    results: output.results,
    expert_curve: output.expert_curve,
    warnings: output.warnings,
    ...(output.reference_scripts ? { reference_scripts: output.reference_scripts } : {}),
  };
  const figures = metricsFigures(output);
  if (values.out !== undefined) {
    const { renderSvg, svgToPng } = await import("../../charts/charts.server");
    const files: Record<string, FileContent> = {};
    for (const figure of figures) {
      const svg = await renderSvg(figure.spec);
      files[`figures/${figure.id}.svg`] = svg;
      files[`figures/${figure.id}.png`] = svgToPng(svg);
    }
    files["metrics.json"] = JSON.stringify(document, null, 2) + "\n";
    files["report.md"] = buildReport(output, { version, goldPath, runs: dirs, figures });
    // The folder whole or not at all (docs/reliability.md, "Atomic files").
    writeFolderAtomic(values.out, files);
  }
  if (values.json) io.out(JSON.stringify(document) + "\n");
  else {
    io.out(buildReport(output, { version, goldPath, runs: dirs, figures: [] }));
    if (values.out !== undefined)
      io.out(`\nWrote ${join(values.out, "report.md")}, metrics.json and ${figures.length} figures.\n`);
  }
  for (const w of values.json ? output.warnings : []) io.err(`warning: ${w}\n`);
  return 0;
}

export const metricsCommand: Command = {
  name: "metrics",
  summary: "Evaluation metrics and figures from run folders (paper definitions or --compat reference)",
  help,
  run,
};
