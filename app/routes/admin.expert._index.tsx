import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { z } from "zod";
import { DEFAULT_PREFERENCE_DOMAINS, MENTAT_DOMAINS, type MentatDomain } from "~/expert-panel/domain/expert-scales";
import { getDb } from "~/platform/db.server";
import { parseIntent } from "~/platform/intent";
import { requireForm, requireRole } from "~/accounts/guard.server";
import { Csrf } from "~/root";
import { importReviewSet, listReviewSets } from "~/case-review/case-review.server";
import { importQuestionBank, listBanks } from "~/mentat/mentat.server";

export const meta: MetaFunction = () => [{ title: "Expert ratings · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  return { banks: listBanks(db), sets: listReviewSets(db) };
}

const ImportSchema = z.discriminatedUnion("intent", [
  z.object({
    intent: z.literal(["bank", "set"]),
    name: z.string().trim().min(1, "Give the bank or set a name."),
    // An empty seed field means "no seed given", not 0.
    seed: z.preprocess(
      (v) => (v === "" ? undefined : v),
      z.coerce
        .number()
        .int()
        .min(0)
        .max(2 ** 31 - 1)
        .optional(),
    ),
    domains: z.array(z.enum(MENTAT_DOMAINS)).default([]),
  }),
]);

type ActionResult = { intent: "bank" | "set"; message: string; issues: { line: number; message: string }[] };

export async function action({ request }: ActionFunctionArgs) {
  const user = await requireRole(request, "admin");
  const form = await requireForm(request, user);
  const parsed = parseIntent(form, ImportSchema, { arrays: ["domains"] });
  if (!parsed.ok) return { intent: parsed.intent, message: parsed.message, issues: [] } satisfies ActionResult;
  const intent = parsed.data.intent;
  const file = form.get("file");
  if (!(file instanceof File) || file.size === 0)
    return { intent, message: "Choose a CSV file.", issues: [] } satisfies ActionResult;
  const text = await file.text();
  const db = getDb();
  if (parsed.data.intent === "bank") {
    const r = importQuestionBank(db, {
      bankName: parsed.data.name,
      text,
      actorId: user.id,
      preferenceDomains: parsed.data.domains as MentatDomain[],
      seed: parsed.data.seed,
    });
    if (!r.ok)
      return {
        intent,
        message: `${r.errors.length} problem(s); nothing was imported.`,
        issues: r.errors,
      } satisfies ActionResult;
    throw redirect(`/admin/expert/mentat/${r.bankId}?imported=${r.created}-${r.updated}-${r.unchanged}`);
  }
  const r = importReviewSet(db, { setName: parsed.data.name, text, actorId: user.id });
  if (!r.ok)
    return {
      intent,
      message: `${r.errors.length} problem(s); nothing was imported.`,
      issues: r.errors,
    } satisfies ActionResult;
  throw redirect(`/admin/expert/cases/${r.setId}?imported=${r.created}-${r.updated}-${r.unchanged}`);
}

function Issues({ result, intent }: { result: ActionResult | undefined; intent: "bank" | "set" }) {
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

export default function ExpertAdmin() {
  const { banks, sets } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const busy = useNavigation().state !== "idle";
  return (
    <section>
      <h1>Expert ratings</h1>
      <p className="muted">
        MENTAT question banks (experts rate every answer option 0–100; hierarchical Bradley–Terry preference labels) and
        MentalBench review sets (experts rate generated cases on three 5-point scales and accept or reject seeds).
      </p>
      <h2>Question banks</h2>
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
                  <Link to={`/admin/expert/mentat/${b.id}`}>{b.name}</Link>
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
      <h2>Review sets</h2>
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
                  <Link to={`/admin/expert/cases/${s.id}`}>{s.name}</Link>
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
      <div className="grid2" style={{ marginTop: "1.5rem" }}>
        <Form method="post" encType="multipart/form-data" className="card">
          <Csrf />
          <h3 style={{ marginTop: 0 }}>Import a question bank</h3>
          <p className="muted">
            CSV with id, domain, question (gender alternatives as {"{he/she/they}"}) or he / she / they, options a–e,
            answer (letter), notes; placeholders &lt;AGE&gt; and &lt;NAT&gt;. Validated whole; re-importing updates by
            id.
          </p>
          <label htmlFor="bank-name">Bank name</label>
          <input id="bank-name" name="name" type="text" required />
          <label htmlFor="bank-file">File</label>
          <input id="bank-file" name="file" type="file" accept=".csv,text/csv" required />
          <fieldset>
            <legend>Domains labelled by expert preference (rated by the experts)</legend>
            {MENTAT_DOMAINS.map((d) => (
              <label key={d} className="inline">
                <input
                  type="checkbox"
                  name="domains"
                  value={d}
                  defaultChecked={DEFAULT_PREFERENCE_DOMAINS.includes(d)}
                />{" "}
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
      </div>
    </section>
  );
}
