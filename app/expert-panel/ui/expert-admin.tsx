/** The parts of the expert-ratings admin page: the MENTAT banks and MentalBench review sets, and their imports. */
import type { ReactNode } from "react";
import { Form, Link } from "@remix-run/react";
import { DEFAULT_PREFERENCE_DOMAINS, MENTAT_DOMAINS } from "~/expert-panel/domain/expert-scales";
import { Csrf } from "~/ui/root-data";

/** What an import form's action answers: its problems, shown under the form that sent it. */
export type ExpertImportResult = {
  intent: "bank" | "set";
  /** A warning: the file was imported, with values to check. */
  kind?: "warning";
  message: string;
  issues: { line: number; message: string }[];
};

function Issues({ result, intent }: { result: ExpertImportResult | undefined; intent: "bank" | "set" }) {
  if (!result || result.intent !== intent) return null;
  return (
    <div
      className={result.kind === "warning" ? "notice warn" : "notice bad"}
      role="alert"
      data-testid={`${intent}-import-${result.kind === "warning" ? "warnings" : "errors"}`}
    >
      <p>{result.message}</p>
      {result.issues.length ? (
        <ul className="issues">
          {result.issues.slice(0, 50).map((i, k) => (
            <li key={k}>
              {i.line ? `line ${i.line}: ` : ""}
              {i.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** A list of banks or sets: a table of `columns` with a link to each page, or `empty` when there are none. */
function SummaryTable<T extends { id: number; name: string }>({
  rows,
  empty,
  columns,
  link,
  rowAttr,
  nameHead,
}: {
  rows: T[];
  /** The heading of the name column. */
  nameHead: string;
  empty: string;
  /** The heading and the cell of each column after the name; `num` right-aligns it. */
  columns: { head: string; num?: boolean; cell: (row: T) => ReactNode }[];
  link: (row: T) => string;
  /** The row's data attribute naming it, for tests and readers ("data-bank"). */
  rowAttr: string;
}) {
  if (rows.length === 0) return <p className="card">{empty}</p>;
  const num = (c: { num?: boolean }) => (c.num ? "num" : undefined);
  return (
    <table>
      <thead>
        <tr>
          <th>{nameHead}</th>
          {columns.map((c) => (
            <th key={c.head} className={num(c)}>
              {c.head}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.id} {...{ [rowAttr]: r.name }}>
            <td>
              <Link to={link(r)}>{r.name}</Link>
            </td>
            {columns.map((c) => (
              <td key={c.head} className={num(c)}>
                {c.cell(r)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** What the banks table shows of a MENTAT bank (its summary, app/mentat/banks.server.ts:listBanks). */
interface BankRow {
  id: number;
  name: string;
  numQuestions: number;
  preferenceDomains: string[];
  numRaters: number;
  numSubmitted: number;
  numRated: number;
}

/** What the sets table shows of a review set (its summary, app/case-review/case-review.server.ts:listReviewSets). */
interface ReviewSetRow {
  id: number;
  name: string;
  numCases: number;
  numSeeds: number;
  numRaters: number;
  numSubmitted: number;
}

/** The question banks with their rating progress. */
export function BanksTable({ banks }: { banks: BankRow[] }) {
  return (
    <SummaryTable
      rows={banks}
      empty="No question banks yet."
      link={(b) => `/admin/mentat/${b.id}`}
      rowAttr="data-bank"
      nameHead="Bank"
      columns={[
        { head: "Questions", num: true, cell: (b) => b.numQuestions },
        { head: "Rated domains", cell: (b) => b.preferenceDomains.join(", ") || "none" },
        { head: "Experts", num: true, cell: (b) => b.numRaters },
        { head: "Submitted ratings", num: true, cell: (b) => `${b.numSubmitted} / ${b.numRated * b.numRaters}` },
      ]}
    />
  );
}

/** The review sets with their review progress. */
export function ReviewSetsTable({ sets }: { sets: ReviewSetRow[] }) {
  return (
    <SummaryTable
      rows={sets}
      empty="No review sets yet."
      link={(s) => `/admin/case-review/${s.id}`}
      rowAttr="data-set"
      nameHead="Set"
      columns={[
        { head: "Cases", num: true, cell: (s) => s.numCases },
        { head: "Seeds", num: true, cell: (s) => s.numSeeds },
        { head: "Experts", num: true, cell: (s) => s.numRaters },
        {
          head: "Submitted reviews",
          num: true,
          cell: (s) => `${s.numSubmitted} / ${(s.numCases + s.numSeeds) * s.numRaters}`,
        },
      ]}
    />
  );
}

/** An import form of the page: a name and a CSV file, the kind's own fields, and the problems of its last import. */
function ImportForm({
  intent,
  title,
  help,
  nameLabel,
  button,
  result,
  busy,
  children,
}: {
  intent: "bank" | "set";
  title: string;
  help: ReactNode;
  nameLabel: string;
  button: string;
  result: ExpertImportResult | undefined;
  busy: boolean;
  children?: ReactNode;
}) {
  return (
    <Form method="post" encType="multipart/form-data" className="card">
      <Csrf />
      <h3 style={{ marginTop: 0 }}>{title}</h3>
      <p className="muted">{help}</p>
      <label htmlFor={`${intent}-name`}>{nameLabel}</label>
      <input id={`${intent}-name`} name="name" type="text" required />
      <label htmlFor={`${intent}-file`}>File</label>
      <input id={`${intent}-file`} name="file" type="file" accept=".csv,text/csv" required />
      {children}
      <p>
        <button type="submit" name="intent" value={intent} disabled={busy}>
          {button}
        </button>
      </p>
      <Issues result={result} intent={intent} />
    </Form>
  );
}

/** Importing a MENTAT question bank. */
export function BankImportForm({ result, busy }: { result: ExpertImportResult | undefined; busy: boolean }) {
  return (
    <ImportForm
      intent="bank"
      title="Import a question bank"
      nameLabel="Bank name"
      button="Import questions"
      result={result}
      busy={busy}
      help={
        <>
          CSV with id, domain, question (gender alternatives as {"{he/she/they}"}) or he / she / they, options a–e,
          answer (letter), notes; placeholders &lt;AGE&gt; and &lt;NAT&gt;. Validated whole; re-importing updates by id.
        </>
      }
    >
      <fieldset>
        <legend>Domains labelled by expert preference (rated by the experts)</legend>
        {MENTAT_DOMAINS.map((d) => (
          <label key={d} className="inline">
            <input type="checkbox" name="domains" value={d} defaultChecked={DEFAULT_PREFERENCE_DOMAINS.includes(d)} />{" "}
            {d}
          </label>
        ))}
      </fieldset>
      <label htmlFor="bank-seed">Seed (option orders)</label>
      <input id="bank-seed" name="seed" type="number" min={0} defaultValue={1} />
    </ImportForm>
  );
}

/** Importing a MentalBench review set. */
export function ReviewSetImportForm({ result, busy }: { result: ExpertImportResult | undefined; busy: boolean }) {
  return (
    <ImportForm
      intent="set"
      title="Import a review set"
      nameLabel="Set name"
      button="Import cases"
      result={result}
      busy={busy}
      help="CSV with id, text, kind (case or seed), and optionally case_type (I–IV), diagnosis, seed_id."
    />
  );
}
