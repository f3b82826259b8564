/**
 * The model filter of the reference's accuracy figures (docs/safe-psych.md, "Figures 8, 9 and appendix figure 5"):
 * `evaluations/diagnosis_accuracy/figure8.py`, `figure9.py` and `appendixfigure5.py` each keep only the models of
 * their hard-coded MODEL_NAME_MAP (`df[df["model"].isin(MODEL_NAME_MAP.keys())]`) before they pool or plot, so a run
 * of any other model key never reaches those figures. `metrics --compat reference` applies the same filter and
 * reports which models it dropped.
 */

type Row = Record<string, unknown>;

/** figure9.py's and appendixfigure5.py's MODEL_NAME_MAP keys. */
export const FIGURE9_MODELS: readonly string[] = [
  "gemma-3-27b",
  "gemma-3-4b",
  "claude-opus-4.6",
  "gpt-5.4",
  "gemini-2.5-flash-no-thinking",
  "gemini-2.5-flash-thinking",
  "med42-8b",
  "medgemma-27b",
  "mistral-small-3.1-24B",
  "qwen_3-32b",
];

/** figure8.py's MODEL_NAME_MAP keys: figure 9's without gemini-2.5-flash-thinking. */
export const FIGURE8_MODELS: readonly string[] = FIGURE9_MODELS.filter((m) => m !== "gemini-2.5-flash-thinking");

/** Figure 8's strategies, in its bar order (STRATEGY_LABELS). */
const FIGURE8_STRATEGIES = [
  "full_info_no_abstention",
  "full_info_abstention_aware",
  "sequential_info_neutral_prompting",
  "sequential_info_abstention_aware",
] as const;

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export interface ModelFilter {
  /** The models of the per-sample rows that the figure keeps, sorted. */
  kept: string[];
  /** The models it drops (not in its name map), sorted. */
  dropped: string[];
}

/** The rows whose model is in `models`, and which models were kept and dropped. */
export function keepNamedModels<R extends Row>(
  rows: readonly R[],
  models: readonly string[],
): { rows: R[]; filter: ModelFilter } {
  const named = new Set(models);
  const seen = [...new Set(rows.map((r) => String(r.model)))].sort(byText);
  return {
    rows: rows.filter((r) => named.has(String(r.model))),
    filter: { kept: seen.filter((m) => named.has(m)), dropped: seen.filter((m) => !named.has(m)) },
  };
}

export interface Figure8Row {
  model: string;
  /** 100 · correct 3-character codes / diagnosed cases, per strategy; null when the model has no row for it. */
  accuracy_3char_pct: Record<(typeof FIGURE8_STRATEGIES)[number], number | null>;
}

/**
 * figure8.py's table: 3-character accuracy per model and strategy over the per-sample rows of the named models,
 * models without a full_info_no_abstention value dropped (`pivot.dropna`), sorted by that value, highest first
 * (ties in model-name order, the pivot's index order).
 */
export function figure8Table(perSample: readonly Row[]): { rows: Figure8Row[]; filter: ModelFilter } {
  const { rows, filter } = keepNamedModels(
    perSample.filter((r) => (FIGURE8_STRATEGIES as readonly unknown[]).includes(r.strategy)),
    FIGURE8_MODELS,
  );
  const cells = new Map<string, { total: number; correct: number }>();
  for (const r of rows) {
    const key = JSON.stringify([r.model, r.strategy]);
    const c = cells.get(key) ?? { total: 0, correct: 0 };
    c.total++;
    c.correct += Number(r.match_3char);
    cells.set(key, c);
  }
  const models = [...new Set(rows.map((r) => String(r.model)))].sort(byText);
  const table = models.map((model) => ({
    model,
    accuracy_3char_pct: Object.fromEntries(
      FIGURE8_STRATEGIES.map((s) => {
        const c = cells.get(JSON.stringify([model, s]));
        return [s, c ? (100 * c.correct) / c.total : null];
      }),
    ) as Figure8Row["accuracy_3char_pct"],
  }));
  const plotted = table
    .filter((r) => r.accuracy_3char_pct.full_info_no_abstention !== null)
    .sort((a, b) => b.accuracy_3char_pct.full_info_no_abstention! - a.accuracy_3char_pct.full_info_no_abstention!);
  return { rows: plotted, filter };
}

export interface AgreementFractions {
  total: number;
  diagnosis: number;
  category: number;
  group: number;
}

/**
 * figure9.py's bars: full_info_no_abstention rows of the named models, by doctor agreement, the share of
 * diagnosis-level, 3-character and high-level matches (0 for an empty group, as the script's `if len(sub) else 0`).
 */
export function figure9Table(perSample: readonly Row[]): {
  bars: Record<"agreement" | "disagreement", AgreementFractions>;
  filter: ModelFilter;
} {
  const { rows, filter } = keepNamedModels(
    perSample.filter((r) => r.strategy === "full_info_no_abstention"),
    FIGURE9_MODELS,
  );
  const fractions = (sub: readonly Row[]): AgreementFractions => {
    const share = (key: string) => (sub.length ? sub.reduce((n, r) => n + Number(r[key]), 0) / sub.length : 0);
    return {
      total: sub.length,
      diagnosis: share("match_diagnosis_level"),
      category: share("match_3char"),
      group: share("match_high_class"),
    };
  };
  return {
    bars: {
      agreement: fractions(rows.filter((r) => r.doctor_agreement === "agreement")),
      disagreement: fractions(rows.filter((r) => r.doctor_agreement === "disagreement")),
    },
    filter,
  };
}

/** appendixfigure5.py's MIN_CASES: a category needs at least this many diagnosed cases to be plotted. */
export const APPENDIX_FIGURE5_MIN_CASES = 5;
/** appendixfigure5.py plots the `head(6)` and the `tail(6)` of its sorted table. */
const APPENDIX_FIGURE5_EACH_END = 6;

export interface CategoryAccuracy {
  gt_3char: string;
  total_cases: number;
  correct_3char: number;
  /** 100 · correct_3char / total_cases, as the script's `accuracy_3char_pct`. */
  accuracy_3char_pct: number;
}

export interface AppendixFigure5 {
  /** The bars in the script's plot order: the 6 best, then the 6 worst not already among them. */
  plotted: (CategoryAccuracy & { section: "Top 6" | "Bottom 6" })[];
  /** The categories the plot leaves out, with their counts, best first. */
  dropped: (CategoryAccuracy & { reason: "fewer than 5 cases" | "between the 6 best and the 6 worst" })[];
}

/**
 * appendixfigure5.py's selection (docs/safe-psych.md, "Figures 8, 9 and appendix figure 5"), from the per-category
 * counts of the named models' full_info_no_abstention rows with a category (in category-code order, the groupby's):
 * categories with at least MIN_CASES cases, sorted by 3-character accuracy, highest first (`sort_values(ascending=
 * False)`; ties keep category-code order), then `head(6)` labelled "Top 6" and `tail(6)` labelled "Bottom 6",
 * concatenated and de-duplicated on the category keeping the first (so with 12 categories or fewer a category is
 * never listed twice and the overlap is "Top 6").
 *
 * @example appendixFigure5Selection([{ gt_3char: "F32", total_cases: 4, correct_3char: 4 }]).dropped[0].reason
 *   // "fewer than 5 cases"
 */
export function appendixFigure5Selection(
  categories: readonly { gt_3char: string; total_cases: number; correct_3char: number }[],
): AppendixFigure5 {
  const rows: CategoryAccuracy[] = [...categories]
    .sort((a, b) => byText(a.gt_3char, b.gt_3char))
    .map((c) => ({ ...c, accuracy_3char_pct: (100 * c.correct_3char) / c.total_cases }));
  const descending = (a: CategoryAccuracy, b: CategoryAccuracy) => b.accuracy_3char_pct - a.accuracy_3char_pct;
  const enough = rows.filter((r) => r.total_cases >= APPENDIX_FIGURE5_MIN_CASES).sort(descending);
  const top = enough.slice(0, APPENDIX_FIGURE5_EACH_END).map((r) => ({ ...r, section: "Top 6" as const }));
  const bottom = enough.slice(-APPENDIX_FIGURE5_EACH_END).map((r) => ({ ...r, section: "Bottom 6" as const }));
  const plotted: AppendixFigure5["plotted"] = [];
  for (const r of [...top, ...bottom]) if (!plotted.some((p) => p.gt_3char === r.gt_3char)) plotted.push(r);
  const shown = new Set(plotted.map((p) => p.gt_3char));
  const dropped: AppendixFigure5["dropped"] = rows
    .filter((r) => !shown.has(r.gt_3char))
    .sort(descending)
    .map((r) => ({
      ...r,
      reason:
        r.total_cases < APPENDIX_FIGURE5_MIN_CASES
          ? ("fewer than 5 cases" as const)
          : ("between the 6 best and the 6 worst" as const),
    }));
  return { plotted, dropped };
}

/**
 * appendixfigure5.py from the per-sample rows: the named models' full_info_no_abstention rows with a category,
 * counted per category (`groupby("gt_3char")`: cases, correct 3-character codes), then its plot selection.
 */
export function appendixFigure5Table(perSample: readonly Row[]): AppendixFigure5 & { filter: ModelFilter } {
  const { rows, filter } = keepNamedModels(
    perSample.filter((r) => r.strategy === "full_info_no_abstention"),
    FIGURE9_MODELS,
  );
  const counts = new Map<string, { total: number; correct: number }>();
  for (const r of rows) {
    if (r.gt_3char === null || r.gt_3char === undefined) continue;
    const c = counts.get(String(r.gt_3char)) ?? { total: 0, correct: 0 };
    c.total++;
    c.correct += Number(r.match_3char);
    counts.set(String(r.gt_3char), c);
  }
  return {
    ...appendixFigure5Selection(
      [...counts].map(([gt_3char, c]) => ({ gt_3char, total_cases: c.total, correct_3char: c.correct })),
    ),
    filter,
  };
}
