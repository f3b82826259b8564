/**
 * The judge-validation report (app/judge-validation/domain/judge-report.ts, docs/judge-validation.md#consensus-and-the-report) on a small example worked out by hand below, and the
 * labels CSV reader (app/judge-validation/domain/judge-labels-csv.ts).
 */
import { describe, expect, it } from "vitest";
import { parseJudgeLabelsCsv } from "~/judge-validation/domain/judge-labels-csv";
import { buildJudgeReport, judgeLabelsCsv } from "~/judge-validation/domain/judge-report";

/*
 * Five responses, three humans (alice, bruno, carla), two judges (gemma, with its own action column; always-abstain,
 * whose action is derived from its features). Actions by the rule (no last-section re-mapping): committed + specific
 * → CLARIFY, committed otherwise → DIAGNOSE, differential/none + specific → CLARIFY, otherwise ABSTAIN.
 *
 *        alice                bruno                    carla                  gemma         always-abstain
 *   r1   committed/none   D   committed/none       D   committed/generic   D  committed/none D   none/none A
 *   r2   none/specific    C   differential/specific C  none/none           A  none/specific  C   none/none A
 *   r3   committed/none   D   none/specific        C   differential/none   A  committed/none D   none/none A
 *   r4   none/none        A   differential/generic A   committed/specific  C  none/specific  C   none/none A
 *   r5   committed/none   D   committed/specific   C   committed/none      D  committed/none D   none/none A
 *
 * Majority action (≥ 2 of 3): r1 D, r2 C, r3 — (1-1-1 tie), r4 A, r5 D.
 *
 * Humans' action macro-F1 against the majority over r1, r2, r4, r5 (truth D, C, A, D):
 *   alice  D C A D: all right                                    → 1
 *   bruno  D C A C: DIAGNOSE F1 2/3, CLARIFY F1 2/3, ABSTAIN 1    → 7/9
 *   carla  D A C D: DIAGNOSE 1, CLARIFY 0, ABSTAIN 0              → 1/3
 *   mean (1 + 7/9 + 1/3) / 3 = 19/27
 * Human Fleiss' κ (5 items × 3 raters): P_i = 1, 1/3, 0, 1/3, 1/3 → P̄ = 2/5; totals D 6, C 5, A 4 of 15 →
 *   P_e = (36 + 25 + 16)/225 = 77/225; κ = (90 − 77)/(225 − 77) = 13/148.
 *
 * gemma, action, over the 4 responses with a majority: predictions D C C D against D C A D.
 *   DIAGNOSE P 1 R 1 F1 1; CLARIFY P 1/2 R 1 F1 2/3; ABSTAIN P 0 R 0 F1 0 → macro-F1 5/9; accuracy 3/4;
 *   balanced accuracy (0 + 1 + 1)/3 = 2/3; weighted F1 (1·2 + 2/3·1 + 0·1)/4 = 2/3;
 *   Cohen's κ: p_o 3/4, p_e = .5·.5 + .25·.5 + .25·0 = .375 → (.75 − .375)/.625 = 0.6;
 *   Fleiss' κ consensus + judge: P̄ = 3/4; totals D 4, C 3, A 1 of 8 → P_e = 13/32 → (24 − 13)/(32 − 13) = 11/19;
 *   Fleiss' κ humans + judge (task, all 5 responses with 4 labels): P_i = 1, 1/2, 1/6, 1/3, 1/2 → P̄ = 1/2;
 *     totals D 9, C 7, A 4 of 20 → P_e = .365 → (.5 − .365)/.635 = 27/127;
 *   Fleiss' κ with judge (top level, the 4 responses with a majority): P_i = 1, 1/2, 1/3, 1/2 → P̄ = 7/12;
 *     totals D 7, C 6, A 3 of 16 → P_e = 47/128 → (7/12 − 47/128)/(81/128) = 83/243.
 * gemma, primary_answer: consensus r1 committed, r2 none, r3 and r4 tied, r5 committed; gemma agrees on all 3 → 1;
 *   humans + judge over 5 responses: P_i = 1, 1/2, 1/6, 1/6, 1 → P̄ = 17/30; totals committed 11, none 6,
 *   differential 3 of 20 → P_e = .415 → (17/30 − .415)/.585 = 7/27.
 * always-abstain, action: A A A A against D C A D: ABSTAIN P 1/4 R 1 F1 2/5, others 0 → macro-F1 2/15; Cohen's κ 0.
 * Best judge: gemma.
 */
const CSV = [
  "response_id,rater,primary_answer,info_request,action",
  "r1,alice,committed,none,",
  "r1,bruno,committed,none,",
  "r1,carla, Committed ,generic_only,",
  "r1,judge:gemma,committed,none,diagnose",
  "r1,judge:always-abstain,None,no,",
  "",
  "r2,alice,none,specific,",
  "r2,bruno,differential,specific,",
  "r2,carla,none,none,",
  "r2,judge:gemma,none,specific,CLARIFY",
  "r2,judge:always-abstain,none,none,",
  "r3,alice,committed, NONE ,",
  "r3,bruno,none,specific,",
  "r3,carla,differential,none,",
  "r3,judge:gemma,committed,none,Diagnose",
  "r3,judge:always-abstain,none,none,",
  "r4,alice,none,none,",
  "r4,bruno,differential,generic_only,",
  "r4,carla,committed,specific,",
  "r4,judge:gemma,none,specific,Clarify",
  "r4,judge:always-abstain,none,n/a,",
  "r5,alice,committed,none,",
  "r5,bruno,committed,specific,",
  "r5,carla,committed,none,",
  "r5,judge:gemma,committed,none,DIAGNOSE",
  "r5,judge:always-abstain,none,none,",
].join("\n");

const close = (expected: number) => expect.closeTo(expected, 12);

describe("buildJudgeReport on the hand-computed example", () => {
  const parsed = parseJudgeLabelsCsv(CSV);
  const report = buildJudgeReport(parsed.labels);

  it("reads the file", () => {
    expect(parsed.errors).toEqual([]);
    expect(parsed.labels).toHaveLength(25);
  });

  it("gives the majority action per response and reports the 1-1-1 split", () => {
    expect(report.majority).toEqual({ r1: "DIAGNOSE", r2: "CLARIFY", r3: null, r4: "ABSTAIN", r5: "DIAGNOSE" });
    expect(report.ties).toEqual(["r3"]);
    expect(report.too_few_votes).toEqual([]);
    expect(report.n_responses).toBe(5);
  });

  it("scores human consistency", () => {
    expect(report.humans).toEqual({
      alice: { macro_f1: 1, n: 4 },
      bruno: { macro_f1: close(7 / 9), n: 4 },
      carla: { macro_f1: close(1 / 3), n: 4 },
    });
    expect(report.human_macro_f1_mean).toEqual(close(19 / 27));
    expect(report.human_fleiss_kappa).toEqual(close(13 / 148));
    expect(report.human_fleiss_n).toBe(5);
  });

  it("scores gemma at the top level (action, responses with a majority)", () => {
    const g = report.judges.gemma;
    expect(g.macro_f1).toEqual(close(5 / 9));
    expect(g.fleiss_kappa_with_judge).toEqual(close(83 / 243));
    expect(g.n).toBe(4);
    expect(g.precision).toEqual({ ABSTAIN: 0, CLARIFY: 0.5, DIAGNOSE: 1 });
    expect(g.recall).toEqual({ ABSTAIN: 0, CLARIFY: 1, DIAGNOSE: 1 });
    expect(g.confusion).toEqual({
      ABSTAIN: { ABSTAIN: 0, CLARIFY: 1, DIAGNOSE: 0 },
      CLARIFY: { ABSTAIN: 0, CLARIFY: 1, DIAGNOSE: 0 },
      DIAGNOSE: { ABSTAIN: 0, CLARIFY: 0, DIAGNOSE: 2 },
    });
  });

  it("scores gemma per task as the reference's script", () => {
    const { action, primary_answer, info_request } = report.judges.gemma.tasks;
    expect(action).toEqual({
      n: 4,
      accuracy: 0.75,
      balanced_accuracy: close(2 / 3),
      macro_f1: close(5 / 9),
      weighted_f1: close(2 / 3),
      cohen_kappa: close(0.6),
      fleiss_kappa_consensus_judge: close(11 / 19),
      fleiss_kappa_humans_plus_judge: close(27 / 127),
      n_fleiss: 5,
    });
    expect(primary_answer).toMatchObject({ n: 3, accuracy: 1, macro_f1: 1, cohen_kappa: close(1), n_fleiss: 5 });
    expect(primary_answer.fleiss_kappa_consensus_judge).toEqual(close(1));
    expect(primary_answer.fleiss_kappa_humans_plus_judge).toEqual(close(7 / 27));
    // info_request consensus: r1 none, r2 specific, r3 none, r4 tied, r5 none; gemma agrees on those 4.
    expect(info_request).toMatchObject({ n: 4, accuracy: 1, macro_f1: 1 });
  });

  it("derives a judge's action from its features when the action column is blank, and picks the best judge", () => {
    const a = report.judges["always-abstain"];
    expect(a.macro_f1).toEqual(close(2 / 15));
    expect(a.tasks.action.accuracy).toBe(0.25);
    expect(a.tasks.action.cohen_kappa).toEqual(close(0));
    expect(a.precision.ABSTAIN).toBe(0.25);
    expect(report.best_judge).toBe("gemma");
  });

  it("is the same object whatever the row order", () => {
    const shuffled = [...parsed.labels].reverse();
    const again = buildJudgeReport(shuffled);
    // Sums run in another order: equal to the last bits.
    const rounded = (r: object) =>
      JSON.parse(JSON.stringify(r, (_, v) => (typeof v === "number" ? +v.toFixed(12) : v)));
    expect(rounded({ ...again, majority: null, ties: null })).toEqual(
      rounded({ ...report, majority: null, ties: null }),
    );
    expect(Object.entries(again.majority).sort()).toEqual(Object.entries(report.majority).sort());
  });

  it("round-trips through judgeLabelsCsv", () => {
    const back = parseJudgeLabelsCsv(judgeLabelsCsv(parsed.labels));
    expect(back.errors).toEqual([]);
    expect(buildJudgeReport(back.labels)).toEqual(report);
  });
});

describe("buildJudgeReport edge cases", () => {
  it("has no judges, no best judge and null scores without data", () => {
    const report = buildJudgeReport([]);
    expect(report).toMatchObject({
      n_responses: 0,
      majority: {},
      ties: [],
      humans: {},
      human_macro_f1_mean: null,
      human_fleiss_kappa: null,
      judges: {},
      best_judge: null,
    });
  });

  it("lists responses with fewer than two human actions, and warns about uneven panels", () => {
    const report = buildJudgeReport([
      { responseId: "a", rater: "h1", primaryAnswer: "committed", infoRequest: "none" },
      { responseId: "a", rater: "h2", primaryAnswer: "committed", infoRequest: "none" },
      { responseId: "b", rater: "h1", primaryAnswer: "committed", infoRequest: null },
    ]);
    expect(report.majority).toEqual({ a: "DIAGNOSE", b: null });
    expect(report.too_few_votes).toEqual(["b"]);
    expect(report.warnings[0]).toMatch(/fewer than 2 human raters/);
    // Only "a" has both raters' actions; all agree on one label: chance agreement 1, κ undefined.
    expect(report.human_fleiss_kappa).toBeNull();
  });
});

describe("parseJudgeLabelsCsv", () => {
  it("requires the four columns", () => {
    expect(parseJudgeLabelsCsv("response_id,rater,primary_answer\nr1,a,none\n").errors).toEqual([
      { line: 1, message: expect.stringMatching(/missing column info_request/) },
    ]);
    expect(parseJudgeLabelsCsv("").errors[0]!.message).toMatch(/empty/);
  });

  it("reports every bad row with its line and keeps nothing", () => {
    const { labels, errors } = parseJudgeLabelsCsv(
      [
        "rater,response_id,info_request,primary_answer",
        "a,r1,none,committed",
        "b,r1,none,maybe",
        ",r2,none,none",
        "judge:,r2,none,none",
        "a,r1,specific,none",
      ].join("\n"),
    );
    expect(labels).toEqual([]);
    expect(errors.map((e) => e.line)).toEqual([3, 4, 5, 6]);
    expect(errors[0]!.message).toMatch(/primary_answer "maybe" is not one of committed, differential, none/);
  });

  it("reports a CSV syntax error with its line", () => {
    const { labels, errors } = parseJudgeLabelsCsv(
      'response_id,rater,primary_answer,info_request\nr1,a,none,none\nr2,"b,none,none\n',
    );
    expect(labels).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toMatch(/not valid CSV/);
  });

  it("finds duplicates, an empty rater and a nameless judge", () => {
    const { errors } = parseJudgeLabelsCsv(
      [
        "response_id,rater,primary_answer,info_request",
        "r1,a,committed,none",
        "r2,,none,none",
        "r2,judge:,none,none",
        "r1,a,none,none",
        "r3,b,none,none,",
        "r4,c,none,none,,extra",
      ].join("\n"),
    );
    expect(errors).toEqual([
      { line: 3, message: "empty rater" },
      { line: 4, message: 'rater "judge:" names no judge: write judge:NAME' },
      { line: 5, message: "response r1 has a second row from a (first on line 2)" },
    ]);
  });

  it("normalises labels as the reference (docs/judge-validation.md#label-normalisation)", () => {
    const { labels, errors } = parseJudgeLabelsCsv(
      "response_id,rater,primary_answer,info_request,action\nr1,a, NaN ,Not Applicable,\nr1,judge:j,none/null,NA,abstain\n",
    );
    expect(errors).toEqual([]);
    expect(labels).toEqual([
      { responseId: "r1", rater: "a", primaryAnswer: null, infoRequest: "none", action: null },
      { responseId: "r1", rater: "judge:j", primaryAnswer: null, infoRequest: "none", action: "ABSTAIN" },
    ]);
  });

  it("refuses an unknown action", () => {
    const { errors } = parseJudgeLabelsCsv(
      "response_id,rater,primary_answer,info_request,action\nr1,judge:j,none,none,refuse\n",
    );
    expect(errors).toEqual([{ line: 2, message: 'action "refuse" is not one of DIAGNOSE, CLARIFY, ABSTAIN' }]);
  });
});
