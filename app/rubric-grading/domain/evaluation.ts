/**
 * The evaluation's tables from per-response metrics (docs/rubric-grading.md, "Reports"): Table 1 (panel mean with
 * its bootstrap interval and every judge's score per candidate), per-tag tables, judge agreement and paired
 * comparisons, under one refusal policy. Pure: the services load the verdicts and pass them in.
 */
import { holm, kendallTauB, pairedComparison, selfPreference, severities, type PairedComparison } from "./compare";
import {
  clippedEstimate,
  clippedMean,
  mean,
  panelConversationScore,
  type BootstrapOptions,
  type ClippedEstimate,
  type ResponseMetrics,
} from "./score";

export const REFUSAL_POLICIES = ["as_returned", "exclude_refusals"] as const;
export type RefusalPolicy = (typeof REFUSAL_POLICIES)[number];

export interface EvaluationInput {
  candidates: readonly string[];
  judges: readonly string[];
  conversations: readonly string[];
  /** metrics[c][j][k]: candidate c's response to conversation k under judge j; null when not (fully) graded. */
  metrics: readonly (readonly (readonly (ResponseMetrics | null)[])[])[];
  /** refused[c][k]: candidate c's stored response to conversation k is an explicit refusal. */
  refused: readonly (readonly boolean[])[];
  /** Judge name → the candidate it also is (for self-preference). */
  selfCandidate: ReadonlyMap<string, string>;
  policy: RefusalPolicy;
  bootstrap: BootstrapOptions;
  /** Paired comparisons among the top `pairedTop` candidates by panel score (the paper: 5, ten pairs). */
  pairedTop: number;
  alpha: number;
}

export interface CandidateRow {
  candidate: string;
  rank: number;
  panel: ClippedEstimate | null;
  judges: Record<string, ClippedEstimate | null>;
  conversations: number;
  refusals: number;
  /** Conversations left out: not graded by any judge, or excluded refusals. */
  excluded: number;
}

export interface TagRow {
  candidate: string;
  tag: string;
  panel: number;
  n: number;
  judges: Record<string, number | null>;
}

export interface PairRow extends PairedComparison {
  a: string;
  b: string;
  pHolm: number;
  significant: boolean;
  significantHolm: boolean;
}

export interface Evaluation {
  policy: RefusalPolicy;
  table: CandidateRow[];
  tags: TagRow[];
  agreement: {
    candidates: string[];
    kendall: { a: string; b: string; tau: number | null }[];
    grandMean: number | null;
    judges: { judge: string; mean: number; severity: number }[];
    selfPreference: { judge: string; candidate: string; raw: number | null; corrected: number | null }[];
  };
  paired: PairRow[];
}

function included(input: EvaluationInput, c: number, k: number): boolean {
  return !(input.policy === "exclude_refusals" && input.refused[c][k]);
}

export function evaluate(input: EvaluationInput): Evaluation {
  const { candidates, judges, conversations } = input;
  // Per candidate: the panel score per conversation (null = not scored), kept for paired comparisons.
  const panelSeries: (number | null)[][] = [];
  const rows: CandidateRow[] = candidates.map((candidate, c) => {
    const panel: (number | null)[] = conversations.map((_, k) =>
      included(input, c, k)
        ? panelConversationScore(judges.map((_, j) => input.metrics[c][j][k]?.overall ?? null))
        : null,
    );
    panelSeries.push(panel);
    const perJudge: Record<string, ClippedEstimate | null> = {};
    judges.forEach((judge, j) => {
      const values: number[] = [];
      conversations.forEach((_, k) => {
        const o = input.metrics[c][j][k]?.overall;
        if (included(input, c, k) && o !== null && o !== undefined) values.push(o);
      });
      perJudge[judge] = clippedEstimate(values, input.bootstrap);
    });
    const scored = panel.filter((p): p is number => p !== null);
    return {
      candidate,
      rank: 0,
      panel: clippedEstimate(scored, input.bootstrap),
      judges: perJudge,
      conversations: scored.length,
      refusals: input.refused[c].filter(Boolean).length,
      excluded: conversations.length - scored.length,
    };
  });
  const order = rows
    .map((r, c) => ({ r, c }))
    .sort((x, y) => (y.r.panel?.mean ?? -1) - (x.r.panel?.mean ?? -1) || (x.r.candidate < y.r.candidate ? -1 : 1));
  order.forEach(({ r }, i) => (r.rank = i + 1));

  const tags: TagRow[] = [];
  candidates.forEach((candidate, c) => {
    const names = new Set<string>();
    for (const row of input.metrics[c]) for (const m of row) if (m) for (const t of m.tags.keys()) names.add(t);
    for (const tag of [...names].sort()) {
      const panelValues: number[] = [];
      const judgeValues = judges.map(() => [] as number[]);
      conversations.forEach((_, k) => {
        if (!included(input, c, k)) return;
        const present: number[] = [];
        judges.forEach((_, j) => {
          const v = input.metrics[c][j][k]?.tags.get(tag);
          if (v !== undefined) {
            present.push(v);
            judgeValues[j].push(v);
          }
        });
        if (present.length) panelValues.push(mean(present));
      });
      if (!panelValues.length) continue;
      tags.push({
        candidate,
        tag,
        panel: clippedMean(panelValues),
        n: panelValues.length,
        judges: Object.fromEntries(
          judges.map((judge, j) => [judge, judgeValues[j].length ? clippedMean(judgeValues[j]) : null]),
        ),
      });
    }
  });

  // Agreement over the candidates every judge scored.
  const common = candidates.filter((_, c) => judges.every((judge) => rows[c].judges[judge] !== null));
  const score = (judge: string, candidate: string) => rows[candidates.indexOf(candidate)].judges[judge]!.mean;
  const kendall: Evaluation["agreement"]["kendall"] = [];
  for (let a = 0; a < judges.length; a++)
    for (let b = a + 1; b < judges.length; b++)
      kendall.push({
        a: judges[a],
        b: judges[b],
        tau:
          common.length >= 2
            ? kendallTauB(
                common.map((c) => score(judges[a], c)),
                common.map((c) => score(judges[b], c)),
              )
            : null,
      });
  let grandMean: number | null = null;
  const judgeRows: Evaluation["agreement"]["judges"] = [];
  const selfRows: Evaluation["agreement"]["selfPreference"] = [];
  if (common.length > 0 && judges.length > 0) {
    const sev = severities(judges.map((judge) => common.map((c) => score(judge, c))));
    grandMean = sev.grandMean;
    judges.forEach((judge, j) => judgeRows.push({ judge, mean: sev.judgeMeans[j], severity: sev.severity[j] }));
    judges.forEach((judge, j) => {
      const own = input.selfCandidate.get(judge);
      if (own === undefined || !common.includes(own)) return;
      const p = selfPreference(
        judges.map((k) => score(k, own)),
        j,
        sev.severity,
      );
      selfRows.push({ judge, candidate: own, raw: p.raw, corrected: p.corrected });
    });
  }

  const top = order
    .filter(({ r }) => r.panel !== null)
    .slice(0, input.pairedTop)
    .map(({ c }) => c);
  const pairs: (PairedComparison & { a: string; b: string })[] = [];
  for (let x = 0; x < top.length; x++)
    for (let y = x + 1; y < top.length; y++) {
      const a: number[] = [];
      const b: number[] = [];
      conversations.forEach((_, k) => {
        const va = panelSeries[top[x]][k];
        const vb = panelSeries[top[y]][k];
        if (va !== null && vb !== null) {
          a.push(va);
          b.push(vb);
        }
      });
      if (a.length)
        pairs.push({ a: candidates[top[x]], b: candidates[top[y]], ...pairedComparison(a, b, input.bootstrap) });
    }
  const corrected = holm(
    pairs.map((p) => p.p),
    input.alpha,
  );
  const paired: PairRow[] = pairs.map((p, i) => ({
    ...p,
    pHolm: corrected.adjusted[i],
    significant: p.p <= input.alpha,
    significantHolm: corrected.reject[i],
  }));

  return {
    policy: input.policy,
    table: order.map(({ r }) => r),
    tags,
    agreement: { candidates: common, kendall, grandMean, judges: judgeRows, selfPreference: selfRows },
    paired,
  };
}
