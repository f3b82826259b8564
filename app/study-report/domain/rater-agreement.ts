/**
 * Agreement per pair of annotators and over time (docs/statistics.md, "Agreement per pair and over time"): the
 * study's two primary annotations of each case, before adjudication, broken down by who the two annotators were and
 * by when the pair was complete. Pure: the caller loads the records (study-report.server.ts); the `stats` command,
 * the dashboard and the gold export's manifest print the same object.
 *
 * The coefficients are app/stats's (percent agreement, Cohen's κ, Gwet's AC1, each with its standard error and 95%
 * Student-t interval); the pairs are read by rater identity (study-report-raters.ts). Measures:
 *
 * - `sufficiency`: every case with both primary annotations; both categories always count (as in the report), so
 *   AC1 stays defined when every note was called sufficient.
 * - `diagnosis`: the cases both annotators called sufficient, their codes compared at diagnosis level (equal
 *   diagnosis-level forms, docs/decisions/0007; the study report's diagnosis agreement, which leaves both-insufficient
 *   cases out, docs/decisions/0008); the categories are the codes used, so one code only gives null.
 *
 * JSON keys (snake_case, a documented interface like the report's): `rule`, `annotators`, `pairwise` {`pairs`
 * [{`annotators`, `sufficiency`, `diagnosis`}]}, `over_time` {`timezone`, `batch_size`, `n_cases`, `n_untimed`,
 * `by_week` [{`week`, `start`, `n_cases`, …}], `by_batch` [{`batch`, `first`, `last`, `from`, `to`, `n_cases`, …}]},
 * `reasons` {dotted path, array indices as numbers → why that value is null}. Each measure is {`n`, `n_agreed`,
 * `percent_agreement`, `cohen_kappa`, `gwet_ac1`}, each coefficient {`value`, `se`, `ci95`}.
 */
import { z } from "zod";
import type { CaseLabel } from "../../labels/labels";
import { parseIcd10 } from "../../icd10/icd10";
import { cohenKappa, gwetAc1, percentAgreement, type IntervalSummary } from "../../stats/index";
import { compareText, pairTable, Reasons, SUFFICIENCY_CATEGORIES } from "./study-report-agreement";
import { orientByRater, POOLED_COHEN_REASON, type RaterRecord, type RaterRule } from "./study-report-raters";

/** Consecutive cases per batch when the caller gives no size. */
export const DEFAULT_BATCH_SIZE = 50;
/**
 * The most batches the statistics page shows: a study's page costs what it shows, not what the study holds
 * (docs/architecture.md, "Pages are windows"), so a bigger study gets bigger batches there. The command line and the
 * JSON download give any batch size.
 */
export const MAX_PAGE_BATCHES = 40;
/** The smallest batch the statistics page makes by itself (a smaller one is shown when asked for). */
export const MIN_PAGE_BATCH_SIZE = 10;
/** The standard error needs two items; a batch of one would never have an interval. */
export const MIN_BATCH_SIZE = 2;

/** A batch size as typed (a query parameter, a flag): a whole number of at least {@link MIN_BATCH_SIZE}. */
export const BatchSizeSchema = z
  .string()
  .regex(/^\d{1,9}$/)
  .transform(Number)
  .pipe(z.number().int().min(MIN_BATCH_SIZE));

export interface RaterAgreementRecord extends RaterRecord {
  caseId: number;
  /** When the later of the two primary annotations was submitted (ms since the epoch); null when not known. */
  completedAt?: number | null;
}

export interface RaterAgreementOptions {
  /** Cases per batch in completion order; default {@link DEFAULT_BATCH_SIZE}. */
  batchSize?: number;
  /**
   * At most this many batches: when the cases would make more, each batch holds `ceil(cases / maxBatches)` instead
   * (`over_time.batch_size` is the size used). Without `batchSize`, the batches are then the smallest, of at least
   * {@link MIN_PAGE_BATCH_SIZE} cases, that make no more than `maxBatches`: a fixed number of points for a big study.
   */
  maxBatches?: number;
}

export interface MeasureAgreement {
  /** Cases in the computation. */
  n: number;
  n_agreed: number;
  percent_agreement: IntervalSummary;
  cohen_kappa: IntervalSummary;
  gwet_ac1: IntervalSummary;
}

export interface PairwiseEntry {
  /** [row annotator, column annotator]: the username that sorts first is the row. */
  annotators: [string, string];
  sufficiency: MeasureAgreement;
  diagnosis: MeasureAgreement;
}

interface BucketAgreement {
  /** Cases with both primary annotations completed in the bucket. */
  n_cases: number;
  sufficiency: MeasureAgreement;
  diagnosis: MeasureAgreement;
}

export interface WeekBucket extends BucketAgreement {
  /** ISO 8601 week of the later submission, UTC: `2025-W03`. */
  week: string;
  /** The Monday that starts it (UTC), `YYYY-MM-DD`. */
  start: string;
}

export interface BatchBucket extends BucketAgreement {
  /** 1, 2, … in completion order. */
  batch: number;
  /** Positions in completion order (1-based) of the batch's first and last case. */
  first: number;
  last: number;
  /** Completion times of its first and last case, ISO 8601 UTC. */
  from: string;
  to: string;
}

export interface RaterAgreementReport {
  rule: RaterRule;
  /** Every annotator with at least one complete pair, by username. */
  annotators: string[];
  pairwise: { pairs: PairwiseEntry[] };
  over_time: {
    timezone: "UTC";
    batch_size: number;
    /** Cases with both primary annotations and a completion time: the cases the buckets divide. */
    n_cases: number;
    /** Cases with both primary annotations but no completion time, left out of the buckets. */
    n_untimed: number;
    by_week: WeekBucket[];
    by_batch: BatchBucket[];
  };
  /** Why each null value is null, keyed by its dotted JSON path (`pairwise.pairs.0.diagnosis.gwet_ac1`). */
  reasons: Record<string, string>;
}

const DAY_MS = 86_400_000;
const NO_SHARED_CASES = "the two annotators share no case with both annotations in";
const NO_SUFFICIENT_SHARED = "the two annotators called no shared case sufficient";
const NO_CASES_IN_WEEK = "no case was completed in this week";
const NO_SUFFICIENT_IN_BUCKET = "no case of this bucket was called sufficient by both annotators";

function diagnosisLevelOf(label: CaseLabel): string | null {
  if (label.sufficiency !== "sufficient") return null;
  const p = parseIcd10(label.icd10);
  return p.ok ? p.diagnosisLevel : null;
}

/**
 * Percent agreement, Cohen's κ and Gwet's AC1 of (row, column) label pairs, every null with its reason under `path`.
 * `withholdKappa`: the reason Cohen's κ is not given (pooled over different pairs of raters).
 */
function measure(
  path: string,
  labels: readonly (readonly [string, string])[],
  reasons: Reasons,
  emptyReason: string,
  options: { categories?: readonly string[]; withholdKappa?: string | null } = {},
): MeasureAgreement {
  const n = labels.length;
  const n_agreed = labels.filter(([a, b]) => a === b).length;
  if (n === 0) {
    return {
      n,
      n_agreed,
      percent_agreement: reasons.missingInterval(`${path}.percent_agreement`, emptyReason),
      cohen_kappa: reasons.missingInterval(`${path}.cohen_kappa`, emptyReason),
      gwet_ac1: reasons.missingInterval(`${path}.gwet_ac1`, emptyReason),
    };
  }
  const table = pairTable(labels, options.categories);
  return {
    n,
    n_agreed,
    percent_agreement: reasons.interval(`${path}.percent_agreement`, percentAgreement(table)),
    cohen_kappa: options.withholdKappa
      ? reasons.missingInterval(`${path}.cohen_kappa`, options.withholdKappa)
      : reasons.interval(`${path}.cohen_kappa`, cohenKappa(table)),
    gwet_ac1: reasons.interval(`${path}.gwet_ac1`, gwetAc1(table)),
  };
}

function measures(
  path: string,
  pairs: readonly (readonly [CaseLabel, CaseLabel])[],
  reasons: Reasons,
  empty: { cases: string; sufficient: string },
  withholdKappa: string | null,
): { sufficiency: MeasureAgreement; diagnosis: MeasureAgreement } {
  const diagnosis = pairs.flatMap(([a, b]) => {
    const [da, db] = [diagnosisLevelOf(a), diagnosisLevelOf(b)];
    return da !== null && db !== null ? [[da, db] as const] : [];
  });
  return {
    sufficiency: measure(
      `${path}.sufficiency`,
      pairs.map(([a, b]) => [a.sufficiency, b.sufficiency] as const),
      reasons,
      empty.cases,
      { categories: SUFFICIENCY_CATEGORIES, withholdKappa },
    ),
    diagnosis: measure(`${path}.diagnosis`, diagnosis, reasons, pairs.length ? empty.sufficient : empty.cases, {
      withholdKappa,
    }),
  };
}

/** The ISO 8601 week (Monday to Sunday, UTC) holding `ms`: its label and the Monday it starts on. */
export function isoWeekOf(ms: number): { week: string; start: number } {
  const d = new Date(ms);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) - ((d.getUTCDay() + 6) % 7) * DAY_MS;
  // The week belongs to the year of its Thursday, and is numbered by how many Thursdays of that year precede it.
  const thursday = new Date(start + 3 * DAY_MS);
  const year = thursday.getUTCFullYear();
  const week = Math.floor((thursday.getTime() - Date.UTC(year, 0, 1)) / (7 * DAY_MS)) + 1;
  return { week: `${year}-W${String(week).padStart(2, "0")}`, start };
}

const isoDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * Pairwise agreement and agreement over time of a study's records (docs/statistics.md, "Agreement per pair and over
 * time"). Records without both primary annotations are ignored; so are, for the buckets, records without a
 * completion time (counted in `n_untimed`).
 *
 * @example buildRaterAgreement(records, { batchSize: 25 }).pairwise.pairs[0].sufficiency.cohen_kappa.value
 */
export function buildRaterAgreement(
  given: readonly RaterAgreementRecord[],
  options: RaterAgreementOptions = {},
): RaterAgreementReport {
  const asked = options.batchSize ?? DEFAULT_BATCH_SIZE;
  if (!Number.isInteger(asked) || asked < MIN_BATCH_SIZE)
    throw new RangeError(`batchSize must be an integer of at least ${MIN_BATCH_SIZE}, got ${asked}`);
  if (options.maxBatches !== undefined && (!Number.isInteger(options.maxBatches) || options.maxBatches < 1))
    throw new RangeError(`maxBatches must be a positive integer, got ${options.maxBatches}`);
  const { rule, records } = orientByRater(given);
  const complete = records.filter((r) => r.annotations !== null);
  const reasons = new Reasons();

  // Every unordered pair of annotators, including pairs that share no case (n 0, every value null).
  const annotators =
    rule === "adjudicator_order" ? [] : [...new Set(complete.flatMap((r) => r.annotators!))].sort(compareText);
  const shared = new Map<string, (readonly [CaseLabel, CaseLabel])[]>();
  for (const r of complete) {
    if (!r.annotators) continue;
    const key = JSON.stringify(r.annotators);
    const list = shared.get(key);
    if (list) list.push(r.annotations!);
    else shared.set(key, [r.annotations!]);
  }
  const pairs: PairwiseEntry[] = [];
  for (let i = 0; i < annotators.length; i++) {
    for (let j = i + 1; j < annotators.length; j++) {
      const names: [string, string] = [annotators[i]!, annotators[j]!];
      const labels = shared.get(JSON.stringify(names)) ?? [];
      const path = `pairwise.pairs.${pairs.length}`;
      const m = measures(path, labels, reasons, { cases: NO_SHARED_CASES, sufficient: NO_SUFFICIENT_SHARED }, null);
      pairs.push({ annotators: names, ...m });
    }
  }

  // Pooled over pairs, a Cohen's κ per bucket would mix raters exactly as the pooled report's would.
  const withholdKappa = rule === "pair_order" ? POOLED_COHEN_REASON : null;
  const timed = complete
    .filter((r) => typeof r.completedAt === "number" && Number.isFinite(r.completedAt))
    .sort((x, y) => x.completedAt! - y.completedAt! || x.caseId - y.caseId);
  const bucket = (path: string, rs: typeof timed, emptyCases: string): BucketAgreement => ({
    n_cases: rs.length,
    ...measures(
      path,
      rs.map((r) => r.annotations!),
      reasons,
      { cases: emptyCases, sufficient: NO_SUFFICIENT_IN_BUCKET },
      withholdKappa,
    ),
  });

  const by_week: WeekBucket[] = [];
  if (timed.length > 0) {
    const byStart = new Map<number, typeof timed>();
    for (const r of timed) {
      const { start } = isoWeekOf(r.completedAt!);
      const list = byStart.get(start);
      if (list) list.push(r);
      else byStart.set(start, [r]);
    }
    const first = isoWeekOf(timed[0]!.completedAt!).start;
    const last = isoWeekOf(timed[timed.length - 1]!.completedAt!).start;
    // Weeks without a completed case stay in the series (n 0), so a pause in the study shows as a gap.
    for (let start = first; start <= last; start += 7 * DAY_MS) {
      const path = `over_time.by_week.${by_week.length}`;
      by_week.push({
        week: isoWeekOf(start).week,
        start: isoDate(start),
        ...bucket(path, byStart.get(start) ?? [], NO_CASES_IN_WEEK),
      });
    }
  }

  const batchSize =
    options.maxBatches === undefined
      ? asked
      : Math.max(
          options.batchSize ?? MIN_PAGE_BATCH_SIZE,
          Math.ceil(timed.length / options.maxBatches),
          MIN_BATCH_SIZE,
        );
  const by_batch: BatchBucket[] = [];
  for (let from = 0; from < timed.length; from += batchSize) {
    const rs = timed.slice(from, from + batchSize);
    const path = `over_time.by_batch.${by_batch.length}`;
    by_batch.push({
      batch: by_batch.length + 1,
      first: from + 1,
      last: from + rs.length,
      from: new Date(rs[0]!.completedAt!).toISOString(),
      to: new Date(rs[rs.length - 1]!.completedAt!).toISOString(),
      ...bucket(path, rs, NO_CASES_IN_WEEK),
    });
  }

  return {
    rule,
    annotators,
    pairwise: { pairs },
    over_time: {
      timezone: "UTC",
      batch_size: batchSize,
      n_cases: timed.length,
      n_untimed: complete.length - timed.length,
      by_week,
      by_batch,
    },
    reasons: reasons.byPath,
  };
}

/**
 * The same figures with the annotators named `Annotator 1` … `Annotator n` in username order, for files that carry
 * no identities (the gold export's manifest).
 */
export function withPseudonyms(report: RaterAgreementReport): RaterAgreementReport {
  const name = new Map(report.annotators.map((a, i) => [a, `Annotator ${i + 1}`]));
  return {
    ...report,
    annotators: report.annotators.map((a) => name.get(a)!),
    pairwise: {
      pairs: report.pairwise.pairs.map((p) => ({
        ...p,
        annotators: [name.get(p.annotators[0])!, name.get(p.annotators[1])!],
      })),
    },
  };
}

/** The reasons of a report grouped by reason: each text once with the paths it explains (`packReasons`). */
export type PackedReasons = { reason: string; paths: string[] }[];

/**
 * `reasons` with each text once: a page's agreement has a few distinct reasons for hundreds of n/a values (every
 * pair and batch), so its data sends each text once rather than once per value (docs/architecture.md, "Pages are
 * windows"). `unpackReasons` gives the same record back.
 */
export function packReasons(reasons: Record<string, string>): PackedReasons {
  const byReason = new Map<string, string[]>();
  for (const [path, reason] of Object.entries(reasons)) {
    const paths = byReason.get(reason);
    if (paths) paths.push(path);
    else byReason.set(reason, [path]);
  }
  return [...byReason].map(([reason, paths]) => ({ reason, paths }));
}

/** The record `packReasons` was given, in the same order of paths within each reason. */
export function unpackReasons(packed: PackedReasons): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { reason, paths } of packed) for (const p of paths) out[p] = reason;
  return out;
}
