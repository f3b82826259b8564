import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { z } from "zod";
import { getDb } from "~/platform/db.server";
import { requireForm, requireRole } from "~/accounts/guard.server";
import { issueLines } from "~/cli/io";
import { decodeImportBytes, importLimits, refusalLine } from "~/formats/import-contract";
import { parseIntent } from "~/platform/intent";
import { ServiceError } from "~/platform/service-error";
import { gradingSetsWindow, importEvalSet, type GradingSetRow } from "~/rubric-grading/sets.server";
import { columnHelper } from "~/ui/data-table";
import { CommandLines } from "~/ui/command-lines";
import { Csrf } from "~/ui/root-data";
import { WindowTable } from "~/ui/window-table";

export const meta: MetaFunction = () => [{ title: "Rubric grading · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  // One window of the sets, as the URL asks (docs/architecture.md, "Pages are windows").
  return { sets: gradingSetsWindow(getDb(), new URL(request.url).searchParams) };
}

const ImportSchema = z.discriminatedUnion("intent", [
  z.object({
    intent: z.literal(["check_set", "import_set"]),
    name: z.string().trim().min(1, "Give the set a name.").max(100),
  }),
]);

/**
 * Imports an evaluation set from an uploaded file, as `grade-import` does (docs/rubric-grading.md, "Evaluation
 * sets"): the import contract first, then the whole file checked; *Check* is the command's --dry-run. The answer is
 * the command's lines: `FILE:LINE: reason` for each refused line, `warning: FILE:LINE: …`, and its summary.
 */
export async function action({ request }: ActionFunctionArgs) {
  const me = await requireRole(request, "admin");
  const form = await requireForm(request, me);
  const parsed = parseIntent(form, ImportSchema);
  if (!parsed.ok) return { ok: false as const, summary: parsed.message, lines: [] };
  const file = form.get("file");
  if (!(file instanceof File) || file.size === 0)
    return { ok: false as const, summary: "Choose a JSONL file.", lines: [] };
  const decoded = decodeImportBytes(new Uint8Array(await file.arrayBuffer()), importLimits("grading"), {
    json: true,
  });
  if ("problem" in decoded)
    return { ok: false as const, summary: "Nothing was written.", lines: [refusalLine(file.name, decoded.problem)] };
  const dryRun = parsed.data.intent === "check_set";
  try {
    const r = importEvalSet(getDb(), { name: parsed.data.name, text: decoded.text, dryRun });
    const lines = [
      ...issueLines(r.errors, { file: file.name }),
      ...issueLines(r.warnings, { file: file.name, kind: "warning" }),
    ];
    if (r.errors.length)
      return {
        ok: false as const,
        summary: `${r.errors.length} bad line${r.errors.length === 1 ? "" : "s"} in ${file.name}; nothing was written.`,
        lines,
      };
    return {
      ok: true as const,
      summary:
        `${r.records} conversations; content sha256 ${r.contentSha256}. ` +
        (dryRun
          ? "Dry run: nothing was written."
          : r.unchanged
            ? "Already imported: nothing changed."
            : `Imported as "${parsed.data.name}".`),
      lines,
    };
  } catch (e) {
    if (e instanceof ServiceError) return { ok: false as const, summary: e.message, lines: [] };
    throw e;
  }
}

const col = columnHelper<GradingSetRow>();
const columns = [
  col.accessor("name", {
    id: "name",
    header: "Set",
    cell: (info) => <Link to={`/admin/grading/${info.row.original.id}`}>{info.getValue()}</Link>,
  }),
  col.accessor("conversations", { header: "Conversations" }),
  col.accessor((s) => s.subsets.join(", ") || "—", { id: "subsets", header: "Subsets" }),
];

export default function GradingSets() {
  const { sets } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const busy = useNavigation().state !== "idle";
  return (
    <section>
      <h1>Rubric grading</h1>
      <p className="muted">
        Candidate models answer each conversation of an evaluation set; a panel of judges grades every rubric criterion
        with HealthBench's grader. Sets come from the grade-import command; responses and verdicts from the grade-*
        commands or a grading run started on <Link to="/admin/eval-jobs">Evaluation jobs</Link>
        (docs/rubric-grading.md).
      </p>
      {sets.total === 0 && sets.query.filters.q === "" ? (
        <p className="card">No evaluation sets yet. Import one below (or with the grade-import command).</p>
      ) : (
        <WindowTable
          window={sets}
          columns={columns}
          sortable={["name"]}
          noun="sets"
          testId="grading-sets"
          filterLabel="Set name starts with"
          rowProps={(s) => ({ "data-set": s.name })}
        />
      )}
      <Form method="post" encType="multipart/form-data" className="card stacked" aria-label="Import an evaluation set">
        <Csrf />
        <h2>Import an evaluation set</h2>
        <p className="muted">
          A HealthBench-format JSONL (prompt, prompt_id, rubrics, example_tags), e.g. a screening release&rsquo;s
          subset.jsonl. The whole file is checked first; a file with a bad line writes nothing.
        </p>
        <label>
          Name
          <input name="name" required />
        </label>
        <label>
          File
          <input type="file" name="file" accept=".jsonl,.json" required />
        </label>
        <button type="submit" name="intent" value="check_set" className="secondary" disabled={busy}>
          Check
        </button>{" "}
        <button type="submit" name="intent" value="import_set" disabled={busy}>
          Import
        </button>
        {result ? (
          <CommandLines ok={result.ok} summary={result.summary} lines={result.lines} testId="set-import" />
        ) : null}
      </Form>
    </section>
  );
}
