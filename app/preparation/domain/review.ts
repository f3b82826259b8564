/**
 * The minimisation review of one note (docs/preparation.md, "The review"): the detectors' proposals on the note, the
 * reviewer's decision on each (accept, edit, reject), the text they marked as missed, and the case's exclusion with
 * its reason; what a submission must hold, and the minimised text the decisions give. Pure.
 */
import { z } from "zod";
import {
  PREP_CATEGORIES,
  type PrepDecision,
  type PrepDetectorSettings,
  type PrepMissedSpan,
  type PrepProposal,
  type PrepSection,
} from "../../../db/vocabulary";
import { applySpans, detectAll, type DetectorConfig } from "./detectors";
import { DEFAULT_SCORE_TABLE } from "./score-table";

export interface MinimisationValues {
  decisions: Record<string, PrepDecision>;
  missed: PrepMissedSpan[];
  excluded: boolean;
  exclusionReason: string;
}

export const EMPTY_REVIEW: MinimisationValues = { decisions: {}, missed: [], excluded: false, exclusionReason: "" };

/** The longest exclusion reason and edited replacement, in characters. */
export const MAX_REASON_CHARS = 2000;
export const MAX_EDIT_CHARS = 500;

// The values' one schema, used by the page and the route alike (docs/architecture.md, "One workspace page").
const DecisionSchema = z.union([
  z.object({ action: z.literal("accept") }).strict(),
  z.object({ action: z.literal("reject") }).strict(),
  z
    .object({
      action: z.literal("edit"),
      text: z.string().max(MAX_EDIT_CHARS, `An edited text has at most ${MAX_EDIT_CHARS} characters.`),
    })
    .strict(),
]);

const SpanSchema = z
  .object({
    section: z.number().int().min(0).max(20),
    start: z.number().int().min(0),
    end: z.number().int().min(0),
    category: z.enum(PREP_CATEGORIES),
    replacement: z.string().max(MAX_EDIT_CHARS, `A replacement has at most ${MAX_EDIT_CHARS} characters.`),
  })
  .strict();

/** The review's values as a post carries them. */
export const MinimisationValuesSchema = z
  .object({
    decisions: z.record(z.string().max(40), DecisionSchema),
    missed: z.array(SpanSchema).max(500),
    excluded: z.boolean(),
    exclusionReason: z
      .string()
      .max(MAX_REASON_CHARS, `An exclusion reason has at most ${MAX_REASON_CHARS} characters.`),
  })
  .strict();

export const DEFAULT_SETTINGS: PrepDetectorSettings = {
  places: [],
  names: [],
  institutions: [],
  namePatterns: [],
  scoreTable: null,
};

export function detectorConfig(settings: PrepDetectorSettings): DetectorConfig {
  return { ...settings, scoreTable: settings.scoreTable ?? DEFAULT_SCORE_TABLE };
}

/** The detectors' proposals on every section of a note, each with its stable id. */
export function proposalsOf(
  sections: readonly PrepSection[],
  config: DetectorConfig,
  language: string,
): PrepProposal[] {
  return sections.flatMap((s, section) =>
    detectAll(s.content, config, language).map((span) => ({
      id: `s${section}-${span.start}-${span.end}`,
      section,
      ...span,
    })),
  );
}

export type ReviewErrors = Record<string, string>;

/**
 * What keeps a review from being submitted: a proposal without a decision (unless the case is excluded), an edit
 * without its text field, an exclusion without a reason, a missed span outside its section or over another span.
 * Keys: `proposal:<id>`, `missed:<index>`, `exclusionReason`.
 */
export function checkReview(
  values: MinimisationValues,
  note: { sections: readonly PrepSection[]; proposals: readonly PrepProposal[] },
): ReviewErrors {
  const e: ReviewErrors = {};
  if (values.excluded) {
    if (!values.exclusionReason.trim()) e.exclusionReason = "Say why the case is excluded.";
    return e;
  }
  for (const p of note.proposals) {
    const d = values.decisions[p.id];
    if (!d) e[`proposal:${p.id}`] = "Accept, edit or reject this proposal.";
    else if (d.action === "edit" && d.text === undefined) e[`proposal:${p.id}`] = "Give the edited text.";
  }
  Object.assign(e, missedErrors(values.missed, note));
  return e;
}

/** Missed spans that cannot apply: outside their section, empty, or over a proposal or another missed span. */
export function missedErrors(
  missed: readonly PrepMissedSpan[],
  note: { sections: readonly PrepSection[]; proposals: readonly PrepProposal[] },
): ReviewErrors {
  const e: ReviewErrors = {};
  missed.forEach((m, i) => {
    const text = note.sections[m.section]?.content;
    if (text === undefined || m.start < 0 || m.end > text.length || m.end <= m.start)
      e[`missed:${i}`] = "This marked text is not in the note.";
    else if (
      note.proposals.some((p) => p.section === m.section && p.start < m.end && m.start < p.end) ||
      missed.some((o, j) => j !== i && o.section === m.section && o.start < m.end && m.start < o.end)
    )
      e[`missed:${i}`] = "This marked text overlaps another proposal or mark.";
  });
  return e;
}

/** The values in the form they are stored: decisions only for the note's proposals, an edit's text trimmed of nothing. */
export function normaliseReview(values: MinimisationValues, proposals: readonly PrepProposal[]): MinimisationValues {
  const ids = new Set(proposals.map((p) => p.id));
  const decisions: Record<string, PrepDecision> = {};
  for (const [id, d] of Object.entries(values.decisions)) {
    if (!ids.has(id)) continue;
    decisions[id] = d.action === "edit" ? { action: "edit", text: d.text ?? "" } : { action: d.action };
  }
  return {
    decisions,
    missed: [...values.missed].sort((a, b) => a.section - b.section || a.start - b.start),
    excluded: values.excluded,
    exclusionReason: values.excluded ? values.exclusionReason : "",
  };
}

/**
 * Each section's text after the review: accepted proposals replaced as proposed, edited ones by the reviewer's text,
 * rejected ones left as they were, missed spans replaced by their replacement. Null for an excluded case.
 */
export function minimisedSections(
  note: { sections: readonly PrepSection[]; proposals: readonly PrepProposal[] },
  values: MinimisationValues,
): PrepSection[] | null {
  if (values.excluded) return null;
  return note.sections.map((s, section) => {
    const spans = [
      ...note.proposals
        .filter((p) => p.section === section)
        .flatMap((p) => {
          const d = values.decisions[p.id];
          if (!d || d.action === "reject") return [];
          return [{ ...p, replacement: d.action === "edit" ? (d.text ?? "") : p.replacement }];
        }),
      ...values.missed.filter((m) => m.section === section),
    ];
    return { ...s, content: applySpans(s.content, spans) };
  });
}

/** How many proposals were accepted, edited and rejected, and how many spans were marked as missed. */
export function reviewCounts(values: MinimisationValues): Record<"accept" | "edit" | "reject" | "missed", number> {
  const c = { accept: 0, edit: 0, reject: 0, missed: values.missed.length };
  for (const d of Object.values(values.decisions)) c[d.action]++;
  return c;
}
