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

export interface RatingTable {
  /** Item ids in order of first appearance. */
  readonly items: readonly string[];
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
  const items: string[] = [];
  const raters: string[] = [];
  const n = rows.length;
  const rowItem = new Int32Array(n);
  const rowRater = new Int32Array(n);

  for (let i = 0; i < n; i++) {
    const { item, rater } = rows[i];
    let it = itemIndex.get(item);
    if (it === undefined) {
      it = items.length;
      itemIndex.set(item, it);
      items.push(item);
    }
    let ra = raterIndex.get(rater);
    if (ra === undefined) {
      ra = raters.length;
      raterIndex.set(rater, ra);
      raters.push(rater);
    }
    rowItem[i] = it;
    rowRater[i] = ra;
  }

  const categories = options.categories ? [...options.categories] : sortLabels(rows.map((r) => r.label));
  const categoryIndex = new Map<string, number>();
  categories.forEach((c, k) => {
    if (categoryIndex.has(c)) throw new RangeError(`buildRatingTable: category "${c}" is listed twice`);
    categoryIndex.set(c, k);
  });
  const rowCategory = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const k = categoryIndex.get(rows[i].label);
    if (k === undefined) {
      throw new RangeError(`buildRatingTable: label "${rows[i].label}" is not one of the given categories`);
    }
    rowCategory[i] = k;
  }

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
            `buildRatingTable: item "${items[it]}" has two labels from rater "${raters[ra]}" ` +
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
