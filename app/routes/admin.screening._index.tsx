import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { Csrf } from "~/ui/root-data";
import { RuleFields } from "~/screening/ui/rule-fields";
import { DEFAULT_RULE, DEFAULT_SCREENING_CATEGORIES } from "~/screening/domain/screening";
import { parseVocabulary } from "~/screening/domain/screening-import";
import { getDb } from "~/platform/db.server";
import { parseForm } from "~/platform/forms";
import { requireForm, requireRole } from "~/accounts/guard.server";
import { createScreeningStudy, NewScreeningStudySchema, type ScreeningStudyRow } from "~/screening/screening.server";
import { screeningStudiesWindow } from "~/screening/round-figures.server";
import { columnHelper } from "~/ui/data-table";
import { WindowTable } from "~/ui/window-table";
import { ServiceError } from "~/platform/service-error";
import { Time } from "~/ui/time";

export const meta: MetaFunction = () => [{ title: "Screening reviews · Concord" }];

export async function loader({ request }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  // One window of the studies, as the URL asks (docs/architecture.md, "Pages are windows").
  return { studies: await screeningStudiesWindow(getDb(), new URL(request.url).searchParams) };
}

export async function action({ request }: ActionFunctionArgs) {
  const me = await requireRole(request, "admin");
  const form = await requireForm(request, me);
  const parsed = parseForm(NewScreeningStudySchema, {
    name: form.get("name") ?? "",
    description: form.get("description") ?? "",
    categories: parseVocabulary(String(form.get("categories") ?? "")),
    reviewersPerRound: form.get("reviewersPerRound") ?? "",
    inclusionVotes: form.get("inclusionVotes") ?? "",
    controlThreshold: form.get("controlThreshold") ?? "",
    controlsPerRound: form.get("controlsPerRound") ?? "",
  });
  if (!parsed.ok) return { errors: parsed.errors };
  try {
    const { name, ...settings } = parsed.data;
    const study = createScreeningStudy(getDb(), { name, settings, actorId: me.id });
    return redirect(`/admin/screening/${study.id}`);
  } catch (e) {
    if (e instanceof ServiceError) return { errors: { [e.field ?? "_form"]: e.message } as Record<string, string> };
    throw e;
  }
}

const NEXT: Record<string, string> = {
  import_items: "import items",
  import_labels: "import screen labels",
  open_round: "open a round",
  in_review: "in review",
  import_tiers: "recall round due",
  final: "final",
};

function FieldError({ errors, name }: { errors?: Record<string, string>; name: string }) {
  return errors?.[name] ? (
    <p className="field-error" role="alert">
      {errors[name]}
    </p>
  ) : null;
}

const col = columnHelper<ScreeningStudyRow>();
const columns = [
  col.accessor("name", {
    id: "name",
    header: "Study",
    cell: (info) => <Link to={`/admin/screening/${info.row.original.id}`}>{info.getValue()}</Link>,
  }),
  col.accessor("items", { header: "Items" }),
  col.accessor("rounds", { header: "Rounds" }),
  col.accessor((s) => NEXT[s.next], { id: "state", header: "State" }),
  col.accessor("createdAt", {
    id: "created",
    header: "Created",
    cell: ({ getValue }) => <Time at={getValue()} style="date" />,
  }),
];

export default function ScreeningStudies() {
  const { studies } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const busy = useNavigation().state !== "idle";
  const errors = result?.errors;
  return (
    <section>
      <h1>Screening reviews</h1>
      <p className="muted">
        Clinicians check an automatic screen of a corpus in blinded rounds with concealed controls; the rate at which
        their majority includes controls estimates what the screen missed, and decides whether a recall round is needed
        (the HealthBench-Psych protocol).
      </p>
      {studies.total === 0 && studies.query.filters.q === "" ? (
        <p className="card">No screening studies yet. Create one below.</p>
      ) : (
        <WindowTable
          window={studies}
          columns={columns}
          sortable={["name"]}
          noun="studies"
          testId="screening-studies"
          filterLabel="Study name starts with"
          rowProps={(s) => ({ "data-study": s.name })}
        />
      )}

      <h2>New screening study</h2>
      <Form method="post" className="card">
        <Csrf />
        <FieldError errors={errors} name="_form" />
        <div className="grid2">
          <div>
            <label htmlFor="name">Name</label>
            <input id="name" name="name" type="text" required style={{ width: "100%" }} />
            <FieldError errors={errors} name="name" />
            <label htmlFor="description">Description (optional)</label>
            <input id="description" name="description" type="text" style={{ width: "100%" }} />
            <label htmlFor="categories">Category vocabulary, one per line</label>
            <textarea
              id="categories"
              name="categories"
              rows={10}
              defaultValue={DEFAULT_SCREENING_CATEGORIES.join("\n")}
            />
            <FieldError errors={errors} name="categories" />
          </div>
          <div>
            <RuleFields
              values={{ ...DEFAULT_RULE, controlsPerRound: 150 }}
              labels={{
                reviewersPerRound: { label: "Reviewers per round" },
                inclusionVotes: { label: "Include an item with at least this many relevant votes" },
                controlThreshold: { label: "Control-inclusion threshold (a rate above it opens a recall round)" },
                controlsPerRound: { label: "Concealed controls per round (default; set when opening a round)" },
              }}
              after={(name) => <FieldError errors={errors} name={name} />}
            />
          </div>
        </div>
        <p>
          <button type="submit" disabled={busy}>
            Create study
          </button>
        </p>
      </Form>
    </section>
  );
}
