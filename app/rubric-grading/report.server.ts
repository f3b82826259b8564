/**
 * The evaluation report from the stored verdicts (docs/rubric-grading.md, "Reports"): both refusal policies, the
 * files, the ranking figure and the manifest. Verdicts are read with a cursor, one response at a time.
 */
import { writeFolderAtomic } from "../platform/output-files.server";
import type { TopLevelSpec } from "vega-lite";
import type { Db } from "../platform/db.server";
import { renderSvg, svgToPng } from "../charts/charts.server";
import { softwareVersion } from "../platform/paths.server";
import { evaluate, REFUSAL_POLICIES, type Evaluation, type RefusalPolicy } from "./domain/evaluation";
import { cohenKappa } from "../judge-validation/public";
import { agreementCsv, pairedCsv, table1Csv, table1Markdown, tagsCsv } from "./domain/report-files";
import { responseMetrics, type BootstrapOptions, type GradedCriterion, type ResponseMetrics } from "./domain/score";
import { loadGraderText } from "./grader-text.server";
import { listModels, requireSubset, type GradingModel, type GradingSet } from "./sets.server";

/** Verdicts of a batch ingest still writing are hidden (docs/reliability.md, "Bulk imports"). */

export interface ReportOptions {
  set: GradingSet;
  subset: string | null;
  bootstrap: BootstrapOptions;
  pairedTop: number;
  alpha: number;
}

/** Criterion-level agreement of two judges over the verdicts both gave (neither excluded). */
export interface VerdictAgreement {
  a: string;
  b: string;
  n: number;
  /** Share of identical verdicts. */
  agreement: number | null;
  /** Cohen's κ of the two judges' met / not-met verdicts (app/judge-validation/domain/classification.ts). */
  kappa: number | null;
}

export interface Report {
  evaluations: Record<RefusalPolicy, Evaluation>;
  verdictAgreement: VerdictAgreement[];
  judges: string[];
  candidates: string[];
  manifest: Record<string, unknown>;
}

export function buildReport(db: Db, options: ReportOptions): Report {
  const { set } = options;
  const subset = options.subset ? requireSubset(db, set, options.subset) : null;
  const conversations = db.$client
    .prepare(
      `SELECT id, prompt_id AS promptId, example_tags AS exampleTags FROM grading_conversations WHERE set_id = ?
       ${subset ? "AND id IN (SELECT conversation_id FROM grading_subset_members WHERE subset_id = ?)" : ""} ORDER BY position`,
    )
    .all(...[set.id, ...(subset ? [subset.id] : [])]) as { id: number; promptId: string; exampleTags: string }[];
  const convIndex = new Map(conversations.map((c, k) => [c.id, k]));
  const criteria = new Map<number, { points: number; tags: string[] }[]>();
  for (const row of db.$client
    .prepare(
      `SELECT c.conversation_id AS conversationId, c.points AS points, c.tags AS tags FROM grading_criteria c
       JOIN grading_conversations g ON g.id = c.conversation_id WHERE g.set_id = ? ORDER BY c.conversation_id, c.idx`,
    )
    .iterate(set.id) as Iterable<{ conversationId: number; points: number; tags: string }>) {
    const list = criteria.get(row.conversationId) ?? [];
    list.push({ points: row.points, tags: JSON.parse(row.tags) });
    criteria.set(row.conversationId, list);
  }
  const candidates = listModels(db, set.id, "candidate");
  const judges = listModels(db, set.id, "judge");
  const candIndex = new Map(candidates.map((c, i) => [c.id, i]));
  const refused = candidates.map(() => conversations.map(() => false));
  for (const r of db.$client
    .prepare(
      `SELECT r.candidate_id AS candidateId, r.conversation_id AS conversationId FROM grading_responses r
       JOIN grading_models m ON m.id = r.candidate_id WHERE m.set_id = ? AND r.refusal = 1`,
    )
    .iterate(set.id) as Iterable<{ candidateId: number; conversationId: number }>) {
    const k = convIndex.get(r.conversationId);
    if (k !== undefined) refused[candIndex.get(r.candidateId)!][k] = true;
  }
  const metrics: (ResponseMetrics | null)[][][] = candidates.map(() => judges.map(() => conversations.map(() => null)));
  const verdictStmt = db.$client.prepare(
    `SELECT r.id AS responseId, r.candidate_id AS candidateId, r.conversation_id AS conversationId,
            v.criterion_idx AS idx, v.criteria_met AS met
     FROM visible_grading_verdicts v JOIN grading_responses r ON r.id = v.response_id
     WHERE v.judge_id = ? ORDER BY r.id, v.criterion_idx`,
  );
  judges.forEach((judge, j) => {
    type Current = {
      responseId: number;
      candidateId: number;
      conversationId: number;
      met: (boolean | null | undefined)[];
    };
    let current = null as Current | null;
    const flush = () => {
      if (!current) return;
      const k = convIndex.get(current.conversationId);
      const rubric = criteria.get(current.conversationId)!;
      const c = candIndex.get(current.candidateId);
      // A response counts only once every criterion has a verdict (a run in progress does not bias the means).
      if (
        k !== undefined &&
        c !== undefined &&
        current.met.length === rubric.length &&
        !current.met.includes(undefined)
      ) {
        const met = current.met as (boolean | null)[];
        const graded: GradedCriterion[] = rubric.map((r, i) => ({ points: r.points, tags: r.tags, met: met[i] }));
        const m = responseMetrics(graded, JSON.parse(conversations[k].exampleTags));
        metrics[c][j][k] = m.overall === null ? null : m;
      }
    };
    for (const v of verdictStmt.iterate(judge.id) as Iterable<{
      responseId: number;
      candidateId: number;
      conversationId: number;
      idx: number;
      met: number | null;
    }>) {
      if (current?.responseId !== v.responseId) {
        flush();
        current = { responseId: v.responseId, candidateId: v.candidateId, conversationId: v.conversationId, met: [] };
      }
      current.met[v.idx] = v.met === null ? null : v.met === 1;
    }
    flush();
  });
  const selfCandidate = new Map(judges.filter((j) => j.selfCandidate).map((j) => [j.name, j.selfCandidate!]));
  const base = {
    candidates: candidates.map((c) => c.name),
    judges: judges.map((j) => j.name),
    conversations: conversations.map((c) => c.promptId),
    metrics,
    refused,
    selfCandidate,
    bootstrap: options.bootstrap,
    pairedTop: options.pairedTop,
    alpha: options.alpha,
  };
  const evaluations = Object.fromEntries(
    REFUSAL_POLICIES.map((policy) => [policy, evaluate({ ...base, policy })]),
  ) as Record<RefusalPolicy, Evaluation>;
  const verdictAgreement: VerdictAgreement[] = [];
  const pairStmt = db.$client.prepare(
    `SELECT a.criteria_met AS x, b.criteria_met AS y
     FROM visible_grading_verdicts a
     JOIN visible_grading_verdicts b ON b.response_id = a.response_id AND b.criterion_idx = a.criterion_idx AND b.judge_id = ?
     JOIN grading_responses r ON r.id = a.response_id
     WHERE a.judge_id = ? AND a.criteria_met IS NOT NULL AND b.criteria_met IS NOT NULL
       ${subset ? "AND r.conversation_id IN (SELECT conversation_id FROM grading_subset_members WHERE subset_id = ?)" : ""}`,
  );
  for (let x = 0; x < judges.length; x++)
    for (let y = x + 1; y < judges.length; y++) {
      const first: string[] = [];
      const second: string[] = [];
      let same = 0;
      for (const row of pairStmt.iterate(...[judges[y].id, judges[x].id, ...(subset ? [subset.id] : [])]) as Iterable<{
        x: number;
        y: number;
      }>) {
        first.push(row.x ? "met" : "not_met");
        second.push(row.y ? "met" : "not_met");
        if (row.x === row.y) same++;
      }
      verdictAgreement.push({
        a: judges[x].name,
        b: judges[y].name,
        n: first.length,
        agreement: first.length ? same / first.length : null,
        kappa: cohenKappa(first, second),
      });
    }
  return {
    evaluations,
    verdictAgreement,
    judges: base.judges,
    candidates: base.candidates,
    manifest: buildManifest(db, set, subset, candidates, judges, options, conversations.length),
  };
}

function modelEntry(m: GradingModel) {
  return {
    name: m.name,
    model: m.model,
    base_url: m.baseUrl,
    temperature: m.temperature,
    temperature_note: m.temperature === null ? "not sent: the provider's default" : null,
    max_tokens: m.maxTokens,
    max_tokens_param: m.maxTokensParam,
    self_candidate: m.selfCandidate,
    note: m.note,
  };
}

function buildManifest(
  db: Db,
  set: GradingSet,
  subset: { name: string; contentSha256: string; idsSha256: string } | null,
  candidates: GradingModel[],
  judges: GradingModel[],
  options: ReportOptions,
  n: number,
) {
  const grader = loadGraderText();
  const one = <T>(sql: string, ...params: unknown[]) => db.$client.prepare(sql).get(...params) as T;
  return {
    software: "concord",
    software_version: softwareVersion(),
    protocol: "rubric-graded evaluation with a judge panel (HealthBench-Psych)",
    set: { name: set.name, content_sha256: set.contentSha256, source_sha256: set.sourceSha256 },
    subset: subset ? { name: subset.name, content_sha256: subset.contentSha256, ids_sha256: subset.idsSha256 } : null,
    conversations: n,
    grader: {
      template_sha256: grader.templateSha256,
      system_message_sha256: grader.systemMessageSha256,
      source: "openai/simple-evals healthbench_eval.py GRADER_TEMPLATE; sampler OPENAI_SYSTEM_MESSAGE_API",
    },
    scoring: {
      bootstrap_seed: options.bootstrap.seed,
      bootstrap_resamples: options.bootstrap.resamples,
      paired_top: options.pairedTop,
      alpha: options.alpha,
      refusal_policies: REFUSAL_POLICIES,
    },
    candidates: candidates.map((c) => ({
      ...modelEntry(c),
      ...one<{ responses: number; refusals: number; prompt_tokens: number | null; completion_tokens: number | null }>(
        `SELECT COUNT(*) AS responses, COALESCE(SUM(refusal), 0) AS refusals, SUM(prompt_tokens) AS prompt_tokens,
                SUM(completion_tokens) AS completion_tokens FROM grading_responses WHERE candidate_id = ?`,
        c.id,
      ),
      call_errors: one<{ n: number }>("SELECT COUNT(*) AS n FROM grading_call_errors WHERE model_id = ?", c.id).n,
    })),
    judges: judges.map((j) => ({
      ...modelEntry(j),
      verdicts: Object.fromEntries(
        (
          db.$client
            .prepare(
              `SELECT status, COUNT(*) AS n FROM visible_grading_verdicts WHERE judge_id = ? GROUP BY status ORDER BY status`,
            )
            .all(j.id) as {
            status: string;
            n: number;
          }[]
        ).map((r) => [r.status, r.n]),
      ),
      via: Object.fromEntries(
        (
          db.$client
            .prepare(
              `SELECT via, COUNT(*) AS n FROM visible_grading_verdicts WHERE judge_id = ? GROUP BY via ORDER BY via`,
            )
            .all(j.id) as {
            via: string;
            n: number;
          }[]
        ).map((r) => [r.via, r.n]),
      ),
      calls:
        one<{ n: number | null }>(`SELECT SUM(attempts) AS n FROM visible_grading_verdicts WHERE judge_id = ?`, j.id)
          .n ?? 0,
      ...one<{ prompt_tokens: number | null; completion_tokens: number | null }>(
        `SELECT SUM(prompt_tokens) AS prompt_tokens, SUM(completion_tokens) AS completion_tokens FROM visible_grading_verdicts WHERE judge_id = ?`,
        j.id,
      ),
      failed: db.$client
        .prepare(
          `SELECT g.prompt_id AS prompt_id, m.name AS candidate, v.criterion_idx AS criterion, v.error AS error
           FROM visible_grading_verdicts v JOIN grading_responses r ON r.id = v.response_id
           JOIN grading_conversations g ON g.id = r.conversation_id JOIN grading_models m ON m.id = r.candidate_id
           WHERE v.judge_id = ? AND v.status = 'failed' ORDER BY g.position, m.name, v.criterion_idx`,
        )
        .all(j.id) as unknown[],
      batches: db.$client
        .prepare("SELECT mode, status, requests, ingested, dropped FROM grading_batches WHERE judge_id = ? ORDER BY id")
        .all(j.id),
    })),
  };
}

export function rankingSpec(e: Evaluation): TopLevelSpec {
  const rows = e.table
    .filter((r) => r.panel)
    .map((r) => ({ candidate: r.candidate, score: r.panel!.mean, low: r.panel!.ci95[0], high: r.panel!.ci95[1] }));
  const order = rows.map((r) => r.candidate);
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    title: `Panel score with 95% bootstrap CI (${e.policy === "as_returned" ? "refusals graded as returned" : "refusals excluded"})`,
    width: 420,
    height: Math.max(60, 18 * rows.length),
    data: { values: rows },
    layer: [
      {
        mark: { type: "rule" },
        encoding: {
          y: { field: "candidate", type: "nominal", sort: order, title: null },
          x: { field: "low", type: "quantitative", title: "score", scale: { domain: [0, 1] } },
          x2: { field: "high" },
        },
      },
      {
        mark: { type: "point", filled: true },
        encoding: {
          y: { field: "candidate", type: "nominal", sort: order },
          x: { field: "score", type: "quantitative" },
        },
      },
    ],
    config: { font: "sans-serif" },
  } as TopLevelSpec;
}

export const REPORT_FILES = [
  "table1.csv",
  "table1.md",
  "table1-refusals-excluded.csv",
  "table1-refusals-excluded.md",
  "tags.csv",
  "themes.csv",
  "judge-agreement.csv",
  "paired.csv",
  "paired-refusals-excluded.csv",
  "ranking.svg",
  "ranking.png",
  "report.json",
  "manifest.json",
] as const;

export async function reportFiles(report: Report): Promise<Record<string, string | Buffer>> {
  const main = report.evaluations.as_returned;
  const alt = report.evaluations.exclude_refusals;
  const svg = await renderSvg(rankingSpec(main));
  const isTheme = (t: string) => t.startsWith("theme:");
  return {
    "table1.csv": table1Csv(main, report.judges),
    "table1.md": table1Markdown(main, report.judges),
    "table1-refusals-excluded.csv": table1Csv(alt, report.judges),
    "table1-refusals-excluded.md": table1Markdown(alt, report.judges),
    "tags.csv": tagsCsv(main, report.judges, (t) => !isTheme(t)),
    "themes.csv": tagsCsv(main, report.judges, isTheme),
    "judge-agreement.csv": agreementCsv(main, report.verdictAgreement),
    "paired.csv": pairedCsv(main),
    "paired-refusals-excluded.csv": pairedCsv(alt),
    "ranking.svg": svg,
    "ranking.png": svgToPng(svg),
    "report.json":
      JSON.stringify({ ...report.evaluations, verdict_agreement: report.verdictAgreement }, null, 2) + "\n",
    "manifest.json": JSON.stringify(report.manifest, null, 2) + "\n",
  };
}

export async function writeReport(report: Report, dir: string): Promise<string[]> {
  const files = await reportFiles(report);
  // The folder whole or not at all (docs/reliability.md, "Atomic files").
  writeFolderAtomic(dir, files);
  return Object.keys(files);
}
