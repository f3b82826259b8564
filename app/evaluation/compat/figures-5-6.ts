/** Emulation of the reference's `evaluations/premature_diagnoses/figures_5_6.py`. */
import { REFERENCE_NAMES } from "../../labels/labels";
import { pyStrip } from "../../python-compat/text";
import { STAGES } from "../domain/metrics";
import { type Dict, get, guard, type Py, pyIntOfFloat, pyStr, ScriptCrash } from "./python-semantics";

/** figures_5_6.py: Fig. 6 cumulative curves (pooled over models) and Fig. 5's timing shares, from the per-sample rows. */
export function figures56(gtItems: Py[], perSample: readonly Dict[]) {
  return guard(() => {
    const cumulative: Record<string, number[]> = {};
    const breakdown: Record<string, Record<string, number>> = {};
    for (const strategy of ["neutral", "abstention_aware"]) {
      const rows = perSample.filter((r) => r.strategy === strategy);
      cumulative[strategy] = STAGES.map((s) =>
        rows.length
          ? rows.filter((r) => r.model_first_diagnosis_step !== null && (r.model_first_diagnosis_step as number) <= s)
              .length / rows.length
          : 0,
      );
      breakdown[strategy] = Object.fromEntries(
        ["premature", "on_time", "late", "never"].map((c) => [
          c,
          rows.length ? rows.filter((r) => r.timing_category === c).length / rows.length : 0,
        ]),
      );
    }
    const clean = (v: Py) => (v === null || v === undefined ? "" : pyStrip(pyStr(v)));
    const expertSteps: number[] = [];
    for (const it of gtItems) {
      const id = clean(get(it, "id"));
      const sufficiency = clean(get(it, REFERENCE_NAMES.sufficiency));
      const earliest = clean(get(it, REFERENCE_NAMES.earliestSection));
      const totalText = clean(get(it, "num_sections_in_input"));
      if (!id || !totalText) continue;
      const total = pyIntOfFloat(totalText);
      if (total === null) throw new ScriptCrash(`ValueError: could not convert string to float: '${totalText}'`);
      let step: number;
      if (sufficiency === "1") {
        if (earliest === "") continue;
        const e = pyIntOfFloat(earliest);
        if (e === null) throw new ScriptCrash(`ValueError: could not convert string to float: '${earliest}'`);
        step = e;
      } else if (sufficiency === "0") step = total;
      else continue;
      // Fig. 6 quirk (docs/evaluation.md#timing-script): a case sufficient only at its last section counts at stage 5, whatever its T.
      expertSteps.push(step === total ? 5 : step);
    }
    cumulative.expert = STAGES.map((s) =>
      expertSteps.length ? expertSteps.filter((e) => e <= s).length / expertSteps.length : 0,
    );
    return { stages: [...STAGES], cumulative, timing_breakdown: breakdown };
  });
}
