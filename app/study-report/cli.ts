import { formatStudyReportMarkdown, formatStudyReportText } from "./domain/study-report-format";
import { getDb } from "../platform/db.server";
import { requireStudyReportByName } from "./study-report.server";
import { ServiceError } from "../platform/service-error";
import { getTimeOnTask } from "./time-on-task.server";
import { formatTimeOnTaskMarkdown, formatTimeOnTaskText } from "./domain/time-on-task";
import { CliError, parseOptions, requireOption, type Command } from "../cli/command";

const help = `Usage: npm run concord -- stats --study NAME [--json | --md]

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

Exit status: 0 on success, 2 for an unknown study or bad options.
`;

export const statsCommand: Command = {
  name: "stats",
  summary: "Study report: annotator agreement and gold-label distributions (docs/statistics.md)",
  help,
  async run(argv, io) {
    const { values } = parseOptions(argv, {
      study: { type: "string" },
      json: { type: "boolean", default: false },
      md: { type: "boolean", default: false },
    });
    const name = requireOption(values.study, "--study");
    if (values.json && values.md) throw new CliError("give --json or --md, not both");
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
