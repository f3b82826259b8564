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
