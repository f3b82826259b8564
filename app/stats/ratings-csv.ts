/**
 * Long-format ratings files (docs/formats.md#ratings-csv): a CSV with header `item,rater,label`, one rating per row; a missing rating
 * is an absent row. Text in, rows and line-numbered problems out, so the command line and the web upload report
 * the same errors.
 */
import { grow } from "../formats/typed-array-growth";
import { readCsv } from "../formats/csv";
import type { Names, RatingRow } from "./rating-table";

export interface RatingsCsvRow extends RatingRow {
  /** 1-based line of the row in the file (the first line of a record that spans lines). */
  line: number;
}

export interface RatingsCsvIssue {
  line: number;
  message: string;
}

export interface RatingsCsvResult {
  /** Valid rows with identical duplicates removed; empty when there are errors. */
  rows: RatingsCsvRow[];
  errors: RatingsCsvIssue[];
  warnings: RatingsCsvIssue[];
}

export const RATINGS_COLUMNS = ["item", "rater", "label"] as const;

/**
 * Parses and checks a ratings file: the three columns must be present (in any order, extra columns ignored,
 * header names case-insensitive); item and rater must be non-empty; an item/rater pair may appear twice only with
 * the same label (kept once, with a warning); a row with an empty label counts as a missing rating (warning).
 * Fields are trimmed. Any error empties `rows`.
 *
 * @example parseRatingsCsv("item,rater,label\nn1,A,yes\n").rows // [{ item: "n1", rater: "A", label: "yes", line: 2 }]
 */
export function parseRatingsCsv(text: string): RatingsCsvResult {
  const errors: RatingsCsvIssue[] = [];
  const warnings: RatingsCsvIssue[] = [];
  const fail = (line: number, message: string): RatingsCsvResult => ({
    rows: [],
    errors: [...errors, { line, message }],
    warnings,
  });

  if (text.replace(/^\uFEFF/, "").trim() === "")
    return fail(1, "the file is empty; expected a header item,rater,label");

  const read = readCsv(text, { trim: true });
  if ("error" in read) return fail(read.error.line, `not valid CSV: ${read.error.message}`);
  const [header, ...body] = read.records;
  const names = header.cells.map((name) => name.toLowerCase());
  const missing = RATINGS_COLUMNS.filter((column) => !names.includes(column));
  if (missing.length > 0) {
    return fail(
      header.line,
      `missing column${missing.length > 1 ? "s" : ""} ${missing.join(
        ", ",
      )}: the header must name item, rater and label`,
    );
  }
  for (const column of RATINGS_COLUMNS) {
    if (names.indexOf(column) !== names.lastIndexOf(column)) {
      return fail(header.line, `column ${column} appears twice in the header`);
    }
  }
  if (body.length === 0) return fail(header.line, "no ratings: the file has a header but no rows");

  const [itemAt, raterAt, labelAt] = RATINGS_COLUMNS.map((column) => names.indexOf(column));
  const needed = Math.max(itemAt, raterAt, labelAt) + 1;
  const seen = new Map<string, RatingsCsvRow>();
  const rows: RatingsCsvRow[] = [];
  for (const { line, cells: record } of body) {
    if (record.length < needed) {
      errors.push({ line, message: `expected ${header.cells.length} fields, found ${record.length}` });
      continue;
    }
    const item = record[itemAt];
    const rater = record[raterAt];
    const label = record[labelAt];
    if (item === "" || rater === "") {
      errors.push({ line, message: `empty ${item === "" ? "item" : "rater"}` });
      continue;
    }
    if (label === "") {
      warnings.push({ line, message: `empty label for item "${item}", rater "${rater}": treated as a missing rating` });
      continue;
    }
    const key = `${item}\u0000${rater}`;
    const previous = seen.get(key);
    if (previous) {
      if (previous.label !== label) {
        errors.push({
          line,
          message:
            `item "${item}" rater "${rater}" is labelled "${label}" here ` +
            `but "${previous.label}" on line ${previous.line}`,
        });
      } else {
        warnings.push({
          line,
          message: `duplicate of line ${previous.line} (item "${item}", rater "${rater}"): kept once`,
        });
      }
      continue;
    }
    const row = { item, rater, label, line };
    seen.set(key, row);
    rows.push(row);
  }
  if (errors.length === 0 && rows.length === 0) {
    errors.push({ line: header.line, message: "no ratings: every row has an empty label" });
  }
  return { rows: errors.length > 0 ? [] : rows, errors, warnings };
}

/**
 * A ratings file read into integer codes (docs/statistics.md#at-scale): no object per rating, only typed arrays
 * indexed by rating, so a million-item file fits in a few tens of megabytes. Rows are in file order; identical
 * duplicates and empty labels are already dropped, as in parseRatingsCsv.
 */
export interface CodedRatings {
  /** Item ids by code; a name is made only when asked (a million ids as strings would dominate the reading). */
  items: Names;
  raters: string[];
  /** Distinct labels as written, in order of first appearance. */
  labels: string[];
  /** 1-based line of each label's first appearance. */
  labelLine: Int32Array;
  count: number;
  rowItem: Int32Array;
  rowRater: Int32Array;
  rowLabel: Int32Array;
  rowLine: Int32Array;
  errors: RatingsCsvIssue[];
  warnings: RatingsCsvIssue[];
}

/** Why the fast reader handed over to parseRatingsCsv: something only the full CSV parser reads exactly. */
class NeedsFullParser extends Error {}

class GrowingInt32 {
  data = new Int32Array(1024);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Int32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  view(): Int32Array {
    return this.data.subarray(0, this.length);
  }
}

function isBlank(c: number): boolean {
  return c === 32 || c === 9;
}

/**
 * The fields of one line, text[from, to), with csv-parse's trimming, as bounds into `text` (no string per field);
 * a quoted field with a doubled quote gets its unescaped value in `fields.value`. Throws NeedsFullParser for quotes
 * csv-parse would read differently (a field going on to the next line, text after a closing quote, a stray quote).
 */
class LineFields {
  start: number[] = [];
  end: number[] = [];
  value: (string | null)[] = [];
  count = 0;
  text = "";

  /** The next quote at or after `quoteFrom` in `text` (-1: none): searched once per stretch, not once per field. */
  private quoteAt = -1;
  private quoteFrom = 0;

  private nextQuote(i: number): number {
    if (i < this.quoteFrom || (this.quoteAt >= 0 && this.quoteAt < i)) {
      this.quoteAt = this.text.indexOf('"', i);
      this.quoteFrom = i;
    }
    return this.quoteAt;
  }

  /** Starts a new stretch of text (a chunk); every line given to split lies in it. */
  reset(text: string): void {
    this.text = text;
    this.quoteFrom = 0;
    this.quoteAt = text.indexOf('"');
  }

  split(text: string, from: number, to: number): void {
    this.count = 0;
    let i = from;
    for (;;) {
      while (i < to && isBlank(text.charCodeAt(i))) i++;
      if (i < to && text.charCodeAt(i) === 34) {
        // A quoted field: "" is a quote; after the closing quote only blanks may come before the comma.
        const open = ++i;
        let value: string | null = null;
        let close: number;
        for (;;) {
          const q = this.nextQuote(i);
          if (q < 0 || q >= to) throw new NeedsFullParser(); // the field goes on to the next line
          if (q + 1 < to && text.charCodeAt(q + 1) === 34) {
            value = (value ?? "") + text.slice(i, q + 1);
            i = q + 2;
            continue;
          }
          if (value !== null) value += text.slice(i, q);
          close = q;
          i = q + 1;
          break;
        }
        this.push(open, close, value);
        while (i < to && isBlank(text.charCodeAt(i))) i++;
        if (i === to) return;
        if (text.charCodeAt(i) !== 44) throw new NeedsFullParser();
        i++;
        continue;
      }
      let comma = text.indexOf(",", i);
      if (comma >= to) comma = -1;
      const end = comma < 0 ? to : comma;
      let last = end;
      while (last > i && isBlank(text.charCodeAt(last - 1))) last--;
      const quote = this.nextQuote(i);
      if (quote >= 0 && quote < last) throw new NeedsFullParser();
      this.push(i, last, null);
      if (comma < 0) return;
      i = comma + 1;
    }
  }

  private push(start: number, end: number, value: string | null): void {
    this.start[this.count] = start;
    this.end[this.count] = end;
    this.value[this.count] = value;
    this.count++;
  }

  isEmpty(f: number): boolean {
    const v = this.value[f];
    return v === null ? this.start[f] === this.end[f] : v === "";
  }

  string(f: number): string {
    return this.value[f] ?? this.text.slice(this.start[f], this.end[f]);
  }

  code(f: number, interner: Interner): number {
    const v = this.value[f];
    return v === null ? interner.codeOf(this.text, this.start[f], this.end[f]) : interner.codeOf(v, 0, v.length);
  }
}

/**
 * parseRatingsCsv's checks and messages, over a file given as text chunks (read one chunk at a time), producing
 * integer codes instead of row objects. Anything unusual — a quoted field spanning lines, a stray quote, a bare
 * carriage return, a form feed, a line of blanks — is handed to parseRatingsCsv on the whole text (from `wholeText`),
 * so every file reads exactly as before; only the common case is fast.
 */
export function readCodedRatings(chunks: Iterable<string>, wholeText: () => string): CodedRatings {
  try {
    return readFast(chunks);
  } catch (e) {
    if (!(e instanceof NeedsFullParser)) throw e;
    return codeRows(parseRatingsCsv(wholeText()));
  }
}

/** Codes parseRatingsCsv's rows (the slow path, also used for small inputs in tests). */
export function codeRows(parsed: RatingsCsvResult): CodedRatings {
  const items = new Interner();
  const raters = new Interner();
  const labels = new Interner();
  const labelLine = new GrowingInt32();
  const n = parsed.rows.length;
  const rowItem = new Int32Array(n);
  const rowRater = new Int32Array(n);
  const rowLabel = new Int32Array(n);
  const rowLine = new Int32Array(n);
  parsed.rows.forEach((r, i) => {
    rowItem[i] = items.code(r.item);
    rowRater[i] = raters.code(r.rater);
    const before = labels.size;
    rowLabel[i] = labels.code(r.label);
    if (labels.size > before) labelLine.push(r.line);
    rowLine[i] = r.line;
  });
  return {
    items: items.names,
    raters: raters.list,
    labels: labels.list,
    labelLine: labelLine.view().slice(),
    count: n,
    rowItem,
    rowRater,
    rowLabel,
    rowLine,
    errors: parsed.errors,
    warnings: parsed.warnings,
  };
}

/**
 * Distinct strings to codes 0, 1, 2, … — an open-addressing table over FNV-1a hashes of a range of a larger string,
 * so a value already seen costs no allocation (a Map would need a new string per field, and is ~3× slower at a
 * million distinct items). The values' UTF-16 code units are kept in one typed array, not as a string each: a
 * million item ids as strings are a million heap objects that every garbage collection copies or marks, which made
 * the reading time grow faster than the file. `list` makes the strings, once, when asked.
 */
class Interner {
  private units = new Uint16Array(1 << 14);
  private used = 0;
  /** Value k is units[start[k] .. start[k + 1]). */
  private start = new Int32Array(1024);
  /** Two cells per slot, the value's code (-1: empty) and its hash: a probe reads one place in memory. */
  private table = new Int32Array(2048).fill(-1);
  private count = 0;
  private strings: string[] | null = null;

  get size(): number {
    return this.count;
  }

  /** The values by code, each made a string only when asked (a message names an item; the statistics count them). */
  get names(): Names {
    return { length: this.count, at: (k) => (k >= 0 && k < this.count ? this.name(k) : undefined) };
  }

  /** Every value as a string (raters and labels: few, and needed whole). */
  get list(): string[] {
    if (this.strings === null || this.strings.length !== this.count) {
      const strings = this.strings ?? [];
      for (let k = strings.length; k < this.count; k++) strings.push(this.name(k));
      this.strings = strings;
    }
    return this.strings;
  }

  private name(k: number): string {
    const from = this.start[k];
    const to = this.start[k + 1];
    let out = "";
    for (let i = from; i < to; i += 4096)
      out += String.fromCharCode.apply(null, this.units.subarray(i, Math.min(to, i + 4096)) as unknown as number[]);
    return out;
  }

  code(value: string): number {
    return this.codeOf(value, 0, value.length);
  }

  codeOf(text: string, from: number, to: number): number {
    let h = 0x811c9dc5 | 0;
    for (let i = from; i < to; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
    const table = this.table;
    const mask = (table.length >> 1) - 1;
    const length = to - from;
    let slot = h & mask;
    for (;;) {
      const k = table[2 * slot];
      if (k < 0) break;
      if (table[2 * slot + 1] === h && this.equals(k, text, from, length)) return k;
      slot = (slot + 1) & mask;
    }
    const k = this.count;
    if (k + 2 > this.start.length) this.start = grow(this.start, k + 2);
    if (this.used + length > this.units.length) this.units = grow(this.units, this.used + length);
    for (let i = 0; i < length; i++) this.units[this.used + i] = text.charCodeAt(from + i);
    this.start[k] = this.used;
    this.used += length;
    this.start[k + 1] = this.used;
    table[2 * slot] = k;
    table[2 * slot + 1] = h;
    this.count++;
    if (this.count * 4 > table.length) this.rehash();
    return k;
  }

  private equals(k: number, text: string, from: number, length: number): boolean {
    const at = this.start[k];
    if (this.start[k + 1] - at !== length) return false;
    for (let i = 0; i < length; i++) if (this.units[at + i] !== text.charCodeAt(from + i)) return false;
    return true;
  }

  private rehash(): void {
    const old = this.table;
    const table = new Int32Array(old.length * 2).fill(-1);
    const mask = (table.length >> 1) - 1;
    for (let s = 0; s < old.length; s += 2) {
      const k = old[s];
      if (k < 0) continue;
      const h = old[s + 1];
      let slot = h & mask;
      while (table[2 * slot] >= 0) slot = (slot + 1) & mask;
      table[2 * slot] = k;
      table[2 * slot + 1] = h;
    }
    this.table = table;
  }
}

const UNUSUAL = /\r(?!\n)|\f/;

function readFast(chunks: Iterable<string>): CodedRatings {
  const errors: RatingsCsvIssue[] = [];
  const warnings: RatingsCsvIssue[] = [];
  const items = new Interner();
  const raters = new Interner();
  const labels = new Interner();
  const labelLine = new GrowingInt32();
  const rowItem = new GrowingInt32();
  const rowRater = new GrowingInt32();
  const rowLabel = new GrowingInt32();
  const rowLine = new GrowingInt32();
  const cells = new LineFields();
  let header: string[] | null = null;
  let headerLine = 0;
  let itemAt = 0;
  let raterAt = 0;
  let labelAt = 0;
  let needed = 0;
  let bodyRecords = 0;
  let lineNo = 0;
  let carry = "";
  let first = true;

  const onLine = (text: string, from: number, to: number) => {
    lineNo++;
    if (to > from && text.charCodeAt(to - 1) === 13) to--;
    if (to === from) return;
    cells.split(text, from, to);
    if (cells.count === 1 && cells.isEmpty(0)) throw new NeedsFullParser(); // a line of blanks
    if (header === null) {
      header = Array.from({ length: cells.count }, (_, f) => cells.string(f));
      headerLine = lineNo;
      const names = header.map((name) => name.toLowerCase());
      // Header problems read exactly as parseRatingsCsv words them.
      if (RATINGS_COLUMNS.some((c) => names.indexOf(c) < 0 || names.indexOf(c) !== names.lastIndexOf(c)))
        throw new NeedsFullParser();
      [itemAt, raterAt, labelAt] = RATINGS_COLUMNS.map((column) => names.indexOf(column));
      needed = Math.max(itemAt, raterAt, labelAt) + 1;
      return;
    }
    bodyRecords++;
    if (cells.count < needed) {
      errors.push({ line: lineNo, message: `expected ${header.length} fields, found ${cells.count}` });
      return;
    }
    if (cells.isEmpty(itemAt) || cells.isEmpty(raterAt)) {
      errors.push({ line: lineNo, message: `empty ${cells.isEmpty(itemAt) ? "item" : "rater"}` });
      return;
    }
    if (cells.isEmpty(labelAt)) {
      warnings.push({
        line: lineNo,
        message: `empty label for item "${cells.string(itemAt)}", rater "${cells.string(raterAt)}": treated as a missing rating`,
      });
      return;
    }
    rowItem.push(cells.code(itemAt, items));
    rowRater.push(cells.code(raterAt, raters));
    const before = labels.size;
    rowLabel.push(cells.code(labelAt, labels));
    if (labels.size > before) labelLine.push(lineNo);
    rowLine.push(lineNo);
  };

  for (let chunk of chunks) {
    if (first) {
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
      first = false;
    }
    const text = carry + chunk;
    const lastBreak = text.lastIndexOf("\n");
    if (lastBreak < 0) {
      carry = text;
      continue;
    }
    UNUSUAL.lastIndex = 0;
    const unusual = UNUSUAL.exec(text);
    if (unusual && unusual.index < lastBreak) throw new NeedsFullParser();
    cells.reset(text);
    let from = 0;
    while (from <= lastBreak) {
      const nl = text.indexOf("\n", from);
      onLine(text, from, nl);
      from = nl + 1;
    }
    carry = text.slice(lastBreak + 1);
  }
  if (carry !== "") {
    if (UNUSUAL.test(carry.replace(/\r$/, ""))) throw new NeedsFullParser();
    cells.reset(carry);
    onLine(carry, 0, carry.length);
  }
  // An empty file, a header alone: parseRatingsCsv words these.
  if (header === null || bodyRecords === 0) throw new NeedsFullParser();

  const count = rowItem.length;
  const keep = dropDuplicates(
    { items: items.names, raters: raters.list, labels: labels.list },
    rowItem.view(),
    rowRater.view(),
    rowLabel.view(),
    rowLine.view(),
    errors,
    warnings,
  );
  if (errors.length === 0 && keep.length === 0)
    errors.push({ line: headerLine, message: "no ratings: every row has an empty label" });
  const byLine = (a: RatingsCsvIssue, b: RatingsCsvIssue) => a.line - b.line;
  errors.sort(byLine);
  warnings.sort(byLine);
  // Any error empties the result, as in parseRatingsCsv.
  if (errors.length > 0) return codeRows({ rows: [], errors, warnings });
  const pick = (source: Int32Array) =>
    keep.length === count ? source.slice() : Int32Array.from(keep, (i) => source[i]);
  return {
    items: items.names,
    raters: raters.list,
    labels: labels.list,
    labelLine: labelLine.view().slice(),
    count: keep.length,
    rowItem: pick(rowItem.view()),
    rowRater: pick(rowRater.view()),
    rowLabel: pick(rowLabel.view()),
    rowLine: pick(rowLine.view()),
    errors,
    warnings,
  };
}

/**
 * parseRatingsCsv's duplicate rule over codes: per item (a counting sort keeps file order within an item), a rater's
 * second row is a warning when it repeats the label and an error when it differs. Returns the rows kept.
 */
function dropDuplicates(
  names: { items: Names; raters: string[]; labels: string[] },
  rowItem: Int32Array,
  rowRater: Int32Array,
  rowLabel: Int32Array,
  rowLine: Int32Array,
  errors: RatingsCsvIssue[],
  warnings: RatingsCsvIssue[],
): Int32Array {
  const n = rowItem.length;
  const nItems = names.items.length;
  const start = new Int32Array(nItems + 1);
  for (let i = 0; i < n; i++) start[rowItem[i] + 1]++;
  for (let i = 0; i < nItems; i++) start[i + 1] += start[i];
  const cursor = start.slice(0, nItems);
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[cursor[rowItem[i]]++] = i;
  const seenAt = new Int32Array(names.raters.length).fill(-1);
  const dropped = new Uint8Array(n);
  let drops = 0;
  for (let it = 0; it < nItems; it++) {
    for (let p = start[it]; p < start[it + 1]; p++) {
      const row = order[p];
      const ra = rowRater[row];
      const previous = seenAt[ra];
      if (previous >= 0 && rowItem[previous] === it) {
        dropped[row] = 1;
        drops++;
        const item = names.items.at(it);
        const rater = names.raters[ra];
        if (rowLabel[previous] !== rowLabel[row]) {
          errors.push({
            line: rowLine[row],
            message:
              `item "${item}" rater "${rater}" is labelled "${names.labels[rowLabel[row]]}" here ` +
              `but "${names.labels[rowLabel[previous]]}" on line ${rowLine[previous]}`,
          });
        } else {
          warnings.push({
            line: rowLine[row],
            message: `duplicate of line ${rowLine[previous]} (item "${item}", rater "${rater}"): kept once`,
          });
        }
        continue;
      }
      seenAt[ra] = row;
    }
  }
  const keep = new Int32Array(n - drops);
  for (let i = 0, k = 0; i < n; i++) if (!dropped[i]) keep[k++] = i;
  return keep;
}
