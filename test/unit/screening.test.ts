import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as schema from "../../db/schema-screening";
import {
  checkRule,
  checkVote,
  drawRound,
  exceedsThreshold,
  modalCategory,
  nextStep,
  NO_CATEGORY_MAJORITY,
  RECALL_TIERS,
  REVIEW_CONFIDENCES,
  roundPool,
  SCREEN_LABELS,
  summariseRound,
  tallyItem,
  type PoolItem,
  type RecallTier,
  type ReviewVote,
  type ScreenLabel,
} from "~/screening/domain/screening";
import { compareCodePoints } from "~/python-compat/text";

const RULE = { inclusionVotes: 2, controlThreshold: 0.05 };

describe("the schema and the core agree on the vocabularies", () => {
  it("uses the same labels, tiers and confidences", () => {
    expect([...schema.SCREEN_LABELS]).toEqual([...SCREEN_LABELS]);
    expect([...schema.RECALL_TIERS]).toEqual([...RECALL_TIERS]);
    expect([...schema.REVIEW_CONFIDENCES]).toEqual([...REVIEW_CONFIDENCES]);
  });
});

describe("drawRound: one seeded order shared by every reviewer", () => {
  // expected-orders.json was produced by CPython 3.11 running test/fixtures/screening/generate.py, which implements
  // the algorithm documented on drawRound with the standard library's random.Random.
  const fixture = JSON.parse(
    readFileSync(new URL("../fixtures/screening/expected-orders.json", import.meta.url), "utf8"),
  ) as {
    python_version: string;
    cases: { candidates: string[]; pool: string[]; controls: number; seed: number; order: string[] }[];
  };

  it("was checked against CPython 3.11", () => expect(fixture.python_version).toMatch(/^3\.11\./));

  for (const c of fixture.cases) {
    it(`replays Python's order for seed ${c.seed} (${c.candidates.length} candidates, ${c.controls} of ${c.pool.length} controls)`, () => {
      const result = drawRound({
        candidates: c.candidates.map((id) => ({ id, stratum: "relevant" })),
        controlPool: c.pool.map((id) => ({ id, stratum: "not_relevant" })),
        controls: c.controls,
        seed: c.seed,
      });
      expect(result.ok).toBe(true);
      if (!result.ok) return;
      expect(result.order.map((e) => e.id)).toEqual(c.order);
      expect(result.order.map((e) => e.position)).toEqual(c.order.map((_, i) => i + 1));
      const pool = new Set(c.pool);
      for (const e of result.order) expect(e.isControl).toBe(pool.has(e.id));
      expect(result.order.filter((e) => e.isControl)).toHaveLength(c.controls);
    });
  }

  it("does not depend on the order the candidates and the pool are given in", () => {
    const c = fixture.cases[1]!;
    const a = drawRound({
      candidates: c.candidates.map((id) => ({ id, stratum: "relevant" })),
      controlPool: c.pool.map((id) => ({ id, stratum: "not_relevant" })),
      controls: c.controls,
      seed: c.seed,
    });
    const b = drawRound({
      candidates: [...c.candidates].reverse().map((id) => ({ id, stratum: "relevant" })),
      controlPool: [...c.pool].reverse().map((id) => ({ id, stratum: "not_relevant" })),
      controls: c.controls,
      seed: c.seed,
    });
    expect(a).toEqual(b);
  });

  it("refuses a round without controls, without candidates, or with more controls than the pool holds", () => {
    const candidates = [{ id: "a", stratum: "relevant" as const }];
    const controlPool = [{ id: "x", stratum: "not_relevant" as const }];
    expect(drawRound({ candidates, controlPool, controls: 0, seed: 1 })).toMatchObject({
      ok: false,
      error: /at least one concealed control/,
    });
    expect(drawRound({ candidates: [], controlPool, controls: 1, seed: 1 })).toMatchObject({
      ok: false,
      error: /no candidate/,
    });
    expect(drawRound({ candidates, controlPool, controls: 2, seed: 1 })).toMatchObject({
      ok: false,
      error: /only 1 items can serve/,
    });
    expect(drawRound({ candidates, controlPool, controls: 1, seed: -1 })).toMatchObject({ ok: false, error: /seed/ });
  });

  it("sorts ids by code point, as Python does", () => {
    // "🙂" (U+1F642) sorts after "ä" (U+00E4) by code point, though its first UTF-16 unit (0xD83D) sorts before "ﬀ".
    expect(["🙂", "ﬀ", "ä", "a", "B"].sort(compareCodePoints)).toEqual(["B", "a", "ä", "ﬀ", "🙂"]);
  });
});

describe("roundPool", () => {
  const items: PoolItem[] = [
    { id: "r", screenLabel: "relevant", used: false, tier: null },
    { id: "b", screenLabel: "borderline", used: false, tier: null },
    { id: "n", screenLabel: "not_relevant", used: false, tier: null },
    { id: "u", screenLabel: null, used: false, tier: null },
  ];

  it("round 1: relevant and borderline are candidates, not_relevant items are the control pool", () => {
    expect(roundPool(1, items)).toEqual({
      candidates: [
        { id: "r", stratum: "relevant" },
        { id: "b", stratum: "borderline" },
      ],
      controlPool: [{ id: "n", stratum: "not_relevant" }],
      unscreened: ["u"],
    });
  });

  it("a recall round: only unused items; clear and possible are candidates, `no` items the fresh controls", () => {
    const recall: PoolItem[] = [
      { id: "used-candidate", screenLabel: "relevant", used: true, tier: null },
      { id: "used-control", screenLabel: "not_relevant", used: true, tier: "clear" },
      { id: "c", screenLabel: "not_relevant", used: false, tier: "clear" },
      { id: "p", screenLabel: "not_relevant", used: false, tier: "possible" },
      { id: "no", screenLabel: "not_relevant", used: false, tier: "no" },
      { id: "untiered", screenLabel: "not_relevant", used: false, tier: null },
    ];
    expect(roundPool(2, recall)).toEqual({
      candidates: [
        { id: "c", stratum: "clear" },
        { id: "p", stratum: "possible" },
      ],
      controlPool: [{ id: "no", stratum: "no" }],
      unscreened: ["untiered"],
    });
  });
});

describe("inclusion by majority", () => {
  const v = (relevant: boolean, category: string | null = null) => ({ relevant, category });

  it("includes at 2 of 3 relevant votes and keeps the consensus tier", () => {
    expect(tallyItem([v(true, "anxiety"), v(true, "anxiety"), v(true, "sleep")], 2)).toEqual({
      yes: 3,
      no: 0,
      included: true,
      consensusTier: "unanimous",
      modalCategory: "anxiety",
    });
    expect(tallyItem([v(true, "anxiety"), v(true, "sleep"), v(false)], 2)).toEqual({
      yes: 2,
      no: 1,
      included: true,
      consensusTier: "majority",
      modalCategory: NO_CATEGORY_MAJORITY,
    });
    expect(tallyItem([v(true, "anxiety"), v(false), v(false)], 2)).toMatchObject({
      included: false,
      consensusTier: "majority",
    });
    expect(tallyItem([v(false), v(false), v(false)], 2)).toMatchObject({ included: false, consensusTier: "unanimous" });
  });

  it("honours a configured threshold (3 of 5)", () => {
    const two = [v(true), v(true), v(false), v(false), v(false)];
    const three = [v(true), v(true), v(true), v(false), v(false)];
    expect(tallyItem(two, 3).included).toBe(false);
    expect(tallyItem(three, 3).included).toBe(true);
  });

  it("modal category: one category chosen by the majority, else no majority", () => {
    expect(modalCategory(["sleep", "sleep", null], 2)).toBe("sleep");
    expect(modalCategory(["sleep", "anxiety", "ADHD"], 2)).toBe(NO_CATEGORY_MAJORITY);
    expect(modalCategory([null, null, null], 2)).toBe(NO_CATEGORY_MAJORITY);
    // 5 reviewers, 2 votes needed: a 2–2 tie has no single modal category.
    expect(modalCategory(["a", "a", "b", "b", null], 2)).toBe(NO_CATEGORY_MAJORITY);
    expect(modalCategory(["a", "a", "a", "b", "b"], 2)).toBe("a");
  });
});

describe("the control-inclusion rate against the threshold", () => {
  it("matches the paper's two rounds: 9/150 = 6.0% continues, 1/25 = 4.0% stops", () => {
    expect(exceedsThreshold(9, 150, 0.05)).toBe(true);
    expect(exceedsThreshold(1, 25, 0.05)).toBe(false);
  });

  it("a rate exactly at the threshold stops (1/20, 3/60, 0/10 at 5%), one more control continues", () => {
    expect(exceedsThreshold(1, 20, 0.05)).toBe(false);
    expect(exceedsThreshold(3, 60, 0.05)).toBe(false);
    expect(exceedsThreshold(0, 10, 0.05)).toBe(false);
    expect(exceedsThreshold(2, 20, 0.05)).toBe(true);
    expect(exceedsThreshold(4, 60, 0.05)).toBe(true);
    // 7 · 0.1 is 0.7000000000000001 in floating point: still "at" a 10% threshold for 7 of 70.
    expect(exceedsThreshold(7, 70, 0.1)).toBe(false);
  });
});

describe("summariseRound: statistics against hand-computed values", () => {
  // Four items, three reviewers A, B, C (yes = relevant):
  //        A    B    C
  //   i1   yes  yes  yes    (control: no)
  //   i2   yes  yes  no     (control: yes)
  //   i3   no   no   no     (control: yes)
  //   i4   yes  no   no     (control: no)
  const table: [string, boolean, boolean, boolean, boolean][] = [
    ["i1", false, true, true, true],
    ["i2", true, true, true, false],
    ["i3", true, false, false, false],
    ["i4", false, true, false, false],
  ];
  const categories: Record<string, (string | null)[]> = {
    i1: ["anxiety", "anxiety", "sleep"],
    i2: ["sleep", "anxiety", null],
    i3: [null, null, null],
    i4: ["ADHD", null, null],
  };
  const votes: ReviewVote[] = table.flatMap(([item, , ...yes]) =>
    ["A", "B", "C"].map((reviewer, k) => ({
      item,
      reviewer,
      relevant: yes[k]!,
      category: yes[k] ? categories[item]![k]! : null,
    })),
  );
  const figures = summariseRound({
    items: table.map(([id, isControl], i) => ({
      id,
      position: i + 1,
      isControl,
      stratum: isControl ? "not_relevant" : "relevant",
    })),
    reviewers: ["A", "B", "C"],
    votes,
    rule: RULE,
  });

  it("Gwet's AC1 on relevance across the three reviewers: 1/3, SE √(4/27), Student-t CI", () => {
    // Observed agreement per item Σ_k r_ik (r_ik − 1) / (r (r − 1)) with r = 3:
    //   i1 3·2/6 = 1; i2 (2·1 + 1·0)/6 = 1/3; i3 1; i4 1/3  →  p_a = (1 + 1/3 + 1 + 1/3) / 4 = 2/3.
    // Prevalence π_yes = mean of the items' yes shares = (1 + 2/3 + 0 + 1/3) / 4 = 1/2, π_no = 1/2.
    // Chance p_e = Σ_k π_k (1 − π_k) / (q − 1) = (1/4 + 1/4) / 1 = 1/2.  AC1 = (2/3 − 1/2) / (1 − 1/2) = 1/3.
    expect(figures.relevanceAc1.value).toBeCloseTo(1 / 3, 12);
    expect(figures.percentAgreement).toBeCloseTo(2 / 3, 12);
    // Variance (Gwet 2014 §5.3): v_i = (p_a,i − p_e)/(1 − p_e) − 2 (1 − AC1)(p_e,i − p_e)/(1 − p_e), where
    // p_e,i = Σ_k r_ik (1 − π_k) / (r (q − 1)) = 1/2 for every item (both π are 1/2), so the second term is 0 and
    // v_i = 2 p_a,i − 1 = 1, −1/3, 1, −1/3.  Var = Σ (v_i − 1/3)² / (n (n − 1)) = (4 · 4/9) / 12 = 4/27.
    expect(figures.relevanceAc1.se).toBeCloseTo(Math.sqrt(4 / 27), 12);
    // 95% CI: 1/3 ± t(0.975, df 3) · SE = 1/3 ± 3.182446305 · 0.384900179 = 1/3 ± 1.224941; upper bound capped at 1.
    expect(figures.relevanceAc1.ci95![0]).toBeCloseTo(1 / 3 - 3.182446305284263 * Math.sqrt(4 / 27), 9);
    expect(figures.relevanceAc1.ci95![1]).toBe(1);
  });

  it("pairwise AC1 shows the pair structure: A–B 9/17, A–C 0, B–C 9/17", () => {
    // A–B: A = y y n y, B = y y n n. p_a = 3/4. π_yes = (1 + 1 + 0 + 1/2)/4 = 5/8; p_e = 2 · 5/8 · 3/8 = 15/32.
    //   AC1 = (3/4 − 15/32) / (1 − 15/32) = (9/32) / (17/32) = 9/17.
    // A–C: A = y y n y, C = y n n n. p_a = 1/2. π_yes = (1 + 1/2 + 0 + 1/2)/4 = 1/2; p_e = 1/2. AC1 = 0.
    // B–C: B = y y n n, C = y n n n. p_a = 3/4. π_yes = (1 + 1/2 + 0 + 0)/4 = 3/8; p_e = 15/32. AC1 = 9/17.
    expect(figures.pairwise.map((p) => p.reviewers)).toEqual([
      ["A", "B"],
      ["A", "C"],
      ["B", "C"],
    ]);
    expect(figures.pairwise[0]!.ac1.value).toBeCloseTo(9 / 17, 12);
    expect(figures.pairwise[1]!.ac1.value).toBeCloseTo(0, 12);
    expect(figures.pairwise[2]!.ac1.value).toBeCloseTo(9 / 17, 12);
    expect(figures.pairwise.map((p) => p.nItems)).toEqual([4, 4, 4]);
    expect(figures.pairwise[0]!.percentAgreement).toBeCloseTo(3 / 4, 12);
  });

  it("inclusion, tiers, categories, the control-inclusion rate and the decision", () => {
    // Included (≥ 2 of 3): i1 (3 yes, unanimous), i2 (2 yes, majority). Excluded: i3 (unanimous), i4 (majority).
    expect(figures.perItem.map((i) => [i.id, i.yes, i.included, i.consensusTier, i.modalCategory])).toEqual([
      ["i1", 3, true, "unanimous", "anxiety"],
      ["i2", 2, true, "majority", NO_CATEGORY_MAJORITY],
      ["i3", 0, false, "unanimous", NO_CATEGORY_MAJORITY],
      ["i4", 1, false, "majority", NO_CATEGORY_MAJORITY],
    ]);
    // Controls i2 and i3: the majority included i2, so the rate is 1/2 = 50% > 5%: continue with a recall round.
    expect(figures).toMatchObject({
      items: 4,
      candidates: 2,
      controls: 2,
      included: 2,
      includedCandidates: 1,
      includedControls: 1,
      controlInclusionRate: 0.5,
      complete: true,
      votesIn: 12,
      votesExpected: 12,
      decision: "continue",
    });
    expect(figures.byStratum).toEqual([
      { stratum: "relevant", isControl: false, n: 2, included: 1 },
      { stratum: "not_relevant", isControl: true, n: 2, included: 1 },
    ]);
  });

  it("has no decision until every vote is in", () => {
    const partial = summariseRound({
      items: [{ id: "i1", position: 1, isControl: true, stratum: "no" }],
      reviewers: ["A", "B", "C"],
      votes: votes.filter((x) => x.item === "i1").slice(0, 2),
      rule: RULE,
    });
    expect(partial.complete).toBe(false);
    expect(partial.decision).toBeNull();
  });

  it("keeps AC1 defined when every vote is yes (both categories are counted)", () => {
    const allYes = summariseRound({
      items: [
        { id: "a", position: 1, isControl: false, stratum: "relevant" },
        { id: "b", position: 2, isControl: true, stratum: "not_relevant" },
      ],
      reviewers: ["A", "B"],
      votes: ["a", "b"].flatMap((item) =>
        ["A", "B"].map((reviewer) => ({ item, reviewer, relevant: true, category: "sleep" })),
      ),
      rule: RULE,
    });
    // p_a = 1, π_yes = 1, π_no = 0, p_e = (0 + 0)/1 = 0, AC1 = 1.
    expect(allYes.relevanceAc1.value).toBe(1);
    expect(allYes.decision).toBe("continue");
  });
});

/**
 * A synthetic corpus of 400 items: items 0–59 are truly about mental health. The screen labels 0–39 relevant,
 * 40–44 borderline (plus two false alarms, 100 and 101), and misses 45–59, which it labels not_relevant. Reviewers
 * R1 and R2 vote the truth; R3 is lenient and says yes to everything, which the majority rule absorbs.
 */
describe("the round logic on a synthetic corpus", () => {
  const N = 400;
  const truth = (i: number) => i < 60;
  const id = (i: number) => `item-${String(i).padStart(3, "0")}`;
  const index = (s: string) => Number(s.slice(5));
  const screen = (i: number): ScreenLabel =>
    i < 40 ? "relevant" : i < 45 || i === 100 || i === 101 ? "borderline" : "not_relevant";
  const reviewers = ["R1", "R2", "R3"];
  const vote = (ids: string[]): ReviewVote[] =>
    ids.flatMap((item) =>
      reviewers.map((reviewer) => {
        const relevant = reviewer === "R3" ? true : truth(index(item));
        return { item, reviewer, relevant, category: relevant ? "anxiety" : null };
      }),
    );

  function runRound(number: number, pool: ReturnType<typeof roundPool>, controls: number, seed: number) {
    const draw = drawRound({ candidates: pool.candidates, controlPool: pool.controlPool, controls, seed });
    if (!draw.ok) throw new Error(draw.error);
    const figures = summariseRound({
      items: draw.order,
      reviewers,
      votes: vote(draw.order.map((e) => e.id)),
      rule: RULE,
    });
    return { number, order: draw.order, figures };
  }

  const corpus: PoolItem[] = Array.from({ length: N }, (_, i) => ({
    id: id(i),
    screenLabel: screen(i),
    used: false,
    tier: null,
  }));
  const round1 = runRound(1, roundPool(1, corpus), 60, 2025);

  it("round 1 reviews every relevant and borderline item plus the requested controls from not_relevant", () => {
    expect(round1.figures.candidates).toBe(47);
    expect(round1.figures.controls).toBe(60);
    for (const e of round1.order) expect(e.isControl).toBe(screen(index(e.id)) === "not_relevant");
  });

  it("the majority includes exactly the truly relevant items, and the controls it includes are the screen's misses", () => {
    const missedControls = round1.order.filter((e) => e.isControl && truth(index(e.id))).length;
    expect(round1.figures.includedControls).toBe(missedControls);
    expect(round1.figures.includedCandidates).toBe(45);
    // With 15 misses among 355 not_relevant items, 60 controls hold some: the rate is above 5% and a recall round opens.
    expect(missedControls).toBeGreaterThan(3);
    expect(round1.figures.controlInclusionRate).toBeGreaterThan(0.05);
    expect(round1.figures.decision).toBe("continue");
    expect(
      nextStep({
        items: N,
        unlabelled: 0,
        rounds: [{ number: 1, status: "closed", decision: "continue" }],
        tiersForNextRound: 0,
      }),
    ).toEqual({
      kind: "import_tiers",
      round: 2,
    });
  });

  it("the recall round reviews clear and possible items among the unused ones with fresh controls, and ends the cycle", () => {
    const used = new Set(round1.order.map((e) => e.id));
    // The recall screen: every remaining miss is clear or possible, items 200–209 are possible (false alarms), the rest no.
    const tier = (i: number): RecallTier =>
      truth(i) ? (i % 2 ? "clear" : "possible") : i >= 200 && i < 210 ? "possible" : "no";
    const items = corpus.map((c) => ({ ...c, used: used.has(c.id), tier: used.has(c.id) ? null : tier(index(c.id)) }));
    const pool = roundPool(2, items);
    for (const c of [...pool.candidates, ...pool.controlPool]) expect(used.has(c.id)).toBe(false);
    const round2 = runRound(2, pool, 25, 7);
    expect(round2.figures.controls).toBe(25);
    expect(round2.figures.includedControls).toBe(0);
    expect(round2.figures.controlInclusionRate).toBe(0);
    expect(round2.figures.decision).toBe("stop");
    // Every truly relevant item is now included in round 1 or 2.
    const included = new Set(
      [...round1.figures.perItem, ...round2.figures.perItem].filter((i) => i.included).map((i) => index(i.id)),
    );
    expect([...included].sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    expect(
      nextStep({
        items: N,
        unlabelled: 0,
        rounds: [
          { number: 1, status: "closed", decision: "continue" },
          { number: 2, status: "closed", decision: "stop" },
        ],
        tiersForNextRound: 0,
      }),
    ).toEqual({ kind: "final", round: 2 });
  });

  it("a round whose rate is exactly the threshold ends the cycle (1 of 20 controls at 5%)", () => {
    const items = [
      ...Array.from({ length: 5 }, (_, i) => ({ id: `c${i}`, position: i + 1, isControl: false, stratum: "clear" })),
      ...Array.from({ length: 20 }, (_, i) => ({
        id: `k${String(i).padStart(2, "0")}`,
        position: i + 6,
        isControl: true,
        stratum: "no",
      })),
    ];
    const votes: ReviewVote[] = items.flatMap((item) =>
      reviewers.map((reviewer) => ({
        item: item.id,
        reviewer,
        relevant: !item.isControl || item.id === "k07",
        category: "sleep",
      })),
    );
    const f = summariseRound({ items, reviewers, votes, rule: RULE });
    expect(f.includedControls).toBe(1);
    expect(f.controlInclusionRate).toBe(0.05);
    expect(f.decision).toBe("stop");
  });
});

describe("nextStep", () => {
  const base = { items: 10, unlabelled: 0, rounds: [], tiersForNextRound: 0 };
  it("walks import → labels → round 1 → review → tiers → recall round → final", () => {
    expect(nextStep({ ...base, items: 0 })).toEqual({ kind: "import_items" });
    expect(nextStep({ ...base, unlabelled: 3 })).toEqual({ kind: "import_labels", unlabelled: 3 });
    expect(nextStep(base)).toEqual({ kind: "open_round", round: 1 });
    expect(nextStep({ ...base, rounds: [{ number: 1, status: "open", decision: null }] })).toEqual({
      kind: "in_review",
      round: 1,
    });
    const continued = [{ number: 1, status: "closed" as const, decision: "continue" as const }];
    expect(nextStep({ ...base, rounds: continued })).toEqual({ kind: "import_tiers", round: 2 });
    expect(nextStep({ ...base, rounds: continued, tiersForNextRound: 5 })).toEqual({ kind: "open_round", round: 2 });
    expect(nextStep({ ...base, rounds: [{ number: 1, status: "closed", decision: "stop" }] })).toEqual({
      kind: "final",
      round: 1,
    });
  });
});

describe("checkVote and checkRule", () => {
  const vocabulary = ["anxiety", "sleep"];
  it("requires relevance and confidence, and a vocabulary category for a relevant item", () => {
    expect(checkVote({ relevant: "", category: "", confidence: "", notes: "" }, vocabulary)).toEqual({
      relevant: "Choose yes or no.",
      confidence: "Choose how confident you are.",
    });
    expect(checkVote({ relevant: "yes", category: "", confidence: "low", notes: "" }, vocabulary)).toHaveProperty(
      "category",
    );
    expect(
      checkVote({ relevant: "yes", category: "psychosis", confidence: "low", notes: "" }, vocabulary).category,
    ).toMatch(/not in/);
    expect(checkVote({ relevant: "yes", category: "sleep", confidence: "high", notes: "" }, vocabulary)).toEqual({});
    expect(checkVote({ relevant: "no", category: "", confidence: "medium", notes: "" }, vocabulary)).toEqual({});
  });

  it("refuses an inclusion threshold above the number of reviewers and a threshold outside [0, 1)", () => {
    expect(checkRule({ reviewersPerRound: 3, inclusionVotes: 2, controlThreshold: 0.05 })).toEqual({});
    expect(checkRule({ reviewersPerRound: 3, inclusionVotes: 4, controlThreshold: 0.05 })).toHaveProperty(
      "inclusionVotes",
    );
    expect(checkRule({ reviewersPerRound: 1, inclusionVotes: 1, controlThreshold: 0.05 })).toHaveProperty(
      "reviewersPerRound",
    );
    expect(checkRule({ reviewersPerRound: 3, inclusionVotes: 2, controlThreshold: 1 })).toHaveProperty(
      "controlThreshold",
    );
  });
});
