/** The parts of the expert-ratings admin page: the MENTAT banks and MentalBench review sets, and their imports. */
import type { ReactNode } from "react";
import type { ListWindow } from "~/platform/list-window";
import { columnHelper } from "~/ui/data-table";
import { WindowTable } from "~/ui/window-table";
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

/** What the banks table shows of a MENTAT bank (its summary, app/mentat/banks.server.ts:banksWindow). */
interface BankRow {
  id: number;
  name: string;
  numQuestions: number;
  preferenceDomains: string[];
  numRaters: number;
  numSubmitted: number;
  numRated: number;
}

/** What the sets table shows of a review set (its summary, app/case-review/case-review.server.ts:reviewSetsWindow). */
interface ReviewSetRow {
  id: number;
  name: string;
  numCases: number;
  numSeeds: number;
  numRaters: number;
  numSubmitted: number;
}

const bankCol = columnHelper<BankRow>();
const bankColumns = [
  bankCol.accessor("name", {
    id: "name",
    header: "Bank",
    cell: (info) => <Link to={`/admin/mentat/${info.row.original.id}`}>{info.getValue()}</Link>,
  }),
  bankCol.accessor("numQuestions", { header: "Questions" }),
  bankCol.accessor((b) => b.preferenceDomains.join(", ") || "none", { id: "domains", header: "Rated domains" }),
  bankCol.accessor("numRaters", { header: "Experts" }),
  bankCol.accessor((b) => `${b.numSubmitted} / ${b.numRated * b.numRaters}`, {
    id: "submitted",
    header: "Submitted ratings",
  }),
];

/** A window of the question banks with their rating progress (docs/architecture.md, "Pages are windows"). */
export function BanksTable({ banks }: { banks: ListWindow<BankRow> }) {
  if (banks.total === 0 && !banks.query.filters.q) return <p className="card">No question banks yet.</p>;
  return (
    <WindowTable
      window={banks}
      columns={bankColumns}
      sortable={["name"]}
      noun="banks"
      testId="banks"
      filterLabel="Bank name starts with"
      rowProps={(b) => ({ "data-bank": b.name })}
    />
  );
}

const setCol = columnHelper<ReviewSetRow>();
const setColumns = [
  setCol.accessor("name", {
    id: "name",
    header: "Set",
    cell: (info) => <Link to={`/admin/case-review/${info.row.original.id}`}>{info.getValue()}</Link>,
  }),
  setCol.accessor("numCases", { header: "Cases" }),
  setCol.accessor("numSeeds", { header: "Seeds" }),
  setCol.accessor("numRaters", { header: "Experts" }),
  setCol.accessor((s) => `${s.numSubmitted} / ${(s.numCases + s.numSeeds) * s.numRaters}`, {
    id: "submitted",
    header: "Submitted reviews",
  }),
];

/** A window of the review sets with their review progress. */
export function ReviewSetsTable({ sets }: { sets: ListWindow<ReviewSetRow> }) {
  if (sets.total === 0 && !sets.query.filters.q) return <p className="card">No review sets yet.</p>;
  return (
    <WindowTable
      window={sets}
      columns={setColumns}
      sortable={["name"]}
      noun="review sets"
      testId="review-sets"
      filterLabel="Set name starts with"
      rowProps={(s) => ({ "data-set": s.name })}
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
