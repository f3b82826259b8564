/**
 * The keyset query of a list window (app/platform/list-window.ts; docs/architecture.md, "Pages are windows").
 */
import { asc, desc, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import type { WindowQuery } from "./list-window";

/**
 * The condition, order and limit of a window over `keys` (the sort's expressions, the last one unique), for a query
 * that asks for `size + 1` rows: paging back reads in the opposite order, and `finishWindow` turns the rows round.
 * Row values compare as an index on the keys orders them, so SQLite walks the index from the cursor.
 */
export function keyset(
  w: Pick<WindowQuery, "dir" | "after" | "before" | "size">,
  keys: SQLWrapper[],
): { where: SQL; orderBy: SQL[]; limit: number } {
  const back = w.before !== null;
  const ascending = (w.dir === "asc") !== back;
  const cursor = w.after ?? w.before;
  const tuple = sql`(${sql.join(keys, sql`, `)})`;
  const values = cursor
    ? sql`(${sql.join(
        cursor.map((v) => sql`${v}`),
        sql`, `,
      )})`
    : null;
  return {
    where: values ? (ascending ? sql`${tuple} > ${values}` : sql`${tuple} < ${values}`) : sql`1`,
    orderBy: keys.map((k) => (ascending ? asc(k) : desc(k))),
    limit: w.size + 1,
  };
}
