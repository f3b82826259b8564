/** The parts of the expert-ratings admin page: the MENTAT banks and MentalBench review sets, and their imports. */
import { Form, Link } from "@remix-run/react";
import { DEFAULT_PREFERENCE_DOMAINS, MENTAT_DOMAINS } from "~/expert-panel/domain/expert-scales";
import { Csrf } from "~/root";
import type { listReviewSets } from "~/case-review/case-review.server";
import type { listBanks } from "~/mentat/banks.server";

/** What an import form's action answers: its problems, shown under the form that sent it. */
export type ExpertImportResult = {
  intent: "bank" | "set";
  message: string;
  issues: { line: number; message: string }[];
};

function Issues({ result, intent }: { result: ExpertImportResult | undefined; intent: "bank" | "set" }) {
  if (!result || result.intent !== intent) return null;
  return (
    <div className="notice bad" role="alert" data-testid={`${intent}-import-errors`}>
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

/** The question banks with their rating progress. */
export function BanksTable({ banks }: { banks: ReturnType<typeof listBanks> }) {
  return (
    <>
      {banks.length === 0 ? (
        <p className="card">No question banks yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Bank</th>
              <th className="num">Questions</th>
              <th>Rated domains</th>
              <th className="num">Experts</th>
              <th className="num">Submitted ratings</th>
            </tr>
          </thead>
          <tbody>
            {banks.map((b) => (
              <tr key={b.id} data-bank={b.name}>
                <td>
                  <Link to={`/admin/mentat/${b.id}`}>{b.name}</Link>
                </td>
                <td className="num">{b.numQuestions}</td>
                <td>{b.preferenceDomains.join(", ") || "none"}</td>
                <td className="num">{b.numRaters}</td>
                <td className="num">
                  {b.numSubmitted} / {b.numRated * b.numRaters}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

/** The review sets with their review progress. */
export function ReviewSetsTable({ sets }: { sets: ReturnType<typeof listReviewSets> }) {
  return (
    <>
      {sets.length === 0 ? (
        <p className="card">No review sets yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Set</th>
              <th className="num">Cases</th>
              <th className="num">Seeds</th>
              <th className="num">Experts</th>
              <th className="num">Submitted reviews</th>
            </tr>
          </thead>
          <tbody>
            {sets.map((s) => (
              <tr key={s.id} data-set={s.name}>
                <td>
                  <Link to={`/admin/case-review/${s.id}`}>{s.name}</Link>
                </td>
                <td className="num">{s.numCases}</td>
                <td className="num">{s.numSeeds}</td>
                <td className="num">{s.numRaters}</td>
                <td className="num">
                  {s.numSubmitted} / {(s.numCases + s.numSeeds) * s.numRaters}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

/** Importing a MENTAT question bank. */
export function BankImportForm({ result, busy }: { result: ExpertImportResult | undefined; busy: boolean }) {
  return (
    <Form method="post" encType="multipart/form-data" className="card">
      <Csrf />
      <h3 style={{ marginTop: 0 }}>Import a question bank</h3>
      <p className="muted">
        CSV with id, domain, question (gender alternatives as {"{he/she/they}"}) or he / she / they, options a–e, answer
        (letter), notes; placeholders &lt;AGE&gt; and &lt;NAT&gt;. Validated whole; re-importing updates by id.
      </p>
      <label htmlFor="bank-name">Bank name</label>
      <input id="bank-name" name="name" type="text" required />
      <label htmlFor="bank-file">File</label>
      <input id="bank-file" name="file" type="file" accept=".csv,text/csv" required />
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
      <p>
        <button type="submit" name="intent" value="bank" disabled={busy}>
          Import questions
        </button>
      </p>
      <Issues result={result} intent="bank" />
    </Form>
  );
}

/** Importing a MentalBench review set. */
export function ReviewSetImportForm({ result, busy }: { result: ExpertImportResult | undefined; busy: boolean }) {
  return (
    <Form method="post" encType="multipart/form-data" className="card">
      <Csrf />
      <h3 style={{ marginTop: 0 }}>Import a review set</h3>
      <p className="muted">
        CSV with id, text, kind (case or seed), and optionally case_type (I–IV), diagnosis, seed_id.
      </p>
      <label htmlFor="set-name">Set name</label>
      <input id="set-name" name="name" type="text" required />
      <label htmlFor="set-file">File</label>
      <input id="set-file" name="file" type="file" accept=".csv,text/csv" required />
      <p>
        <button type="submit" name="intent" value="set" disabled={busy}>
          Import cases
        </button>
      </p>
      <Issues result={result} intent="set" />
    </Form>
  );
}
