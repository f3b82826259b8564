import { formatStudyReportMarkdown, formatStudyReportText } from "./domain/study-report-format";
import { getDb } from "../platform/db.server";
import { requireRaterAgreementByName, requireStudyReportByName } from "./study-report.server";
import { ServiceError } from "../platform/service-error";
import { getTimeOnTask } from "./time-on-task.server";
import { formatTimeOnTaskMarkdown, formatTimeOnTaskText } from "./domain/time-on-task";
import { CliError, parseOptions, requireOption, serviceCall, type Command } from "../cli/command";
import { existsSync, readdirSync, statSync } from "node:fs";
import { BatchSizeSchema, buildRaterAgreement, DEFAULT_BATCH_SIZE, MIN_BATCH_SIZE } from "./domain/rater-agreement";
import { raterAgreementCharts } from "./domain/rater-agreement-charts";
import { formatRaterAgreementMarkdown, formatRaterAgreementText } from "./domain/rater-agreement-format";
import { chartCsv } from "./domain/study-report-charts";
import { writeFolderAtomic } from "../platform/output-files.server";

const help = `Usage: npm run concord -- stats --study NAME [--json | --md]
       npm run concord -- stats --study NAME [--pairwise] [--over-time] [--batch-size K] [--json | --md | --csv DIR]

The study report (docs/statistics.md): agreement between the two primary annotations of each case, before adjudication,
and the distributions of the study's gold labels — the same numbers as the admin dashboard's
"Agreement statistics" page.

  - sufficiency: n, the 2×2 matrix, percent agreement, Cohen's kappa, Gwet's AC1 with SE and 95% CI;
  - earliest sufficient section (both-sufficient cases): exact agreement, distribution of |A − B|, Cohen's
    weighted kappa and Gwet's AC2 with linear and quadratic weights;
  - diagnosis (both-sufficient cases) at diagnosis level, category and WHO block: percent agreement, Cohen's
    kappa, Gwet's AC1;
  - per diagnosis: n and agreement for the most frequent gold categories;
  - expert action labels by section (each note's last section in a "Final" column), gold ICD-10 frequencies,
    age groups, and the cases by state;
  - time on task: the median active time of a submitted annotation, per annotator and per case (docs/statistics.md).

Label distributions use the study's gold labels (agreed and adjudicated cases), or an imported dataset's
reference labels while the study has no gold labels of its own; the report says which.

Options:
  --study NAME   the study (required)
  --json         print one JSON object and nothing else. Keys: study, case_counts, sufficiency,
                 earliest_section, diagnosis, per_diagnosis, label_distributions, reference_agreement, reasons,
                 notes (documented in app/study-report/domain/study-report.ts), time_on_task
                 (app/study-report/domain/time-on-task.ts; milliseconds). Agreement is a fraction in [0, 1]; an undefined
                 value is null and "reasons" has its path, e.g. "sufficiency.cohen_kappa".
  --md           print Markdown (tables) instead of text

Agreement per pair and over time (docs/statistics.md, "Agreement per pair and over time"), instead of the report:
  --pairwise     per pair of annotators: n, percent agreement, Cohen's kappa and Gwet's AC1 with 95% CIs, on
                 sufficiency and on diagnosis (both-sufficient cases, diagnosis level); every pair of the study's
                 annotators, a pair with no shared case as n 0
  --over-time    the same pooled over the pairs, by ISO week (UTC) of the later submission and by batches of K
                 consecutive cases in the order their pairs were completed (Cohen's kappa only with two annotators)
  --batch-size K cases per batch, an integer of at least ${MIN_BATCH_SIZE} (default ${DEFAULT_BATCH_SIZE})
  --json         with --pairwise / --over-time: one JSON object {study, rule, annotators, pairwise, over_time,
                 reasons} (documented in app/study-report/domain/rater-agreement.ts), a part left out unless chosen
  --csv DIR      write the charts' CSV files of the chosen parts (both when neither is chosen) into the folder DIR,
                 a new folder or one this command wrote before (replaced whole)

Exit status: 0 on success, 2 for an unknown study or bad options.
`;

const CSV_FILES = new Set(raterAgreementCharts(buildRaterAgreement([])).map((c) => `${c.id}.csv`));

function batchSizeOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const parsed = BatchSizeSchema.safeParse(text);
  if (!parsed.success)
    throw new CliError(`--batch-size must be a whole number of at least ${MIN_BATCH_SIZE}, got "${text}". See --help.`);
  return parsed.data;
}

/** Refuses a --csv folder that holds anything this command did not write: replacing it would lose those files. */
function checkCsvFolder(dir: string): void {
  if (!existsSync(dir)) return;
  if (!statSync(dir).isDirectory()) throw new CliError(`--csv ${dir}: it exists and is not a folder.`);
  const other = readdirSync(dir).filter((f) => !CSV_FILES.has(f));
  if (other.length)
    throw new CliError(
      `--csv ${dir}: the folder holds other files (${other.slice(0, 3).join(", ")}${other.length > 3 ? ", …" : ""}), which replacing it would delete; name a new folder.`,
    );
}

export const statsCommand: Command = {
  name: "stats",
  summary: "Study report: annotator agreement and gold-label distributions (docs/statistics.md)",
  help,
  async run(argv, io) {
    const { values } = parseOptions(argv, {
      study: { type: "string" },
      json: { type: "boolean", default: false },
      md: { type: "boolean", default: false },
      pairwise: { type: "boolean", default: false },
      "over-time": { type: "boolean", default: false },
      "batch-size": { type: "string" },
      csv: { type: "string" },
    });
    const name = requireOption(values.study, "--study");
    const formats = [values.json && "--json", values.md && "--md", values.csv !== undefined && "--csv"].filter(Boolean);
    if (values.json && values.md) throw new CliError("give --json or --md, not both");
    if (formats.length > 1) throw new CliError(`give one of ${formats.join(", ")}, not several`);
    const breakdown = values.pairwise || values["over-time"] || values.csv !== undefined;
    const batchSize = batchSizeOf(values["batch-size"]);
    if (batchSize !== undefined && !values["over-time"] && values.csv === undefined)
      throw new CliError("--batch-size applies to --over-time (or --csv). See --help.");
    if (values.csv === "") throw new CliError("--csv needs a folder. See --help.");
    if (breakdown) {
      const parts =
        values.pairwise || values["over-time"]
          ? { pairwise: values.pairwise, overTime: values["over-time"] }
          : { pairwise: true, overTime: true };
      if (values.csv !== undefined) checkCsvFolder(values.csv);
      const { study, agreement } = serviceCall(() => requireRaterAgreementByName(getDb(), name, { batchSize }));
      if (values.csv !== undefined) {
        const files: Record<string, string> = {};
        for (const c of raterAgreementCharts(agreement)) {
          const pairwise = c.id.startsWith("pairwise-");
          if ((pairwise && parts.pairwise) || (!pairwise && parts.overTime)) files[`${c.id}.csv`] = chartCsv(c);
        }
        writeFolderAtomic(values.csv, files, { replaceForeign: (f) => CSV_FILES.has(f), mode: 0o600 });
        io.out(`Wrote ${Object.keys(files).join(", ")} to ${values.csv}.\n`);
      } else if (values.json) {
        const { pairwise, over_time, ...rest } = agreement;
        io.out(
          JSON.stringify({
            study,
            ...rest,
            ...(parts.pairwise ? { pairwise } : {}),
            ...(parts.overTime ? { over_time } : {}),
          }) + "\n",
        );
      } else if (values.md) io.out(formatRaterAgreementMarkdown(study, agreement, parts));
      else io.out(formatRaterAgreementText(study, agreement, parts));
      return 0;
    }
    let report;
    try {
      report = requireStudyReportByName(getDb(), name);
    } catch (e) {
      if (e instanceof ServiceError) throw new CliError(e.message);
      throw e;
    }
    const time = getTimeOnTask(getDb(), report.study.id);
    if (values.json) io.out(JSON.stringify({ ...report, time_on_task: time }) + "\n");
    else if (values.md) io.out(formatStudyReportMarkdown(report) + "\n" + formatTimeOnTaskMarkdown(time));
    else io.out(formatStudyReportText(report) + "\n" + formatTimeOnTaskText(time));
    return 0;
  },
};
