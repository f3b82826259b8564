/**
 * The one table component (a shadcn-style owned component over @tanstack/react-table v9): sortable headers, an
 * optional text filter over all columns, and a row count. Pages pass their column definitions.
 */
import {
  columnFilteringFeature,
  createColumnHelper,
  createFilteredRowModel,
  createSortedRowModel,
  filterFn_includesString,
  globalFilteringFeature,
  rowSortingFeature,
  sortFn_alphanumeric,
  sortFn_text,
  tableFeatures,
  useTable,
  type ColumnDef,
  type RowData,
} from "@tanstack/react-table";
import { useState } from "react";

export const tableFeatureSet = tableFeatures({
  rowSortingFeature,
  columnFilteringFeature,
  globalFilteringFeature,
  sortedRowModel: createSortedRowModel(),
  filteredRowModel: createFilteredRowModel(),
  sortFns: { alphanumeric: sortFn_alphanumeric, text: sortFn_text },
  filterFns: { includesString: filterFn_includesString },
});

export type Features = typeof tableFeatureSet;
// One table's columns hold values of different types, which ColumnDef's third parameter cannot express as a union.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Columns<T extends RowData> = ColumnDef<Features, T, any>[];
export const columnHelper = <T extends RowData>() => createColumnHelper<Features, T>();

export function DataTable<T extends RowData>({
  data,
  columns,
  filterLabel,
  toolbar,
  rowProps,
  empty = "Nothing to show.",
}: {
  data: T[];
  columns: Columns<T>;
  /** Shows a text filter over every column when set. */
  filterLabel?: string;
  toolbar?: React.ReactNode;
  rowProps?: RowProps<T>;
  empty?: string;
}) {
  const [filter, setFilter] = useState("");
  const table = useTable({
    features: tableFeatureSet,
    columns,
    data,
    globalFilterFn: "includesString",
    state: { globalFilter: filter },
    onGlobalFilterChange: (v) => setFilter(typeof v === "function" ? v(filter) : (v ?? "")),
  });
  const rows = table.getRowModel().rows;
  return (
    <div className="data-table">
      {filterLabel || toolbar ? (
        <div className="row" style={{ margin: "0.5rem 0" }}>
          {filterLabel ? (
            <input
              type="search"
              aria-label={filterLabel}
              placeholder={filterLabel}
              value={filter}
              onChange={(e) => setFilter(e.target.value)}
            />
          ) : null}
          {toolbar}
          <span className="spacer" />
          <small className="muted">
            {rows.length === data.length ? `${data.length} rows` : `${rows.length} of ${data.length} rows`}
          </small>
        </div>
      ) : null}
      {/* A wide table scrolls inside its own box, never the page (narrow screens, many columns). */}
      <div className="table-scroll">
        <table>
          <thead>
            {table.getHeaderGroups().map((group) => (
              <tr key={group.id}>
                {group.headers.map((header) => {
                  const sorted = header.column.getIsSorted();
                  return (
                    <th
                      key={header.id}
                      aria-sort={sorted === "asc" ? "ascending" : sorted === "desc" ? "descending" : undefined}
                    >
                      {header.isPlaceholder ? null : header.column.getCanSort() ? (
                        <button type="button" className="sort" onClick={header.column.getToggleSortingHandler()}>
                          <table.FlexRender header={header} />
                          {sorted === "asc" ? " ▲" : sorted === "desc" ? " ▼" : ""}
                        </button>
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
    </div>
  );
}

/** A table of the project's features over rows of type T (what `useTable` gives DataTable and WindowTable). */
type TableOf<T extends RowData> = ReturnType<typeof useTable<Features, T>>;

/** A row's own attributes (a test id, a class), from its data. */
export type RowProps<T> = (row: T) => React.HTMLAttributes<HTMLTableRowElement> & Record<string, string>;

/**
 * A table's body: one row per row of the table's row model, or one row saying there is nothing to show. Shared by
 * DataTable and WindowTable (app/ui/window-table.tsx), so both render rows alike.
 */
export function TableRows<T extends RowData>({
  table,
  columnCount,
  empty,
  rowProps,
}: {
  table: TableOf<T>;
  columnCount: number;
  empty: React.ReactNode;
  rowProps?: RowProps<T>;
}) {
  const rows = table.getRowModel().rows;
  return (
    <tbody>
      {rows.length === 0 ? (
        <tr>
          <td colSpan={columnCount} className="muted">
            {empty}
          </td>
        </tr>
      ) : (
        rows.map((row) => (
          <tr key={row.id} {...(rowProps ? rowProps(row.original) : {})}>
            {row.getAllCells().map((cell) => (
              <td key={cell.id}>
                <table.FlexRender cell={cell} />
              </td>
            ))}
          </tr>
        ))
      )}
    </tbody>
  );
}
