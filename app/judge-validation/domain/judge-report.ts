/**
 * The judge-validation report (docs/judge-validation.md#consensus-and-the-report): the human majority per response, human
 * consistency, and each candidate judge scored against the majority. One implementation, shared by
 * `npm run concord -- judge-report` and the admin page (which feeds the app's own labels into it).
 *
 * Input: long-format labels `{response_id, rater, primary_answer, info_request[, action]}`. A rater named
 * `judge:NAME` is candidate judge NAME; every other rater is a human. A human's action always follows from their
 * features by the action rule (docs/judge-validation.md#response-features-and-the-action-rule) without the last-section re-mapping (raterAction); a judge's action is its `action`
 * when given (the reference compares the judge's own action), else the same rule.
 */
import { classificationReport, majorityVote, type ClassificationReport, type MajorityOutcome } from "./classification";
import { formatCsv } from "../../formats/csv-text";
import {
  actionFromFeatures,
  raterAction,
  type Action,
  type InfoRequest,
  type PrimaryAnswer,
} from "../../evaluation/public";
import { buildRatingTable, fleissKappa, type RatingRow } from "../../stats/index";
import { maxOf } from "../../stats/extremes";

export const JUDGE_PREFIX = "judge:";
export const TASKS = ["action", "primary_answer", "info_request"] as const;
export type Task = (typeof TASKS)[number];

export interface JudgeLabel {
  responseId: string;
  rater: string;
  primaryAnswer: PrimaryAnswer | null;
  infoRequest: InfoRequest | null;
  /** A judge's own action; blank for humans (derived). */
  action?: Action | null;
}

export const LABEL_COLUMNS = ["response_id", "rater", "primary_answer", "info_request"] as const;

/** The labels as a CSV the command reads back (`judge-report --labels`), with the judges' own `action`. */
export function judgeLabelsCsv(labels: readonly JudgeLabel[]): string {
  // Also opened in spreadsheets: formula-like cells are neutralised, and parseJudgeLabelsCsv undoes it (docs/security.md).
  return formatCsv([
    [...LABEL_COLUMNS, "action"],
    ...labels.map((l) => [l.responseId, l.rater, l.primaryAnswer ?? "", l.infoRequest ?? "", l.action ?? ""]),
  ]);
}

export interface TaskScores {
  /** Responses where both the consensus and the judge have a label. */
  n: number;
  accuracy: number | null;
  balanced_accuracy: number | null;
  macro_f1: number | null;
  weighted_f1: number | null;
  cohen_kappa: number | null;
  /** Fleiss' κ of two raters, the consensus and the judge, over the same n responses. */
  fleiss_kappa_consensus_judge: number | null;
  /** Fleiss' κ of the humans and the judge over the responses where all of them have a label (docs/judge-validation.md#consensus-and-the-report). */
  fleiss_kappa_humans_plus_judge: number | null;
  n_fleiss: number;
}

export interface JudgeScores {
  /** Action macro-F1 against the human majority, over the responses with a majority. */
  macro_f1: number | null;
  /** Fleiss' κ of the humans with the judge as one more rater, action, over the responses with a majority. */
  fleiss_kappa_with_judge: number | null;
  /** Responses with a majority action that the judge labelled. */
  n: number;
  precision: Record<string, number>;
  recall: Record<string, number>;
  confusion: Record<string, Record<string, number>>;
  tasks: Record<Task, TaskScores>;
}

export interface JudgeReport {
  n_responses: number;
  /** Response → human majority action, null without one (a tie, or fewer than two human actions). */
  majority: Record<string, Action | null>;
  /** Responses whose human actions split with no label reaching two votes (the 1-1-1 split). */
  ties: string[];
  /** Responses with fewer than two human actions. */
  too_few_votes: string[];
  humans: Record<string, { macro_f1: number | null; n: number }>;
  human_macro_f1_mean: number | null;
  human_fleiss_kappa: number | null;
  /** Responses that entered human_fleiss_kappa: every human rater of the response gave an action. */
  human_fleiss_n: number;
  judges: Record<string, JudgeScores>;
  best_judge: string | null;
  warnings: string[];
}

type Labels = Record<Task, string | null>;

function labelsOf(l: JudgeLabel, judge: boolean): Labels {
  const action = judge
    ? (l.action ?? (l.primaryAnswer && l.infoRequest ? actionFromFeatures(l) : null))
    : raterAction(l.primaryAnswer, l.infoRequest);
  return { action, primary_answer: l.primaryAnswer, info_request: l.infoRequest };
}

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Fleiss' κ (stats module, Fleiss 1971 when every item has all raters) over complete items; null when undefined. */
function fleiss(rows: RatingRow[]): number | null {
  if (rows.length === 0) return null;
  return fleissKappa(buildRatingTable(rows)).value;
}

/**
 * The report. Consensus per task (docs/judge-validation.md#consensus-and-the-report): the label with at least 2 human votes and more than any other
 * (majorityVote); a 1-1-1 split has none, is listed in `ties` (action) and is left out of every score against the
 * majority. Fleiss' κ uses the responses on which every human rater of the file's largest panel gave a label (the
 * reference's "items with all 4 labels": three humans and the judge).
 *
 * Worked example (test/unit/judge-report.test.ts): three humans, one judge, five responses.
 */
export function buildJudgeReport(input: readonly JudgeLabel[]): JudgeReport {
  const warnings: string[] = [];
  const responses: string[] = [];
  const humanLabels = new Map<string, Map<string, Labels>>();
  const judgeLabels = new Map<string, Map<string, Labels>>();
  for (const l of input) {
    if (!humanLabels.has(l.responseId)) {
      responses.push(l.responseId);
      humanLabels.set(l.responseId, new Map());
    }
    const judge = l.rater.startsWith(JUDGE_PREFIX);
    if (judge) {
      const name = l.rater.slice(JUDGE_PREFIX.length).trim();
      if (!judgeLabels.has(name)) judgeLabels.set(name, new Map());
      judgeLabels.get(name)!.set(l.responseId, labelsOf(l, true));
    } else {
      humanLabels.get(l.responseId)!.set(l.rater, labelsOf(l, false));
    }
  }
  const humanNames = [...new Set(input.filter((l) => !l.rater.startsWith(JUDGE_PREFIX)).map((l) => l.rater))].sort(
    byName,
  );
  const judgeNames = [...judgeLabels.keys()].sort(byName);
  const panel = Math.max(0, maxOf(responses.map((r) => humanLabels.get(r)!.size)));
  const uneven = responses.filter((r) => humanLabels.get(r)!.size !== panel);
  if (uneven.length)
    warnings.push(
      `${uneven.length} response${uneven.length === 1 ? " has" : "s have"} fewer than ${panel} human raters ` +
        `(e.g. ${uneven[0]}): left out of Fleiss' kappa`,
    );

  const consensus: Record<Task, Map<string, MajorityOutcome<string>>> = {
    action: new Map(),
    primary_answer: new Map(),
    info_request: new Map(),
  };
  for (const r of responses) {
    const votes = [...humanLabels.get(r)!.values()];
    for (const task of TASKS) consensus[task].set(r, majorityVote(votes.map((v) => v[task])));
  }
  const majority: Record<string, Action | null> = {};
  const ties: string[] = [];
  const tooFew: string[] = [];
  for (const r of responses) {
    const outcome = consensus.action.get(r)!;
    majority[r] = outcome.label as Action | null;
    if (outcome.status === "tie") ties.push(r);
    if (outcome.status === "too_few_votes") tooFew.push(r);
  }
  const withMajority = responses.filter((r) => majority[r] !== null);

  const humans: JudgeReport["humans"] = {};
  for (const name of humanNames) {
    const rs = withMajority.filter((r) => humanLabels.get(r)!.get(name)?.action != null);
    const report = classificationReport(
      rs.map((r) => majority[r]),
      rs.map((r) => humanLabels.get(r)!.get(name)!.action),
    );
    humans[name] = { macro_f1: report.macroF1, n: report.n };
  }
  const humanF1s = Object.values(humans)
    .map((h) => h.macro_f1)
    .filter((v): v is number => v !== null);

  /** Human rows of the responses where all `panel` humans labelled `task` (and `also` holds). */
  const completeHumanRows = (task: Task, among: readonly string[], also: (r: string) => boolean = () => true) => {
    const items = among.filter((r) => {
      const ls = [...humanLabels.get(r)!.values()];
      return panel >= 2 && ls.length === panel && ls.every((l) => l[task] !== null) && also(r);
    });
    const rows: RatingRow[] = items.flatMap((r) =>
      [...humanLabels.get(r)!.entries()].map(([rater, l]) => ({ item: r, rater, label: l[task]! })),
    );
    return { items, rows };
  };
  const humanComplete = completeHumanRows("action", responses);

  const judges: Record<string, JudgeScores> = {};
  for (const name of judgeNames) {
    const mine = judgeLabels.get(name)!;
    const judgeRater = JUDGE_PREFIX + name;
    const tasks = {} as Record<Task, TaskScores>;
    let actionReport: ClassificationReport | null = null;
    for (const task of TASKS) {
      const truth = responses.map((r) => consensus[task].get(r)!.label);
      const predicted = responses.map((r) => mine.get(r)?.[task] ?? null);
      const report = classificationReport(truth, predicted);
      if (task === "action") actionReport = report;
      const pairs = responses.filter((_, i) => truth[i] !== null && predicted[i] !== null);
      const pairRows = pairs.flatMap((r) => [
        { item: r, rater: "consensus", label: consensus[task].get(r)!.label! },
        { item: r, rater: judgeRater, label: mine.get(r)![task]! },
      ]);
      const complete = completeHumanRows(task, responses, (r) => mine.get(r)?.[task] != null);
      tasks[task] = {
        n: report.n,
        accuracy: report.accuracy,
        balanced_accuracy: report.balancedAccuracy,
        macro_f1: report.macroF1,
        weighted_f1: report.weightedF1,
        cohen_kappa: report.cohenKappa,
        fleiss_kappa_consensus_judge: fleiss(pairRows),
        fleiss_kappa_humans_plus_judge: fleiss([
          ...complete.rows,
          ...complete.items.map((r) => ({ item: r, rater: judgeRater, label: mine.get(r)![task]! })),
        ]),
        n_fleiss: complete.items.length,
      };
    }
    const withJudge = completeHumanRows("action", withMajority, (r) => mine.get(r)?.action != null);
    judges[name] = {
      macro_f1: actionReport!.macroF1,
      fleiss_kappa_with_judge: fleiss([
        ...withJudge.rows,
        ...withJudge.items.map((r) => ({ item: r, rater: judgeRater, label: mine.get(r)!.action! })),
      ]),
      n: actionReport!.n,
      precision: Object.fromEntries(Object.entries(actionReport!.perLabel).map(([l, s]) => [l, s.precision])),
      recall: Object.fromEntries(Object.entries(actionReport!.perLabel).map(([l, s]) => [l, s.recall])),
      confusion: actionReport!.confusion,
      tasks,
    };
  }
  let best: string | null = null;
  for (const name of judgeNames) {
    const f1 = judges[name].macro_f1;
    if (f1 !== null && (best === null || f1 > judges[best].macro_f1!)) best = name;
  }

  return {
    n_responses: responses.length,
    majority,
    ties,
    too_few_votes: tooFew,
    humans,
    human_macro_f1_mean: humanF1s.length ? humanF1s.reduce((a, b) => a + b, 0) / humanF1s.length : null,
    human_fleiss_kappa: fleiss(humanComplete.rows),
    human_fleiss_n: humanComplete.items.length,
    judges,
    best_judge: best,
    warnings,
  };
}
