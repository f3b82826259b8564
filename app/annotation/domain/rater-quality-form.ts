/**
 * The admin's rater-quality forms (docs/rater-quality.md, "Settings"): the settings and a calibration case entered
 * by hand, as the page posts them (text fields, a checkbox), read into the values the service takes.
 */
import { z } from "zod";
import { QualitySettingsSchema } from "./rater-quality";

const blankToNull = (v: unknown) => (typeof v === "string" && v.trim() === "" ? null : v);

export const QualitySettingsFormSchema = z.object({
  intent: z.literal("settings"),
  retestFraction: QualitySettingsSchema.shape.retestFraction,
  washoutCases: QualitySettingsSchema.shape.washoutCases,
  washoutDays: QualitySettingsSchema.shape.washoutDays,
  seed: QualitySettingsSchema.shape.seed,
  calibrationRate: QualitySettingsSchema.shape.calibrationRate,
  training: z
    .enum(["1"])
    .optional()
    .transform((v) => v === "1"),
  accuracyThreshold: z.preprocess(blankToNull, QualitySettingsSchema.shape.accuracyThreshold),
});

export const CalibrationFormSchema = z.object({
  intent: z.literal("add-calibration"),
  sourceStudy: z.string().trim().min(1, "Name the study the case comes from."),
  externalId: z.string().trim().min(1, "Give the case's id in that study."),
  purpose: z.enum(["calibration", "training"]),
  sufficiency: z.enum(["sufficient", "insufficient"], { message: "Choose sufficient or insufficient." }),
  icd10: z.string().trim().max(16).default(""),
  earliestSection: z.preprocess(blankToNull, z.coerce.number().int().min(1).max(5).nullable()),
  missingInfo: z
    .array(z.string())
    .default([])
    .transform((list) => list.flatMap((s) => s.split(/[;,\s]+/)).filter(Boolean)),
  missingOther: z.string().max(500).default(""),
  rationale: z.string().max(4000, "A rationale has at most 4000 characters.").default(""),
});

export const AdjudicatedImportFormSchema = z.object({
  intent: z.literal("import-adjudicated"),
  fromStudy: z.string().trim().min(1, "Name the earlier study."),
  purpose: z.enum(["calibration", "training"]),
});

export const CalibrationCsvFormSchema = z.object({
  intent: z.literal("import-csv"),
  csv: z.string().min(1, "Paste the CSV.").max(1_000_000, "At most 1 MB of CSV."),
});

export const RemoveCalibrationFormSchema = z.object({
  intent: z.literal("remove-calibration"),
  id: z.coerce.number().int().positive(),
});
