import { getDb, type Db } from "../../platform/db.server";
import { requireStudyByName } from "../studies.server";
import { CliError, parseOptions, requireOption, serviceCall, type CliIO, type Command } from "../../cli/command";
import { importFileSource } from "../../cli/io";
import { NO_RETEST, QualitySettingsSchema, QUALITY_OFF, type QualitySettings } from "../domain/rater-quality";
import {
  getQualitySettings,
  getRaterQualityReport,
  importAdjudicatedCalibration,
  importCalibrationCsv,
  setQualitySettings,
} from "../rater-quality.server";

/** The rater-quality flags shared by `assign` and `rater-quality` (docs/rater-quality.md, "Settings"). */
export const QUALITY_FLAGS = {
  "retest-fraction": { type: "string" },
  "washout-cases": { type: "string" },
  "washout-days": { type: "string" },
  "quality-seed": { type: "string" },
  "calibration-rate": { type: "string" },
  training: { type: "string" },
  "accuracy-threshold": { type: "string" },
} as const;

export const QUALITY_FLAGS_HELP = `Rater quality (docs/rater-quality.md; unchanged unless given):
  --retest-fraction F     share of each annotator's cases re-presented once (0 = off), e.g. 0.10
  --washout-cases N       … once N other cases are submitted since the first label
  --washout-days D        … and D days have passed since it
  --quality-seed N        seed of the retest sample, the calibration draw and the places in the queue
  --calibration-rate R    calibration cases per assigned case (0 = off), e.g. 0.05
  --training yes|no       a training round of the training cases before real work
  --accuracy-threshold A  mark annotators whose calibration accuracy is below A (0–1; "none" = no mark)`;

const FLAG_OF: Record<keyof QualitySettings, string> = {
  retestFraction: "--retest-fraction",
  washoutCases: "--washout-cases",
  washoutDays: "--washout-days",
  seed: "--quality-seed",
  calibrationRate: "--calibration-rate",
  training: "--training",
  accuracyThreshold: "--accuracy-threshold",
};

type QualityFlagValues = Partial<Record<keyof typeof QUALITY_FLAGS, string | undefined>>;

/**
 * Applies the rater-quality flags given to the study's settings (validated whole, with the same schema as the admin
 * page); returns whether any flag was given.
 */
export function applyQualityFlags(db: Db, studyId: number, values: QualityFlagValues): QualitySettings | null {
  const settings = qualityFlagSettings(db, studyId, values);
  if (settings) setQualitySettings(db, { studyId, settings, actorId: null });
  return settings;
}

/**
 * The study's settings with the flags given (validated whole, with the same schema as the admin page), without
 * writing them; null when no flag was given.
 */
function qualityFlagSettings(db: Db, studyId: number, values: QualityFlagValues): QualitySettings | null {
  const given = Object.entries(values).filter(([, v]) => v !== undefined);
  if (!given.length) return null;
  const current = getQualitySettings(db, studyId) ?? QUALITY_OFF;
  const training = values.training;
  if (training !== undefined && training !== "yes" && training !== "no")
    throw new CliError(`--training must be yes or no, not "${training}".`);
  const threshold = values["accuracy-threshold"];
  const next = {
    retestFraction: values["retest-fraction"] ?? current.retestFraction,
    washoutCases: values["washout-cases"] ?? current.washoutCases,
    washoutDays: values["washout-days"] ?? current.washoutDays,
    seed: values["quality-seed"] ?? current.seed,
    calibrationRate: values["calibration-rate"] ?? current.calibrationRate,
    training: training === undefined ? current.training : training === "yes",
    accuracyThreshold: threshold === undefined ? current.accuracyThreshold : threshold === "none" ? null : threshold,
  };
  const parsed = QualitySettingsSchema.safeParse(next);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new CliError(`${FLAG_OF[issue.path[0] as keyof QualitySettings]}: ${issue.message}`);
  }
  return parsed.data;
}

export function describeSettings(s: QualitySettings): string {
  return (
    `retest ${s.retestFraction} (wash-out ${s.washoutCases} cases, ${s.washoutDays} days), ` +
    `calibration ${s.calibrationRate}, training ${s.training ? "yes" : "no"}, ` +
    `threshold ${s.accuracyThreshold ?? "none"}, seed ${s.seed}`
  );
}

const pct = (v: number | null) => (v === null ? "—" : `${(100 * v).toFixed(1)}%`);
const f3 = (v: number | null) => (v === null ? "—" : v.toFixed(3));

function printReport(io: CliIO, report: ReturnType<typeof getRaterQualityReport>) {
  io.out("Test–retest (the first label as it was when the retest entered the queue vs. the retest):\n");
  if (report.retest.pooled.n === 0) io.out(`  ${NO_RETEST}\n`);
  else if (report.revisedFirstLabels.some((r) => r.retestSubmitted))
    io.out(
      `  ${report.revisedFirstLabels.filter((r) => r.retestSubmitted).length} first label(s) revised since their ` +
        "retest was given: compared as they were (rater-quality.csv lists both)\n",
    );
  for (const r of report.retest.pooled.n === 0
    ? []
    : [...report.retest.annotators, { annotator: "pooled", ...report.retest.pooled }])
    io.out(
      `  ${r.annotator}: n ${r.n}, sufficiency ${pct(r.sufficiency.percent_agreement)} κ ${f3(r.sufficiency.cohen_kappa)} ` +
        `AC1 ${f3(r.sufficiency.gwet_ac1.value)}; code ${pct(r.diagnosis.diagnosis_level.percent_agreement)}, ` +
        `category ${pct(r.diagnosis.category.percent_agreement)}, block ${pct(r.diagnosis.group.percent_agreement)}; ` +
        `earliest section exact ${pct(r.earliest_section.exact_agreement)}, ` +
        `weighted κ ${f3(r.earliest_section.weighted.linear.cohen_kappa_weighted)}, ` +
        `AC2 ${f3(r.earliest_section.weighted.linear.gwet_ac2.value)}\n`,
    );
  io.out("Calibration accuracy (against the reference):\n");
  if (report.calibration.length === 0) io.out("  no calibration case has been given yet\n");
  for (const c of report.calibration)
    io.out(
      `  ${c.annotator}: n ${c.n}, sufficiency ${pct(c.sufficiency.accuracy)}, code ${pct(c.diagnosis_level.accuracy)}, ` +
        `category ${pct(c.category.accuracy)}, block ${pct(c.group.accuracy)}, ` +
        `earliest section ${pct(c.earliest_section.accuracy)}${c.below.length ? "  BELOW THRESHOLD" : ""}\n`,
    );
}

export const raterQualityCommand: Command = {
  name: "rater-quality",
  summary: "Test–retest, calibration cases and training round of a study: settings, calibration import, report",
  help: `Usage: npm run concord -- rater-quality --study NAME [settings flags]
                                       [--calibration FILE.csv | --from-study NAME [--purpose calibration|training]]
                                       [--json]

Sets the study's rater-quality settings (flags below), adds known-answer cases to its calibration set, and prints
each annotator's test–retest agreement and calibration accuracy (--json: the whole report).

--calibration FILE.csv   known-answer cases, header
                         study,case,purpose,sufficiency,icd10,earliest_section,missing_info,missing_other,rationale
                         (all lines or none; a bad line is reported as FILE:LINE: reason)
--from-study NAME        the adjudicated cases of an earlier study, the final label as reference

${QUALITY_FLAGS_HELP}`,
  async run(argv, io) {
    const { values } = parseOptions(argv, {
      study: { type: "string" },
      calibration: { type: "string" },
      "from-study": { type: "string" },
      purpose: { type: "string" },
      json: { type: "boolean" },
      ...QUALITY_FLAGS,
    });
    const db = getDb();
    const study = serviceCall(() => requireStudyByName(db, requireOption(values.study, "--study")));
    const { study: _s, calibration, "from-study": fromStudy, purpose, json, ...flags } = values;
    // Everything is checked before anything is written (docs/reliability.md, "The import contract"): the flags, the
    // purpose, then every line of the file (read line by line through the one streaming reader, never held whole);
    // the settings are applied with the file's rows, in one transaction.
    const settings = serviceCall(() => qualityFlagSettings(db, study.id, flags));
    if (purpose !== undefined && purpose !== "calibration" && purpose !== "training")
      throw new CliError(`--purpose must be calibration or training, not "${purpose}".`);
    if (calibration !== undefined) {
      const text = importFileSource(calibration, "calibration", { json: false });
      const r = serviceCall(() =>
        importCalibrationCsv(db, { studyId: study.id, filename: calibration, text, actorId: null, settings }),
      );
      for (const w of r.warnings) io.err(`${w}\n`);
      if (!r.ok) {
        for (const e of r.errors) io.err(`${e}\n`);
        throw new CliError(
          `${r.errors.length} error(s); nothing was imported${settings ? " and no setting was changed" : ""}.`,
        );
      }
      if (settings) io.out(`Settings of "${study.name}": ${describeSettings(settings)}.\n`);
      io.out(`Calibration set: ${r.added} case(s) added, ${r.skipped} already in it.\n`);
    } else if (settings) {
      serviceCall(() => setQualitySettings(db, { studyId: study.id, settings, actorId: null }));
      io.out(`Settings of "${study.name}": ${describeSettings(settings)}.\n`);
    }
    if (fromStudy !== undefined) {
      const r = serviceCall(() =>
        importAdjudicatedCalibration(db, {
          studyId: study.id,
          fromStudy,
          purpose: (purpose as "calibration" | "training" | undefined) ?? "calibration",
          actorId: null,
        }),
      );
      io.out(`Calibration set: ${r.added} adjudicated case(s) of "${fromStudy}" added, ${r.skipped} already in it.\n`);
    }
    const report = getRaterQualityReport(db, study.id);
    if (json) io.out(JSON.stringify(report, null, 2) + "\n");
    else printReport(io, report);
    return 0;
  },
};
