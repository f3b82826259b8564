import type { ActionFunctionArgs, LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { z } from "zod";
import styles from "~/preparation/ui/preparation.css?url";
import { getDb } from "~/platform/db.server";
import { decodeImportBytes, importLimits, refusalLine } from "~/formats/import-contract";
import { requireForm, requireRole } from "~/accounts/guard.server";
import { formatOf } from "~/annotation/public";
import { Csrf } from "~/ui/root-data";
import { Time } from "~/ui/time";
import { importPreparationNotes, listProjects } from "~/preparation/public.server";
import { DEFAULT_SETTINGS, parseListFile, parseScoreTable } from "~/preparation/public";

export const meta: MetaFunction = () => [{ title: "Preparation projects · Concord" }];
export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];

/** Admins only: the projects hold source text (docs/security.md, "Source text"). */
export async function loader({ request }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  return { projects: listProjects(getDb()) };
}

const ImportSchema = z.object({
  name: z.string(),
  language: z.string(),
  places: z.string().max(1_000_000).default(""),
  names: z.string().max(1_000_000).default(""),
  institutions: z.string().max(1_000_000).default(""),
});

interface ImportAnswer {
  message: string;
  issues: string[];
}

export async function action({ request }: ActionFunctionArgs): Promise<ImportAnswer> {
  const user = await requireRole(request, "admin");
  const form = await requireForm(request, user);
  const parsed = ImportSchema.safeParse(
    Object.fromEntries([...form.entries()].filter(([, v]) => typeof v === "string")),
  );
  if (!parsed.success) return { message: "The form could not be read.", issues: [] };
  const file = form.get("file");
  if (!(file instanceof File) || file.size === 0) return { message: "Choose a CSV or JSONL file.", issues: [] };
  const format = formatOf(file.name);
  if (!format) return { message: `Name the file .csv or .jsonl ("${file.name}").`, issues: [] };
  // The import contract (docs/reliability.md, "The import contract"), before a row is read.
  const decoded = decodeImportBytes(new Uint8Array(await file.arrayBuffer()), importLimits("preparation"), {
    json: format === "jsonl",
  });
  if ("problem" in decoded)
    return { message: "1 problem; nothing was imported.", issues: [refusalLine(file.name, decoded.problem)] };
  const settings = {
    ...DEFAULT_SETTINGS,
    places: parseListFile(parsed.data.places),
    names: parseListFile(parsed.data.names),
    institutions: parseListFile(parsed.data.institutions),
  };
  const table = form.get("scoreTable");
  if (table instanceof File && table.size > 0) {
    const t = decodeImportBytes(new Uint8Array(await table.arrayBuffer()), importLimits("preparation"), {
      json: false,
    });
    if ("problem" in t)
      return { message: "1 problem; nothing was imported.", issues: [refusalLine(table.name, t.problem)] };
    const scores = parseScoreTable(t.text);
    if (scores.errors.length)
      return {
        message: `${scores.errors.length} problem(s) in the score table; nothing was imported.`,
        issues: scores.errors.map((e) => refusalLine(table.name, e)),
      };
    settings.scoreTable = scores.table;
  }
  const r = importPreparationNotes(getDb(), {
    projectName: parsed.data.name,
    language: parsed.data.language,
    text: decoded.text,
    filename: file.name,
    settings,
    actorId: user.id,
  });
  if (!r.ok)
    return {
      message: `${r.errors.length} problem(s); nothing was imported.`,
      issues: r.errors.map((e) => refusalLine(file.name, e)),
    };
  throw redirect(`/admin/preparation/${r.projectId}?imported=${r.notes}`);
}

export default function PreparationAdmin() {
  const { projects } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const busy = useNavigation().state !== "idle";
  return (
    <section>
      <h1>Preparation projects</h1>
      <p className="muted">
        Source-language notes reviewed for data minimisation before they are translated and annotated. Only admins and
        the reviewers a project names see its notes.
      </p>
      <div className="card table-wrap">
        {projects.length === 0 ? (
          <p className="muted">No preparation projects yet.</p>
        ) : (
          <table data-testid="prep-projects">
            <thead>
              <tr>
                <th>Project</th>
                <th>Language</th>
                <th className="num">Notes</th>
                <th>Reviewers</th>
                <th className="num">Submitted reviews</th>
                <th className="num">Excluded</th>
                <th>Created</th>
              </tr>
            </thead>
            <tbody>
              {projects.map((p) => (
                <tr key={p.id} data-project={p.name}>
                  <td>
                    <Link to={`/admin/preparation/${p.id}`}>{p.name}</Link>
                  </td>
                  <td>{p.sourceLanguage}</td>
                  <td className="num">{p.notes}</td>
                  <td>{p.reviewers.join(", ") || "—"}</td>
                  <td className="num">{p.submitted}</td>
                  <td className="num">{p.excluded}</td>
                  <td>
                    <Time at={p.createdAt} style="date" />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
      <Form method="post" encType="multipart/form-data" className="card">
        <Csrf />
        <h2 style={{ marginTop: 0 }}>New project</h2>
        <p className="muted">
          The notes in the case import&apos;s layout (CSV or JSONL: id, age_group, sex and the five sections). Validated
          whole: nothing is imported from a file with a problem.
        </p>
        <label htmlFor="prep-name">Project name</label>
        <input id="prep-name" name="name" type="text" required />
        <label htmlFor="prep-language">Source language (e.g. ro)</label>
        <input id="prep-language" name="language" type="text" required />
        <label htmlFor="prep-file">Notes file</label>
        <input id="prep-file" name="file" type="file" accept=".csv,.jsonl,text/csv" required />
        <label htmlFor="prep-places">Place names (one a line)</label>
        <textarea id="prep-places" name="places" rows={3} />
        <label htmlFor="prep-names">Person names (one a line)</label>
        <textarea id="prep-names" name="names" rows={3} />
        <label htmlFor="prep-institutions">Institution names (one a line)</label>
        <textarea id="prep-institutions" name="institutions" rows={3} />
        <label htmlFor="prep-scores">Score table (optional CSV: test, aliases, from, to)</label>
        <input id="prep-scores" name="scoreTable" type="file" accept=".csv,text/csv" />
        <p>
          <button type="submit" disabled={busy}>
            Create project
          </button>
        </p>
        {result ? (
          <div className="notice error" role="alert" data-testid="prep-import-result">
            <p>{result.message}</p>
            {result.issues.length ? (
              <ul>
                {result.issues.map((i) => (
                  <li key={i}>{i}</li>
                ))}
              </ul>
            ) : null}
          </div>
        ) : null}
      </Form>
    </section>
  );
}
