/**
 * A list page shows a window of its list, never the whole of it (docs/architecture.md, "Pages are windows"): the
 * URL names the sort, the direction, the filters and where the window starts (a keyset cursor: the sort values and
 * id of the row before it, or after it when paging back), so a link, a reload and Back show the same rows. The
 * server reads one window (`keyset` in app/platform/list-window.server.ts) and its count from indexes; the page renders it with TanStack Table in
 * manual mode (app/ui/window-table.tsx). Several windows on one page each take a prefix for their parameters.
 */

export const WINDOW_SIZE = 50;

export type CursorValue = string | number;
export type Cursor = CursorValue[];

export interface WindowSpec<S extends string, F extends string> {
  /** Parameter prefix: two windows on one page use different ones. */
  prefix: string;
  sorts: readonly S[];
  defaultSort: S;
  defaultDir?: "asc" | "desc";
  /** Filters read from the URL as plain strings (the page checks their values). */
  filters: readonly F[];
}

export interface WindowQuery<S extends string = string, F extends string = string> {
  prefix: string;
  sort: S;
  dir: "asc" | "desc";
  filters: Record<F, string>;
  after: Cursor | null;
  before: Cursor | null;
  size: number;
}

export interface ListWindow<T, S extends string = string, F extends string = string> {
  rows: T[];
  /** Rows matching the filters, in all. */
  total: number;
  /** True when the list counted only up to `total` rows and more match (the page says "more than"). */
  totalCapped?: boolean;
  /** Cursors of the next and previous windows; null at an end. */
  next: string | null;
  previous: string | null;
  query: Omit<WindowQuery<S, F>, "after" | "before"> & { at: "start" | "after" | "before" };
}

/** A cursor as it travels in the URL: base64url of its JSON. */
export function encodeCursor(c: Cursor): string {
  const bytes = new TextEncoder().encode(JSON.stringify(c));
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The cursor of a URL, or null when it is absent or not one this list wrote (then the window starts at the top). */
export function decodeCursor(s: string | null, length: number): Cursor | null {
  if (!s || s.length > 2000) return null;
  try {
    const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/"));
    const c: unknown = JSON.parse(new TextDecoder().decode(Uint8Array.from(bin, (ch) => ch.charCodeAt(0))));
    if (!Array.isArray(c) || c.length !== length) return null;
    if (!c.every((v) => typeof v === "string" || (typeof v === "number" && Number.isFinite(v)))) return null;
    return c as Cursor;
  } catch {
    return null;
  }
}

/** The window a URL asks for; anything unknown or malformed falls back to the defaults. */
export function readWindow<S extends string, F extends string>(
  params: URLSearchParams,
  spec: WindowSpec<S, F>,
  cursorLength: number,
): WindowQuery<S, F> {
  const p = (k: string) => params.get(spec.prefix + k);
  const sort = (spec.sorts as readonly string[]).includes(p("sort") ?? "") ? (p("sort") as S) : spec.defaultSort;
  const dir = p("dir") === "desc" ? "desc" : p("dir") === "asc" ? "asc" : (spec.defaultDir ?? "asc");
  const filters = Object.fromEntries(spec.filters.map((f) => [f, (p(f) ?? "").trim().slice(0, 200)])) as Record<
    F,
    string
  >;
  const after = decodeCursor(p("after"), cursorLength);
  const before = after ? null : decodeCursor(p("before"), cursorLength);
  return { prefix: spec.prefix, sort, dir, filters, after, before, size: WINDOW_SIZE };
}

/** The window from the rows a `keyset` query returned (app/platform/list-window.server.ts) (`size + 1` at most), in display order. */
export function finishWindow<T, S extends string, F extends string>(
  w: WindowQuery<S, F>,
  fetched: T[],
  total: number,
  cursorOf: (row: T) => Cursor,
): ListWindow<T, S, F> {
  const more = fetched.length > w.size;
  const rows = fetched.slice(0, w.size);
  if (w.before) rows.reverse();
  const first = rows[0];
  const last = rows[rows.length - 1];
  const hasNext = w.before ? true : more;
  const hasPrevious = w.before ? more : w.after !== null;
  const { after, before, ...rest } = w;
  return {
    rows,
    total,
    next: hasNext && last !== undefined ? encodeCursor(cursorOf(last)) : null,
    previous: hasPrevious && first !== undefined ? encodeCursor(cursorOf(first)) : null,
    query: { ...rest, at: after ? "after" : before ? "before" : "start" },
  };
}

/** The bounds of a prefix match on a text column: `col >= lo AND col < hi` reads an index range. */
export function prefixRange(prefix: string): [string, string] {
  return [prefix, prefix + "\u{10FFFF}"];
}

/**
 * A window cut from a list already held in memory, in `cursorOf` order ascending (a report's rows, a list built in
 * the order its page must keep): the same cursors and URL as a keyset window, for a list that has no index to walk.
 * It bounds what the page renders and sends, not what building the list costs.
 */
export function cutWindow<T, S extends string, F extends string>(
  w: WindowQuery<S, F>,
  sorted: readonly T[],
  cursorOf: (row: T) => Cursor,
): ListWindow<T, S, F> {
  const cmp = (a: Cursor, b: Cursor) => {
    for (let i = 0; i < a.length; i++) {
      const x = a[i]!;
      const y = b[i]!;
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  };
  const ordered = w.dir === "asc" ? sorted : [...sorted].reverse();
  const sign = w.dir === "asc" ? 1 : -1;
  const cursor = w.after ?? w.before;
  const from = !cursor
    ? ordered
    : w.after
      ? ordered.filter((r) => sign * cmp(cursorOf(r), cursor) > 0)
      : ordered.filter((r) => sign * cmp(cursorOf(r), cursor) < 0).reverse();
  return finishWindow(w, from.slice(0, w.size + 1), sorted.length, cursorOf);
}

/** Study (or set) names in code-unit order, the order every list of them is shown in. */
export const byStudyName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
