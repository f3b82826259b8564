import type { Command } from "./command";

/**
 * One command of `npm run concord`: its name and summary are known up front so `--help` lists every command without
 * loading any; `load` imports only the module of the command that runs, which keeps start-up short
 * (docs/architecture.md#the-command-line). The summary must equal the loaded command's (a test checks).
 */
export interface CommandEntry {
  name: string;
  summary: string;
  load: () => Promise<Command>;
}

function pick(name: string, list: Command[]): Command {
  const found = list.find((c) => c.name === name);
  if (!found) throw new Error(`command ${name} is not exported by its module`);
  return found;
}

/** Every command of `npm run concord`. Add a command here, one entry, in alphabetical order. */
export const commands: CommandEntry[] = [
  {
    name: "agreement",
    summary: "Agreement coefficients (kappa, AC1, Fleiss, Krippendorff) for a ratings CSV",
    load: async () => (await import("../stats/cli")).agreementCommand,
  },
  {
    name: "assign",
    summary: "Give every case of a study two annotators (balanced, reproducible with a seed)",
    load: async () => (await import("../annotation/cli/assign")).assignCommand,
  },
  {
    name: "backup",
    summary: "Take a consistent copy of the database, also while the app runs",
    load: async () => (await import("../platform/backup-cli")).backupCommand,
  },
  {
    name: "check-db",
    summary: "Check the whole database with SQLite's integrity_check, also while the app runs",
    load: async () => (await import("../platform/backup-cli")).checkDbCommand,
  },
  {
    name: "casereview-import",
    summary: "Import generated cases and seeds (CSV) into a review set, validated whole",
    load: async () => (await import("../case-review/cli")).casereviewImportCommand,
  },
  {
    name: "casereview-report",
    summary: "Quality scores, agreement and accepted seeds of a review set",
    load: async () => (await import("../case-review/cli")).casereviewReportCommand,
  },
  {
    name: "expert-panel",
    summary: "Add or remove the experts (rater role) of a question bank or a review set",
    // A command over two protocols' panels: each protocol gives its kind (docs/architecture.md, "Registration").
    load: async () => {
      const [{ expertPanelCommand }, { BANK_PANEL }, { REVIEW_SET_PANEL }] = await Promise.all([
        import("../expert-panel/cli"),
        import("../mentat/public.server"),
        import("../case-review/public.server"),
      ]);
      return expertPanelCommand({ bank: BANK_PANEL, set: REVIEW_SET_PANEL });
    },
  },
  {
    name: "export-gold",
    summary: "Write data_gt.json, samples.json, data.csv and manifest.json for a study",
    load: async () => (await import("../gold/cli")).exportGoldCommand,
  },
  {
    name: "import",
    summary: "Import notes from CSV or JSONL into a study (validated as a whole)",
    load: async () => (await import("../annotation/cli/import")).importCommand,
  },
  {
    name: "import-gold",
    summary: "Read a data_gt.json (Concord's or the reference's) into a study as reference labels",
    load: async () => (await import("../gold/cli")).importGoldCommand,
  },
  {
    name: "judge-assign",
    summary: "Give every sampled response of a validation set three raters (starts rating)",
    load: async () => (await import("../judge-validation/cli")).judgeAssignCommand,
  },
  {
    name: "judge-export",
    summary: "Write a validation set's sheets, key, sample and labels to a folder",
    load: async () => (await import("../judge-validation/cli")).judgeExportCommand,
  },
  {
    name: "judge-import",
    summary: "Import model responses into a judge-validation set (validated as a whole)",
    load: async () => (await import("../judge-validation/cli")).judgeImportCommand,
  },
  {
    name: "judge-import-outputs",
    summary: "Import a candidate judge's outputs for a validation set's sample",
    load: async () => (await import("../judge-validation/cli")).judgeImportOutputsCommand,
  },
  {
    name: "judge-report",
    summary: "Score candidate judges against the raters' majority (judge validation report)",
    load: async () => (await import("../judge-validation/cli")).judgeReportCommand,
  },
  {
    name: "judge-sample",
    summary: "Draw (or re-draw) a validation set's bucket sample, as the reference does",
    load: async () => (await import("../judge-validation/cli")).judgeSampleCommand,
  },
  {
    name: "mc-import-mentalbench",
    summary: "Turn MentalBench's released data set folder into one items file for mc-run",
    load: async () => (await import("../mc-evaluation/mentalbench-release-cli")).mcImportMentalbenchCommand,
  },
  {
    name: "mc-report",
    summary: "Score multiple-choice runs: each paper's tables, drift tests, figures",
    load: async () => (await import("../mc-evaluation/cli")).mcReportCommand,
  },
  {
    name: "mc-run",
    summary: "Evaluate models on MENTAT records or MentalBench items (multiple choice)",
    load: async () => (await import("../mc-evaluation/cli")).mcRunCommand,
  },
  {
    name: "mentat-expand",
    summary: "Expand a question bank into demographic variant sets (base, gender, age, race)",
    load: async () => (await import("../mentat/cli")).mentatExpandCommand,
  },
  {
    name: "mentat-export",
    summary: "Write a variant set's evaluation records (JSONL) with labels and bounds",
    load: async () => (await import("../mentat/cli")).mentatExportCommand,
  },
  {
    name: "mentat-fit",
    summary: "Fit hierarchical Bradley–Terry preference labels to a bank's ratings",
    load: async () => (await import("../mentat/cli")).mentatFitCommand,
  },
  {
    name: "mentat-import",
    summary: "Import a MENTAT question bank (CSV) into a bank, validated whole",
    load: async () => (await import("../mentat/cli")).mentatImportCommand,
  },
  {
    name: "mentat-import-ratings",
    summary: "Import MENTAT's own annotation files (annotated_data/*.csv) as option ratings of a bank",
    load: async () => (await import("../mentat/annotations-cli")).mentatImportRatingsCommand,
  },
  {
    name: "eval-import",
    summary: "Import Safe-Psych run folders under an evaluation of the app (its pages, metrics and cases)",
    load: async () => (await import("../evaluation/cli/eval-import")).evalImportCommand,
  },
  {
    name: "eval-review-report",
    summary: "The figures of an evaluation's clinician reviews: defensible share per failure and model, agreement",
    load: async () => (await import("../evaluation/cli/eval-review")).evalReviewReportCommand,
  },
  {
    name: "eval-review-send",
    summary: "Send an evaluation's model steps to a blinded clinician review, or change a review's reviewers",
    load: async () => (await import("../evaluation/cli/eval-review")).evalReviewSendCommand,
  },
  {
    name: "metrics",
    summary: "Evaluation metrics and figures from run folders (paper definitions or --compat reference)",
    load: async () => (await import("../evaluation/cli/metrics")).metricsCommand,
  },
  {
    name: "prep-comet",
    summary: "Import COMET scores of a preparation project's translated sections (validated as a whole)",
    load: async () => (await import("../preparation/cli-quality")).prepCometCommand,
  },
  {
    name: "prep-detectors",
    summary: "Recall and precision of the minimisation detectors on a labelled set",
    load: async () => (await import("../preparation/cli")).prepDetectorsCommand,
  },
  {
    name: "prep-import",
    summary: "Create a preparation project from source-language notes (validated as a whole)",
    load: async () => (await import("../preparation/cli")).prepImportCommand,
  },
  {
    name: "prep-quality",
    summary:
      "Score a preparation project's back-translations (BLEU, chrF, COMET, test names) and flag notes for correction",
    load: async () => (await import("../preparation/cli-quality")).prepQualityCommand,
  },
  {
    name: "prep-reviewers",
    summary: "Name or remove the reviewers of a preparation project",
    load: async () => (await import("../preparation/cli")).prepReviewersCommand,
  },
  {
    name: "prep-translate",
    summary: "Translate a preparation project's final notes into English and back (resumable)",
    load: async () => (await import("../preparation/translate-cli")).prepTranslateCommand,
  },
  {
    name: "prep-release",
    summary: "Release a preparation project's final English notes as a Safe-Psych study (or a released CSV)",
    load: async () => (await import("../preparation/cli")).prepReleaseCommand,
  },
  {
    name: "prep-export",
    summary: "Export a preparation project's final minimised notes (source language) as CSV or JSONL",
    load: async () => (await import("../preparation/cli")).prepExportCommand,
  },
  {
    name: "rater-quality",
    summary: "Test–retest, calibration cases and training round of a study: settings, calibration import, report",
    load: async () => (await import("../annotation/cli/rater-quality")).raterQualityCommand,
  },
  {
    name: "run",
    summary: "Run a model through the Safe-Psych evaluation protocol (resumable)",
    load: async () => (await import("../evaluation/cli/run")).runCommand,
  },
  {
    name: "screening-import",
    summary: "Create a screening study; import its items, screen labels or recall tiers (validated as a whole)",
    load: async () => (await import("../screening/cli")).screeningImportCommand,
  },
  {
    name: "screening-release",
    summary: "Write a screening study's release: included subset, votes, categories and manifest",
    load: async () => (await import("../screening/cli")).screeningReleaseCommand,
  },
  {
    name: "screening-report",
    summary: "Print a screening study's screen counts, every round's figures and the stop/continue decision",
    load: async () => (await import("../screening/cli")).screeningReportCommand,
  },
  {
    name: "screening-round",
    summary: "Open a screening study's next round (round 1, or a recall round) for its reviewers",
    load: async () => (await import("../screening/cli")).screeningRoundCommand,
  },
  {
    name: "stats",
    summary: "Study report: annotator agreement and gold-label distributions (docs/statistics.md)",
    load: async () => (await import("../study-report/cli")).statsCommand,
  },
  {
    name: "users",
    summary: "Create, list, activate and deactivate users; reset passwords",
    load: async () => (await import("../accounts/cli")).usersCommand,
  },
  // Rubric-graded evaluation (docs/rubric-grading.md): grade-* commands, kept together.
  ...(
    [
      ["grade-batch-ingest", "ingest a Batch API / vLLM run-batch output file as a judge's verdicts"],
      [
        "grade-batch-write",
        "write a judge's pending calls as Batch API request files for an offline engine (vLLM run-batch)",
      ],
      [
        "grade-import",
        "import a HealthBench-format JSONL (e.g. a screening release's subset.jsonl) as an evaluation set",
      ],
      ["grade-report", "Table 1, ranking figure, tag tables, judge agreement, paired comparisons and the manifest"],
      ["grade-respond", "collect one response per conversation from a candidate model"],
      ["grade-run", "grade every stored response with one judge of the panel (sync or Batch API)"],
      ["grade-status", "responses and verdicts done and pending per candidate and judge"],
      ["grade-subset", "define a named subset of an evaluation set by intersection with an id list"],
    ] as const
  ).map(([name, summary]) => ({
    name,
    summary,
    load: async () => pick(name, (await import("../rubric-grading/cli")).gradingCommands),
  })),
];
