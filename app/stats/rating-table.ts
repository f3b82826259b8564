/**
 * The input of every agreement statistic: long-format ratings `{ item, rater, label }` (a missing rating is an
 * absent row), integer-coded once into typed arrays so that each coefficient runs in time linear in the number
 * of ratings.
 */
import { compareCodePoints } from "../python-compat/text";

export interface RatingRow {
  item: string;
  rater: string;
  label: string;
}

export interface RatingTableOptions {
  /**
   * The ordered category set. Defaults to the observed labels, sorted numerically when every label is a number
   * and by code point otherwise. Give it to fix the order of ordinal labels, or to count categories nobody used
   * (Gwet's AC1 depends on the number of categories, as irrCAC's `categ.labels`).
   */
  categories?: readonly string[];
}

/**
 * Ids by code: how many, and each one's text. An array is one; a ratings file read at scale keeps its item ids
 * compact and makes a string only for the id a message names (docs/statistics.md#at-scale).
 */
export interface Names {
  readonly length: number;
  at(index: number): string | undefined;
}

export interface RatingTable {
  /** Item ids in order of first appearance. */
  readonly items: Names;
  /** Rater ids in order of first appearance. */
  readonly raters: readonly string[];
  /** Ordered categories; category codes below index this array. */
  readonly categories: readonly string[];
  /**
   * The score of each category used by linear/quadratic weights and interval alpha: the label's numeric value
   * when every category is a number, otherwise its rank 1..q (irrCAC weights.gen.r does the same).
   */
  readonly scores: Float64Array;
  /** Ratings grouped by item: the ratings of item i are positions itemStart[i] .. itemStart[i+1]-1. */
  readonly itemStart: Int32Array;
  readonly ratingRater: Int32Array;
  readonly ratingCategory: Int32Array;
  /** The largest number of ratings any item has (sizes scratch buffers). */
  readonly maxRatingsPerItem: number;
}

const NUMERIC_LABEL = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/** True for labels such as "3", "-1.5" or "2e3" (surrounding blanks are not allowed). */
export function isNumericLabel(label: string): boolean {
  return NUMERIC_LABEL.test(label) && Number.isFinite(Number(label));
}

/** Numeric labels by value (ties by text), anything else by code point, so the order never depends on locale. */
export function sortLabels(labels: Iterable<string>): string[] {
  const list = [...new Set(labels)];
  if (list.length > 0 && list.every(isNumericLabel)) {
    return list.sort((a, b) => Number(a) - Number(b) || compareCodePoints(a, b));
  }
  return list.sort(compareCodePoints);
}

function categoryScores(categories: readonly string[]): Float64Array {
  const numeric = categories.length > 0 && categories.every(isNumericLabel);
  return Float64Array.from(categories, (c, k) => (numeric ? Number(c) : k + 1));
}

/**
 * Integer-codes long-format ratings. Identical repeated rows are kept once. Throws (programmer errors: validate
 * files first, e.g. with parseRatingsCsv) when an item/rater pair has two different labels, when a label is
 * outside `options.categories`, or when `options.categories` repeats a category.
 *
 * @example buildRatingTable([{ item: "n1", rater: "A", label: "yes" }, { item: "n1", rater: "B", label: "no" }])
 */
export function buildRatingTable(rows: readonly RatingRow[], options: RatingTableOptions = {}): RatingTable {
  const itemIndex = new Map<string, number>();
  const raterIndex = new Map<string, number>();
  const labelIndex = new Map<string, number>();
  const items: string[] = [];
  const raters: string[] = [];
  const labels: string[] = [];
  const n = rows.length;
  const rowItem = new Int32Array(n);
  const rowRater = new Int32Array(n);
  const rowLabel = new Int32Array(n);
  const code = (index: Map<string, number>, list: string[], value: string): number => {
    let k = index.get(value);
    if (k === undefined) {
      k = list.length;
      index.set(value, k);
      list.push(value);
    }
    return k;
  };
  for (let i = 0; i < n; i++) {
    const { item, rater, label } = rows[i];
    rowItem[i] = code(itemIndex, items, item);
    rowRater[i] = code(raterIndex, raters, rater);
    rowLabel[i] = code(labelIndex, labels, label);
  }
  return buildCodedRatingTable({ items, raters, labels, rowItem, rowRater, rowLabel }, options);
}

/** Ratings already integer-coded: row i rates item `items.at(rowItem[i])` by `raters[rowRater[i]]` as `labels[rowLabel[i]]`. */
export interface CodedRatingRows {
  items: Names;
  raters: string[];
  /** Distinct labels; every one must be a category (when categories are given) and is counted in the default set. */
  labels: readonly string[];
  rowItem: Int32Array;
  rowRater: Int32Array;
  rowLabel: Int32Array;
}

/**
 * buildRatingTable over integer codes (e.g. from readCodedRatings), with the same rules and errors, so a large
 * file never needs an object per rating (docs/statistics.md#at-scale).
 */
export function buildCodedRatingTable(coded: CodedRatingRows, options: RatingTableOptions = {}): RatingTable {
  const { items, raters, rowItem, rowRater } = coded;
  const n = rowItem.length;
  const usedLabels = new Uint8Array(coded.labels.length);
  for (let i = 0; i < n; i++) usedLabels[coded.rowLabel[i]] = 1;
  const categories = options.categories
    ? [...options.categories]
    : sortLabels(coded.labels.filter((_, k) => usedLabels[k] === 1));
  const categoryIndex = new Map<string, number>();
  categories.forEach((c, k) => {
    if (categoryIndex.has(c)) throw new RangeError(`buildRatingTable: category "${c}" is listed twice`);
    categoryIndex.set(c, k);
  });
  const labelCategory = new Int32Array(coded.labels.length).fill(-1);
  coded.labels.forEach((label, k) => {
    if (usedLabels[k] === 0) return;
    const c = categoryIndex.get(label);
    if (c === undefined) throw new RangeError(`buildRatingTable: label "${label}" is not one of the given categories`);
    labelCategory[k] = c;
  });
  const rowCategory = new Int32Array(n);
  for (let i = 0; i < n; i++) rowCategory[i] = labelCategory[coded.rowLabel[i]];

  // Counting sort by item keeps the input order within each item.
  const nItems = items.length;
  const start = new Int32Array(nItems + 1);
  for (let i = 0; i < n; i++) start[rowItem[i] + 1]++;
  for (let i = 0; i < nItems; i++) start[i + 1] += start[i];
  const cursor = start.slice(0, nItems);
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[cursor[rowItem[i]]++] = i;

  // Drop identical duplicates and reject conflicting ones, one item at a time (seenAt is indexed by rater).
  const seenAt = new Int32Array(raters.length).fill(-1);
  const ratingRater = new Int32Array(n);
  const ratingCategory = new Int32Array(n);
  const itemStart = new Int32Array(nItems + 1);
  let kept = 0;
  let maxRatingsPerItem = 0;
  for (let it = 0; it < nItems; it++) {
    itemStart[it] = kept;
    for (let p = start[it]; p < start[it + 1]; p++) {
      const row = order[p];
      const ra = rowRater[row];
      const previous = seenAt[ra];
      if (previous >= itemStart[it]) {
        if (ratingCategory[previous] !== rowCategory[row]) {
          throw new RangeError(
            `buildRatingTable: item "${items.at(it)}" has two labels from rater "${raters[ra]}" ` +
              `("${categories[ratingCategory[previous]]}" and "${categories[rowCategory[row]]}")`,
          );
        }
        continue;
      }
      seenAt[ra] = kept;
      ratingRater[kept] = ra;
      ratingCategory[kept] = rowCategory[row];
      kept++;
    }
    maxRatingsPerItem = Math.max(maxRatingsPerItem, kept - itemStart[it]);
  }
  itemStart[nItems] = kept;

  return {
    items,
    raters,
    categories,
    scores: categoryScores(categories),
    itemStart,
    ratingRater: ratingRater.slice(0, kept),
    ratingCategory: ratingCategory.slice(0, kept),
    maxRatingsPerItem,
  };
}

/** Number of ratings in the table (after identical duplicates were dropped). */
export function ratingCount(table: RatingTable): number {
  return table.ratingRater.length;
}
