import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Link, useActionData, useLoaderData } from "@remix-run/react";
import { z } from "zod";
import { requireForm, requireRole } from "~/accounts/guard.server";
import { importFromPage, listEvaluations, runsRoot, studyChoices } from "~/evaluation/evaluations.server";
import { ImportForm, ImportResultView } from "~/evaluation/ui/import-form";
import { getDb } from "~/platform/db.server";
import { ServiceError } from "~/platform/service-error";
import { Time } from "~/ui/time";

export const meta: MetaFunction = () => [{ title: "Evaluations · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const db = getDb();
  return { evaluations: listEvaluations(db), root: runsRoot(), studies: studyChoices(db) };
}

const FormSchema = z.object({
  intent: z.enum(["preview", "import"]),
  name: z.string().trim().min(1).max(256),
  gold: z.string().min(1).max(4096),
  study: z.string().regex(/^\d*$/),
  runs: z.string().min(1).max(20_000),
});

export async function action({ request }: ActionFunctionArgs) {
  const user = await requireRole(request, "admin");
  const form = await requireForm(request, user);
  const parsed = FormSchema.safeParse(Object.fromEntries(form));
  if (!parsed.success) return { error: "Give the evaluation's name, its gold labels and at least one run folder." };
  const { intent, name, gold, study, runs } = parsed.data;
  try {
    const result = importFromPage(getDb(), {
      evaluation: name,
      runs,
      gold,
      studyId: study ? Number(study) : null,
      dryRun: intent === "preview",
      actor: user.id,
    });
    if (intent === "import" && result.problems.length === 0 && result.evaluationId !== null)
      return redirect(`/admin/evaluations/${result.evaluationId}`);
    return result;
  } catch (e) {
    if (e instanceof ServiceError) return { error: e.message };
    throw e;
  }
}

export default function Evaluations() {
  const { evaluations, root, studies } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  return (
    <section>
      <h1>Evaluations</h1>
      <p className="muted">
        Safe-Psych runs (model × strategy × seed) scored against gold labels: the paper&apos;s tables, the same numbers{" "}
        <code>concord metrics</code> prints, and every case step by step (docs/evaluation.md).
      </p>
      {evaluations.length === 0 ? (
        <p className="card">No evaluations yet. Import run folders below or with `concord eval-import`.</p>
      ) : (
        <table data-testid="evaluations">
          <thead>
            <tr>
              <th>Evaluation</th>
              <th>Study</th>
              <th className="num">Gold cases</th>
              <th className="num">Runs</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            {evaluations.map((e) => (
              <tr key={e.id}>
                <td>
                  <Link to={`/admin/evaluations/${e.id}`}>{e.name}</Link>
                </td>
                <td>{e.studyName ?? "—"}</td>
                <td className="num">{e.cases}</td>
                <td className="num">{e.runs}</td>
                <td>
                  <Time at={e.createdAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>New evaluation</h2>
      <ImportResultView result={result} />
      <ImportForm root={root} evaluation={null} studies={studies} />
    </section>
  );
}
