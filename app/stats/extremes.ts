/**
 * The largest and smallest of many numbers, and appending many items, without spreading them into a call's
 * arguments (docs/reliability.md, "Memory bounded by the longest line"): `Math.max(...values)` and
 * `list.push(...items)` pass every element as an argument on the stack, and throw a RangeError ("Maximum call stack
 * size exceeded") past about 100,000 of them — 200,000 distinct responses in a labels file did. ESLint refuses the
 * spread forms in app/ (eslint.config.js), so data-sized lists go through these. Pure.
 */

/** The largest value, or `empty` when there is none (Math.max() of nothing is -Infinity). */
export function maxOf(values: Iterable<number>, empty = -Infinity): number {
  let max = -Infinity;
  let any = false;
  for (const v of values) {
    any = true;
    // Math.max's answer for NaN: NaN wins.
    if (v > max || Number.isNaN(v)) max = v;
    if (Number.isNaN(max)) return NaN;
  }
  return any ? max : empty;
}

/** The smallest value, or `empty` when there is none (Math.min() of nothing is Infinity). */
export function minOf(values: Iterable<number>, empty = Infinity): number {
  let min = Infinity;
  let any = false;
  for (const v of values) {
    any = true;
    if (v < min || Number.isNaN(v)) min = v;
    if (Number.isNaN(min)) return NaN;
  }
  return any ? min : empty;
}

/** Appends every item to `target`, one at a time (as `target.push(...items)` without the argument limit). */
export function pushAll<T>(target: T[], items: Iterable<T>): T[] {
  for (const item of items) target.push(item);
  return target;
}
