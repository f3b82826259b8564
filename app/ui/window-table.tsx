/**
 * A window of a server-side list (docs/architecture.md, "Pages are windows"): TanStack Table in manual mode over the
 * rows the loader read (app/platform/list-window.ts). Sorting, filters and paging are links and GET forms that change
 * the URL, so the server reads the next window and a link or Back shows the same rows.
 */
import { Form, Link, useSearchParams } from "@remix-run/react";
import { useTable, type RowData, type SortingState } from "@tanstack/react-table";
import type { ListWindow } from "~/platform/list-window";
import { TableRows, tableFeatureSet, type Columns, type RowProps } from "~/ui/data-table";

/** This URL with the window's parameters changed (an empty value removes one) and its cursor dropped. */
export function windowHref(params: URLSearchParams, prefix: string, changes: Record<string, string | null>): string {
  const next = new URLSearchParams(params);
  for (const k of ["after", "before"]) next.delete(prefix + k);
  for (const [k, v] of Object.entries(changes)) {
    if (v === null || v === "") next.delete(prefix + k);
    else next.set(prefix + k, v);
  }
  const s = next.toString();
  return s ? `?${s}` : "?";
}

export function WindowTable<T extends RowData>({
  window: w,
  columns,
  sortable,
  filterLabel,
  filters,
  toolbar,
  rowProps,
  noun,
  empty = "Nothing to show.",
  testId,
}: {
  window: ListWindow<T>;
  columns: Columns<T>;
  /** The ids of the columns the server sorts by (their ids are the sort names). */
  sortable: readonly string[];
  /** A text filter named `q` (its label), when set. */
  filterLabel?: string;
  /** More filter fields for the GET form (named with the window's prefix). */
  filters?: React.ReactNode;
  toolbar?: React.ReactNode;
  rowProps?: RowProps<T>;
  /** What a row is, plural ("cases"). */
  noun: string;
  empty?: string;
  testId?: string;
}) {
  const [params] = useSearchParams();
  const { prefix } = w.query;
  const sorting: SortingState = [{ id: w.query.sort, desc: w.query.dir === "desc" }];
  const table = useTable({
    features: tableFeatureSet,
    columns,
    data: w.rows,
    // The server sorted and filtered these rows: the table only shows them and says how they are sorted.
    manualSorting: true,
    manualFiltering: true,
    state: { sorting },
  });
  // Everything of the URL that is not this window's filters or cursor rides along with the filter form.
  const own = new Set([...Object.keys(w.query.filters), "after", "before"].map((k) => prefix + k));
  const kept = [...params.entries()].filter(([k]) => !own.has(k));
  const rows = table.getRowModel().rows;
  return (
    <div className="data-table" data-testid={testId}>
      {filterLabel || filters ? (
        <Form method="get" className="row" style={{ margin: "0.5rem 0" }} preventScrollReset>
          {kept.map(([k, v]) => (
            <input key={k} type="hidden" name={k} value={v} />
          ))}
          {filterLabel ? (
            <input
              type="search"
              name={`${prefix}q`}
              aria-label={filterLabel}
              placeholder={filterLabel}
              defaultValue={(w.query.filters as Record<string, string>).q ?? ""}
            />
          ) : null}
          {filters}
          <button type="submit" className="secondary">
            Filter
          </button>
          {toolbar}
        </Form>
      ) : (
        toolbar
      )}
      <div className="table-scroll">
        <table>
          <thead>
            {table.getHeaderGroups().map((group) => (
              <tr key={group.id}>
                {group.headers.map((header) => {
                  const id = header.column.id;
                  const sorted = w.query.sort === id ? w.query.dir : null;
                  return (
                    <th
                      key={header.id}
                      aria-sort={sorted === "asc" ? "ascending" : sorted === "desc" ? "descending" : undefined}
                    >
                      {sortable.includes(id) ? (
                        <Link
                          className="sort"
                          preventScrollReset
                          to={windowHref(params, prefix, { sort: id, dir: sorted === "asc" ? "desc" : "asc" })}
                        >
                          <table.FlexRender header={header} />
                          {sorted === "asc" ? " ▲" : sorted === "desc" ? " ▼" : ""}
                        </Link>
                      ) : (
                        <table.FlexRender header={header} />
                      )}
                    </th>
                  );
                })}
              </tr>
            ))}
          </thead>
          <TableRows table={table} columnCount={columns.length} empty={empty} rowProps={rowProps} />
        </table>
      </div>
      <nav className="row pager" aria-label={`Pages of ${noun}`} style={{ margin: "0.5rem 0" }}>
        {w.previous ? (
          <Link preventScrollReset to={windowHref(params, prefix, { before: w.previous })} rel="prev">
            ‹ Previous {w.query.size}
          </Link>
        ) : null}
        {w.query.at !== "start" ? (
          <Link preventScrollReset to={windowHref(params, prefix, {})}>
            First
          </Link>
        ) : null}
        {w.next ? (
          <Link preventScrollReset to={windowHref(params, prefix, { after: w.next })} rel="next">
            Next {w.query.size} ›
          </Link>
        ) : null}
        <span className="spacer" />
        <small className="muted" data-testid={testId ? `${testId}-count` : undefined}>
          {rows.length} shown of {w.totalCapped ? "more than " : ""}
          {w.total} {noun}
        </small>
      </nav>
    </div>
  );
}
