/**
 * The numbers of each Safe-Psych evaluation script, quirks included: the reference repository
 * `orianapresacan/SAFE-Psych` (MIT), its `evaluations/` folder at commit `b463400`. One file per script it
 * reproduces — their own case filters, file globs, model names taken from folder names, action precedence, code
 * fallback X, F40-F49 (accuracy) vs F40-F48 (seeds), the seed script's definition of abstained, pooled seeds, and a
 * crash wherever the script would raise. Percentages are rounded with Python's `round(…, 2)`.
 *
 * Python semantics reproduced (python-semantics.ts): `str()` of JSON values, `strip()`, truthiness, `dict.get`
 * defaults (a key present with null is null), `==` between JSON numbers and booleans, `isinstance(x, int)` accepting
 * booleans, sorting by `step_index` with 999 for a missing one, `str.splitlines()` for .jsonl files in the abstention
 * script and plain line iteration elsewhere. Not reproduced: JSON `1.0` (read as the integer 1 here), `NaN`/`Infinity`
 * literals, and the hard-coded model lists some figure scripts filter on (every model is kept).
 */
export { clarificationScript } from "./clarification-seeking";
export { accuracyScript } from "./diagnosis-accuracy";
export { seedScript } from "./multiple-seed-runs";
export { prematureScript } from "./premature-diagnoses";
export { pct, pyRound2, pyStr } from "./python-semantics";
export { computeReferenceMetrics } from "./reference-metrics";
export { extractCodeX } from "./trajectory-fields";
