/**
 * Generated-case review (docs/case-review.md; MentalBench, "Benchmark Construction", "Options and validation"): experts rate generated cases
 * on three 5-point scales (linguistic naturalness, diagnostic validity, clinical realism) and accept or reject seed
 * cases, a reason being required on reject. This module reads the case file and computes the report: mean and
 * distribution per dimension and per expert, agreement per dimension (Cohen's weighted κ for two experts, Gwet's
 * AC2, Krippendorff's α ordinal, all from app/stats), agreement on seed decisions, and the accepted seeds.
 * Pure: no database, no clock.
 */
import type { ImportSource } from "../../formats/import-source";
import { compareCodePoints } from "../../python-compat/text";
import {
  cell,
  cellWarnings,
  columnIndex,
  externalIdProblem,
  missingColumnsIssue,
  csvRows,
  unusedColumnsIssue,
  type CsvIssue,
  type CsvReport,
} from "../../expert-panel/domain/expert-csv";
import {
  REVIEW_DIMENSIONS,
  REVIEW_ITEM_KINDS,
  REVIEW_SCALE,
  type ReviewDimension,
  type ReviewItemKind,
} from "../../expert-panel/domain/expert-scales";
import {
  buildRatingTable,
  cohenWeightedKappa,
  gwetAc1,
  gwetAc2,
  krippendorffAlpha,
  percentAgreement,
} from "../../stats/index";
import { pushAll } from "../../stats/extremes";

export interface ReviewItemInput {
  line: number;
  externalId: string;
  kind: ReviewItemKind;
  text: string;
  caseType: string;
  diagnosis: string;
  seedId: string;
}

const COLUMNS = {
  id: ["id", "case_id"],
  kind: ["kind"],
  text: ["text", "case", "case_text", "content"],
  caseType: ["case_type", "type"],
  diagnosis: ["diagnosis", "answer", "diagnoses"],
  seedId: ["seed_id", "seed"],
} as const;

export const MAX_CASE_CHARS = 50_000;

/**
 * Reads a case file: id, text, kind (case or seed; default case), and optionally case_type (MentalBench's I–IV or
 * 1–4), diagnosis, seed_id (the seed a generated case came from). Validates the whole file; `errors` name lines.
 */
export function parseReviewCsv(text: string | ImportSource): {
  items: ReviewItemInput[];
  errors: CsvIssue[];
  warnings: CsvIssue[];
} {
  const report: CsvReport = { errors: [], warnings: [] };
  const items = [...reviewItemsOf(text, report)];
  return { items: report.errors.length ? [] : items, errors: report.errors, warnings: report.warnings };
}

/**
 * The valid cases of a case file as they are read, one row at a time (docs/reliability.md, "Memory bounded by the
 * longest line"), its errors and warnings reported into `report` as `parseReviewCsv` lists them; the file is valid
 * when `report.errors` is empty once the last item is read. What it keeps between rows: the ids seen (for duplicates)
 * and the seed references of the cases (checked at the end, against every id of the file).
 */
export function* reviewItemsOf(text: string | ImportSource, report: CsvReport): Generator<ReviewItemInput> {
  const { errors, warnings } = report;
  let header: string[] = [];
  let index = new Map<keyof typeof COLUMNS, number>();
  const rows = csvRows(
    text,
    report,
    (cells) => {
      header = cells;
      index = columnIndex(header, COLUMNS);
      const missing = (["id", "text"] as const).filter((c) => !index.has(c));
      if (missing.length) {
        errors.push(
          missingColumnsIssue(
            missing,
            "A case file needs id and text; kind, case_type, diagnosis and seed_id are optional.",
          ),
        );
        return false;
      }
      const unused = unusedColumnsIssue(header, index);
      if (unused) warnings.push(unused);
      return true;
    },
    "the file has a header but no cases.",
  );
  const seen = new Map<string, number>();
  const seedRefs: { line: number; seedId: string }[] = [];
  for (const { line, cells } of rows) {
    const get = (c: keyof typeof COLUMNS) => cell(cells, index.get(c));
    const problems: string[] = [];
    const externalId = get("id");
    const idProblem = externalIdProblem(externalId, seen, line);
    if (idProblem) problems.push(idProblem);
    const kind = (get("kind").toLowerCase() || "case") as ReviewItemKind;
    if (!REVIEW_ITEM_KINDS.includes(kind)) problems.push(`the kind "${get("kind")}" must be "case" or "seed".`);
    const body = get("text");
    if (!body) problems.push("the text is empty.");
    else if (body.length > MAX_CASE_CHARS) problems.push(`the text is longer than ${MAX_CASE_CHARS} characters.`);
    const caseType = get("caseType");
    if (caseType && !/^(I|II|III|IV|[1-4])$/i.test(caseType))
      problems.push(`the case_type "${caseType}" must be I, II, III, IV (or 1–4).`);
    pushAll(warnings, cellWarnings(header, cells, line));
    if (problems.length) for (const message of problems) errors.push({ line, message });
    else {
      const item: ReviewItemInput = {
        line,
        externalId,
        kind,
        text: body,
        caseType: caseType ? normaliseCaseType(caseType) : "",
        diagnosis: get("diagnosis"),
        seedId: get("seedId"),
      };
      if (item.seedId && item.kind === "case") seedRefs.push({ line, seedId: item.seedId });
      yield item;
    }
  }
  if (report.unreadable) return;
  for (const { line, seedId } of seedRefs)
    if (!seen.has(seedId))
      warnings.push({ line, message: `seed_id "${seedId}" is not a case of this file (kept as given).` });
}

function normaliseCaseType(t: string): string {
  return ({ "1": "I", "2": "II", "3": "III", "4": "IV" } as Record<string, string>)[t] ?? t.toUpperCase();
}

/** One expert's submitted review of one item. Scores are 1–5 (cases); decision and reason are for seeds. */
export interface ReviewRow {
  item: string;
  rater: string;
  naturalness: number | null;
  validity: number | null;
  realism: number | null;
  decision: "accept" | "reject" | null;
  reason: string;
}

/** The problem with a submission, or null: cases need all three scores, seeds a decision and, on reject, a reason. */
export function checkReview(
  kind: ReviewItemKind,
  r: Omit<ReviewRow, "item" | "rater">,
): Partial<Record<ReviewDimension | "decision" | "reason", string>> {
  const errors: Partial<Record<ReviewDimension | "decision" | "reason", string>> = {};
  if (kind === "case") {
    for (const d of REVIEW_DIMENSIONS)
      if (r[d] === null || !REVIEW_SCALE.includes(r[d] as 1)) errors[d] = "Choose a score from 1 to 5.";
  } else {
    if (r.decision !== "accept" && r.decision !== "reject") errors.decision = "Accept or reject the seed.";
    if (r.decision === "reject" && !r.reason.trim()) errors.reason = "Say why the seed is rejected.";
  }
  return errors;
}

export interface ScoreSummary {
  n: number;
  mean: number | null;
  sd: number | null;
  /** Counts of 1, 2, 3, 4, 5. */
  distribution: number[];
}

export interface DimensionAgreement {
  nItems: number;
  nRaters: number;
  krippendorffAlphaOrdinal: number | null;
  gwetAc2: { value: number | null; standardError: number | null; confidenceInterval: [number, number] | null };
  /** Two experts only (null with a reason otherwise). */
  cohenWeightedKappa: number | null;
  percentAgreement: number | null;
  reasons: string[];
}

export interface DimensionReport extends ScoreSummary {
  dimension: ReviewDimension;
  perExpert: (ScoreSummary & { rater: string })[];
  agreement: DimensionAgreement;
}

export interface SeedOutcome {
  id: string;
  accepts: number;
  rejects: number;
  /** Accepted only when every expert who reviewed it accepted it; pending when nobody has yet. */
  status: "accepted" | "rejected" | "pending";
  reasons: { rater: string; reason: string }[];
}

export interface ReviewReport {
  weights: "linear" | "quadratic";
  nCases: number;
  nSeeds: number;
  nReviews: number;
  experts: { rater: string; cases: number; seeds: number }[];
  dimensions: DimensionReport[];
  seeds: SeedOutcome[];
  seedAgreement: {
    nItems: number;
    percentAgreement: number | null;
    gwetAc1: number | null;
    krippendorffAlphaNominal: number | null;
    reasons: string[];
  };
  acceptedSeeds: string[];
}

function summarise(values: number[]): ScoreSummary {
  const distribution = REVIEW_SCALE.map((v) => values.filter((x) => x === v).length);
  if (values.length === 0) return { n: 0, mean: null, sd: null, distribution };
  const mean = values.reduce((s, v) => s + v, 0) / values.length;
  const sd =
    values.length > 1 ? Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / (values.length - 1)) : null;
  return { n: values.length, mean, sd, distribution };
}

/**
 * The report of a review set. `items` gives every item's id and kind (so unreviewed seeds show as pending); reviews
 * are submitted reviews only. Experts and seeds are listed in code-point order. SD is the sample standard deviation.
 */
export function reviewReport(
  items: readonly { id: string; kind: ReviewItemKind }[],
  reviews: readonly ReviewRow[],
  options: { weights?: "linear" | "quadratic" } = {},
): ReviewReport {
  const weights = options.weights ?? "quadratic";
  const kindOf = new Map(items.map((i) => [i.id, i.kind]));
  const caseReviews = reviews.filter((r) => kindOf.get(r.item) === "case");
  const seedReviews = reviews.filter((r) => kindOf.get(r.item) === "seed");
  const raters = [...new Set(reviews.map((r) => r.rater))].sort(compareCodePoints);
  const categories = REVIEW_SCALE.map(String);

  const dimensions: DimensionReport[] = REVIEW_DIMENSIONS.map((dimension) => {
    const rated = caseReviews.filter((r) => r[dimension] !== null);
    const overall = summarise(rated.map((r) => r[dimension]!));
    const perExpert = raters
      .map((rater) => ({ rater, ...summarise(rated.filter((r) => r.rater === rater).map((r) => r[dimension]!)) }))
      .filter((e) => e.n > 0);
    const reasons: string[] = [];
    const agreement: DimensionAgreement = {
      nItems: 0,
      nRaters: 0,
      krippendorffAlphaOrdinal: null,
      gwetAc2: { value: null, standardError: null, confidenceInterval: null },
      cohenWeightedKappa: null,
      percentAgreement: null,
      reasons,
    };
    if (rated.length > 0) {
      const table = buildRatingTable(
        rated.map((r) => ({ item: r.item, rater: r.rater, label: String(r[dimension]) })),
        { categories },
      );
      const alpha = krippendorffAlpha(table, "ordinal");
      const ac2 = gwetAc2(table, weights);
      const pa = percentAgreement(table);
      const kappa = cohenWeightedKappa(table, weights);
      agreement.nItems = ac2.nPairableItems;
      agreement.nRaters = table.raters.length;
      agreement.krippendorffAlphaOrdinal = alpha.value;
      agreement.gwetAc2 = {
        value: ac2.value,
        standardError: ac2.standardError,
        confidenceInterval: ac2.confidenceInterval,
      };
      agreement.cohenWeightedKappa = kappa.value;
      agreement.percentAgreement = pa.value;
      for (const reason of [alpha.reason, ac2.reason, kappa.reason, pa.reason])
        if (reason && !reasons.includes(reason)) reasons.push(reason);
    } else reasons.push("no case has been reviewed yet");
    return { dimension, ...overall, perExpert, agreement };
  });

  const seeds: SeedOutcome[] = items
    .filter((i) => i.kind === "seed")
    .map((i) => i.id)
    .sort(compareCodePoints)
    .map((id) => {
      const mine = seedReviews
        .filter((r) => r.item === id && r.decision !== null)
        .sort((a, b) => compareCodePoints(a.rater, b.rater));
      const accepts = mine.filter((r) => r.decision === "accept").length;
      const rejects = mine.filter((r) => r.decision === "reject").length;
      return {
        id,
        accepts,
        rejects,
        status: mine.length === 0 ? "pending" : rejects === 0 ? "accepted" : "rejected",
        reasons: mine.filter((r) => r.reason.trim()).map((r) => ({ rater: r.rater, reason: r.reason.trim() })),
      };
    });

  const decided = seedReviews.filter((r) => r.decision !== null);
  const seedAgreement: ReviewReport["seedAgreement"] = {
    nItems: 0,
    percentAgreement: null,
    gwetAc1: null,
    krippendorffAlphaNominal: null,
    reasons: [],
  };
  if (decided.length) {
    const table = buildRatingTable(
      decided.map((r) => ({ item: r.item, rater: r.rater, label: r.decision! })),
      { categories: ["accept", "reject"] },
    );
    const pa = percentAgreement(table);
    const ac1 = gwetAc1(table);
    const alpha = krippendorffAlpha(table, "nominal");
    seedAgreement.nItems = pa.nPairableItems;
    seedAgreement.percentAgreement = pa.value;
    seedAgreement.gwetAc1 = ac1.value;
    seedAgreement.krippendorffAlphaNominal = alpha.value;
    for (const reason of [pa.reason, ac1.reason, alpha.reason])
      if (reason && !seedAgreement.reasons.includes(reason)) seedAgreement.reasons.push(reason);
  } else seedAgreement.reasons.push("no seed has been reviewed yet");

  return {
    weights,
    nCases: items.filter((i) => i.kind === "case").length,
    nSeeds: items.filter((i) => i.kind === "seed").length,
    nReviews: reviews.length,
    experts: raters.map((rater) => ({
      rater,
      cases: caseReviews.filter((r) => r.rater === rater).length,
      seeds: seedReviews.filter((r) => r.rater === rater).length,
    })),
    dimensions,
    seeds,
    seedAgreement,
    acceptedSeeds: seeds.filter((s) => s.status === "accepted").map((s) => s.id),
  };
}
