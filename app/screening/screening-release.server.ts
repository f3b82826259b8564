/**
 * The release of a screening study (docs/screening.md): the subset the reviewer majority included, with per-item votes,
 * consensus tier, modal category and round of inclusion; counts by category; and a manifest with every round's
 * figures, seeds and content hashes. Deterministic: items in code-point order of their ids, fixed key order,
 * byte-identical repeats except the manifest's `exported_at`.
 */
import { createHash } from "node:crypto";
import { and, asc, eq } from "drizzle-orm";
import { visibleScreeningItems, visibleScreeningLabels, visibleScreeningRecallTiers } from "../../db/schema-visible";
import { formatCsv, formatReferenceCsv } from "../formats/csv-text";
import { NO_CATEGORY_MAJORITY, type RoundFigures } from "./domain/screening";
import { compareCodePoints } from "../python-compat/text";
import type { Db } from "../platform/db.server";
import { softwareVersion } from "../platform/paths.server";
import { getScreeningStudy, listUnusedItems, studyState } from "./screening.server";
import { guidelinesManifest } from "../guidelines/guidelines.server";

export const RELEASE_FILES = [
  "included.jsonl",
  "included.csv",
  "subset.jsonl",
  "categories.csv",
  "manifest.json",
] as const;
export type ReleaseFile = (typeof RELEASE_FILES)[number];

/**
 * How the shared order of every round can be replayed in Python (CPython's `random`); written into the manifest.
 */
export const ORDER_ALGORITHM =
  "rng = random.Random(seed); pool = sorted(control_pool_ids); rng.shuffle(pool); controls = pool[:n]; " +
  "order = sorted(candidate_ids + controls); rng.shuffle(order)  # Python 3, ids sorted by code point";

export type ReleaseResult =
  { ok: true; files: Record<ReleaseFile, string>; included: number; final: boolean } | { ok: false; message: string };

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
const lines = (rows: string[]) => rows.map((r) => `${r}\n`).join("");

function coefficient(c: RoundFigures["relevanceAc1"]) {
  return { value: c.value, se: c.se, ci95: c.ci95 };
}

/**
 * Builds the release files. Refused until the last round has closed with a control-inclusion rate at or below the
 * threshold, unless `allowIncomplete` (the manifest then says `"final": false`).
 */
export function exportScreeningRelease(
  db: Db,
  input: {
    studyId: number;
    allowIncomplete?: boolean;
    now?: Date;
    /** How a refusal names the way to a provisional export: the command's flag unless the caller words it. */
    incompleteHint?: string;
  },
): ReleaseResult {
  const study = getScreeningStudy(db, input.studyId);
  if (!study) return { ok: false, message: "No such screening study." };
  const state = studyState(db, study.id);
  const final = state.next.kind === "final";
  if (!final && !input.allowIncomplete) {
    const why =
      state.next.kind === "in_review"
        ? `round ${state.next.round} is still in review`
        : state.next.kind === "import_tiers" || (state.next.kind === "open_round" && state.next.round > 1)
          ? `the last round's control-inclusion rate is above the threshold, so recall round ${state.next.round} is due`
          : "no round has been reviewed yet";
    return {
      ok: false,
      message: `The included set is not final: ${why}. Finish the cycle, or ${input.incompleteHint ?? "export with --allow-incomplete"}.`,
    };
  }
  const closed = state.rounds.filter((r) => r.round.status === "closed");
  const codes = state.codes;

  const itemRows = db
    .select({
      externalId: visibleScreeningItems.externalId,
      source: visibleScreeningItems.source,
      contentHash: visibleScreeningItems.contentHash,
      label: visibleScreeningLabels.label,
      category: visibleScreeningLabels.category,
      confidence: visibleScreeningLabels.confidence,
    })
    .from(visibleScreeningItems)
    .leftJoin(visibleScreeningLabels, eq(visibleScreeningLabels.itemId, visibleScreeningItems.id))
    .where(eq(visibleScreeningItems.studyId, study.id))
    .orderBy(asc(visibleScreeningItems.position))
    .all()
    .sort((a, b) => compareCodePoints(a.externalId, b.externalId));
  const sourceOf = new Map(itemRows.map((r) => [r.externalId, r.source]));

  interface Included {
    id: string;
    round: number;
    source: string;
    wasControl: boolean;
    yes: number;
    reviewers: number;
    tier: string;
    modal: string;
    votes: { reviewer: string; relevant: boolean; category: string | null; confidence: string | null }[];
  }
  const included: Included[] = [];
  for (const r of closed) {
    for (const item of r.figures.perItem) {
      if (!item.included) continue;
      included.push({
        id: item.id,
        round: r.round.number,
        source: item.stratum,
        wasControl: item.isControl,
        yes: item.yes,
        reviewers: item.votes.length,
        tier: item.consensusTier ?? "",
        modal: item.modalCategory,
        votes: item.votes
          .map((v) => ({
            reviewer: codes.get(v.reviewer) ?? "?",
            relevant: v.relevant,
            category: v.category,
            confidence: v.confidence ?? null,
          }))
          .sort((a, b) => compareCodePoints(a.reviewer.padStart(4), b.reviewer.padStart(4))),
      });
    }
  }
  included.sort((a, b) => compareCodePoints(a.id, b.id));

  const includedJsonl = lines(
    included.map((i) =>
      JSON.stringify({
        id: i.id,
        round: i.round,
        source: i.source,
        was_control: i.wasControl,
        yes_votes: i.yes,
        reviewers: i.reviewers,
        consensus_tier: i.tier,
        modal_category: i.modal,
        votes: i.votes,
      }),
    ),
  );
  // The CSVs are for spreadsheets: formula-like cells are neutralised; the JSONL files keep every value as it is
  // (docs/security.md, "Spreadsheet exports").
  const includedCsv = formatCsv([
    ["id", "round", "source", "was_control", "yes_votes", "reviewers", "consensus_tier", "modal_category", "votes"],
    ...included.map((i) => [
      i.id,
      String(i.round),
      i.source,
      i.wasControl ? "1" : "0",
      String(i.yes),
      String(i.reviewers),
      i.tier,
      i.modal,
      i.votes
        .map((v) => `${v.reviewer}:${v.relevant ? "yes" : "no"}:${v.category ?? ""}:${v.confidence ?? ""}`)
        .join("|"),
    ]),
  ]);
  const subsetJsonl = lines(included.map((i) => sourceOf.get(i.id)!));

  const byCategory = new Map<string, number>();
  for (const i of included) byCategory.set(i.modal, (byCategory.get(i.modal) ?? 0) + 1);
  const categoryRows = [...byCategory]
    .filter(([c]) => c !== NO_CATEGORY_MAJORITY)
    .sort((a, b) => b[1] - a[1] || compareCodePoints(a[0], b[0]));
  if (byCategory.has(NO_CATEGORY_MAJORITY))
    categoryRows.push([NO_CATEGORY_MAJORITY, byCategory.get(NO_CATEGORY_MAJORITY)!]);
  const share = (n: number) => (included.length ? (n / included.length).toFixed(4) : "0.0000");
  const categoriesCsv = formatCsv([
    ["category", "n", "share"],
    ...categoryRows.map(([c, n]) => [c, String(n), share(n)]),
  ]);

  const rounds = describeRounds(db, study.id, state);

  const files = {
    "included.jsonl": includedJsonl,
    "included.csv": includedCsv,
    "subset.jsonl": subsetJsonl,
    "categories.csv": categoriesCsv,
  };
  const manifest = {
    software: "concord",
    software_version: softwareVersion(),
    protocol: "screening review with concealed controls and recall rounds (HealthBench-Psych)",
    study: study.name,
    exported_at: (input.now ?? new Date()).toISOString(),
    final,
    inclusion_criterion: study.inclusionCriterion,
    // The guidelines in force at export (docs/guidelines.md).
    guidelines: guidelinesManifest(db, { scope: "screening", scopeId: study.id }),
    settings: {
      reviewers_per_round: study.reviewersPerRound,
      inclusion_votes: study.inclusionVotes,
      control_threshold: study.controlThreshold,
      categories: study.categories,
    },
    corpus: {
      items: state.screen.items,
      items_sha256: sha256(lines(itemRows.map((r) => `${r.externalId}\t${r.contentHash}`))),
      screen: {
        relevant: state.screen.relevant,
        borderline: state.screen.borderline,
        not_relevant: state.screen.not_relevant,
        unlabelled: state.screen.unlabelled,
      },
      screen_labels_sha256: sha256(
        lines(itemRows.map((r) => `${r.externalId}\t${r.label ?? ""}\t${r.category ?? ""}\t${r.confidence ?? ""}`)),
      ),
    },
    order_algorithm: ORDER_ALGORITHM,
    rounds,
    release: {
      included: included.length,
      share_of_corpus: state.screen.items ? included.length / state.screen.items : null,
      by_round: closed.map((r) => ({
        round: r.round.number,
        included: included.filter((i) => i.round === r.round.number).length,
      })),
      included_controls: included.filter((i) => i.wasControl).length,
      by_category: categoryRows.map(([category, n]) => ({ category, n })),
    },
    files: Object.fromEntries(
      Object.entries(files).map(([name, text]) => [
        name,
        { sha256: sha256(text), records: name === "categories.csv" ? categoryRows.length : included.length },
      ]),
    ),
  };
  return {
    ok: true,
    included: included.length,
    final,
    files: { ...files, "manifest.json": JSON.stringify(manifest, null, 2) + "\n" },
  };
}

/**
 * Every round's figures as the manifest and `screening-report --json` write them: rule, seed, reviewer codes,
 * counts by stratum, inclusion, control-inclusion rate, decision, AC1 (overall and per pair) and content hashes.
 */
export function describeRounds(
  db: Db,
  studyId: number,
  state: ReturnType<typeof studyState> = studyState(db, studyId),
) {
  const codes = state.codes;
  return state.rounds.map((r) => {
    const f = r.figures;
    const roundCodes = r.reviewers.map((x) => x.code);
    const tiers =
      r.round.number > 1
        ? db
            .select({ externalId: visibleScreeningItems.externalId, tier: visibleScreeningRecallTiers.tier })
            .from(visibleScreeningRecallTiers)
            .innerJoin(visibleScreeningItems, eq(visibleScreeningItems.id, visibleScreeningRecallTiers.itemId))
            .where(
              and(
                eq(visibleScreeningRecallTiers.studyId, studyId),
                eq(visibleScreeningRecallTiers.roundNumber, r.round.number),
              ),
            )
            .all()
            .sort((a, b) => compareCodePoints(a.externalId, b.externalId))
        : null;
    const votes = f.perItem.flatMap((i) =>
      i.votes
        .map(
          (v) =>
            `${i.position}\t${codes.get(v.reviewer)}\t${v.relevant ? "yes" : "no"}\t${v.category ?? ""}\t${
              v.confidence ?? ""
            }`,
        )
        .sort(),
    );
    return {
      number: r.round.number,
      kind: r.round.number === 1 ? "screen" : "recall",
      status: r.round.status,
      seed: r.round.seed,
      rule: {
        reviewers: r.round.reviewersPerRound,
        inclusion_votes: r.round.inclusionVotes,
        control_threshold: r.round.controlThreshold,
      },
      reviewers: roundCodes,
      votes_submitted: f.votesIn,
      votes_expected: f.votesExpected,
      items: f.items,
      candidates: f.candidates,
      controls: f.controls,
      by_stratum: f.byStratum.map((s) => ({ stratum: s.stratum, control: s.isControl, n: s.n, included: s.included })),
      included: f.included,
      included_candidates: f.includedCandidates,
      included_controls: f.includedControls,
      control_inclusion_rate: f.controlInclusionRate,
      decision: f.decision,
      relevance_ac1: coefficient(f.relevanceAc1),
      percent_agreement: f.percentAgreement,
      pairwise_ac1: f.pairwise.map((p) => ({
        reviewers: p.reviewers.map((id) => codes.get(id) ?? "?"),
        n_items: p.nItems,
        ...coefficient(p.ac1),
      })),
      ...(tiers
        ? {
            recall_tiers: {
              clear: tiers.filter((t) => t.tier === "clear").length,
              possible: tiers.filter((t) => t.tier === "possible").length,
              no: tiers.filter((t) => t.tier === "no").length,
            },
            recall_tiers_sha256: sha256(lines(tiers.map((t) => `${t.externalId}\t${t.tier}`))),
          }
        : {}),
      order_sha256: sha256(lines(f.perItem.map((i) => i.id))),
      votes_sha256: sha256(lines(votes)),
    };
  });
}

/** The recall screen's population: ids of the items no round has used, one per line (CSV with header `id`). */
export function recallPoolCsv(db: Db, studyId: number): string {
  return formatReferenceCsv("recall-pool.csv", [["id"], ...listUnusedItems(db, studyId).map((r) => [r.externalId])]);
}
