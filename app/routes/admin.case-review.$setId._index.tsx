import type { ActionFunctionArgs, LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { z } from "zod";
import { DimensionReport, ItemsTable, SeedsReport } from "~/case-review/ui/review-set-sections";
import { ExpertAdminHead, ExpertPanel } from "~/expert-panel/ui/expert-panel";
import styles from "~/expert-panel/ui/expert-ratings.css?url";
import { getDb } from "~/platform/db.server";
import { parseIntent } from "~/platform/intent";
import { requireById, requireForm, requireRole } from "~/accounts/guard.server";
import { changeReviewPanel, getReviewReport, getReviewSet, listReviewPanel } from "~/case-review/case-review.server";
import { reviewItemsWindow, reviewSeedsWindow } from "~/case-review/review-windows.server";

import { guidelinesAdmin } from "~/guidelines/guidelines.server";
import { GuidelinesEditor } from "~/guidelines/ui/guidelines-editor";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `${data?.set.name ?? "Review set"} · Concord` },
];
export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];

function setOr404(param: string | undefined) {
  return requireById(param, (id) => getReviewSet(getDb(), id), "No such review set.");
}

export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const set = setOr404(params.setId);
  const db = getDb();
  const url = new URL(request.url);
  const weights = url.searchParams.get("weights") === "linear" ? "linear" : "quadratic";
  const full = getReviewReport(db, set.id, { weights });
  // The seeds' outcomes as a window of their own (prefix s_), read by keyset from the set's seeds.
  const seeds = reviewSeedsWindow(db, set.id, url.searchParams);
  return {
    set,
    seeds,
    accepted: full.acceptedSeeds.length,
    // One window of the items, as the URL asks (docs/architecture.md, "Pages are windows").
    items: reviewItemsWindow(db, set, url.searchParams),
    panel: listReviewPanel(db, set.id),
    report: { ...full, seeds: [], acceptedSeeds: [] },
    guidelines: guidelinesAdmin(db, { scope: "review_set", scopeId: set.id }),
  };
}

const ActionSchema = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal(["add_rater", "remove_rater"]), raterId: z.string().min(1, "Choose an expert.") }),
]);

export async function action({ request, params }: ActionFunctionArgs) {
  const me = await requireRole(request, "admin");
  const form = await requireForm(request, me);
  const set = setOr404(params.setId);
  const parsed = parseIntent(form, ActionSchema);
  if (!parsed.ok) return { ok: false as const, message: parsed.message };
  return changeReviewPanel(getDb(), { id: set.id, ...parsed.data, actorId: me.id });
}

export default function ReviewSetPage() {
  const { set, items, panel, report, seeds, accepted, guidelines } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const busy = useNavigation().state !== "idle";
  return (
    <section>
      <ExpertAdminHead
        name={set.name}
        result={result}
        aside={
          <a
            className="button secondary"
            href={`/admin/case-review/${set.id}/report.json?weights=${report.weights}`}
            download
          >
            Report (JSON)
          </a>
        }
      />

      <h2>Experts</h2>
      <ExpertPanel
        panel={panel}
        total={set.numCases + set.numSeeds}
        busy={busy}
        emptyText="Nobody reviews this set yet."
        everyoneText="Every active user with the rater role is on the panel."
      />

      <h2>Quality of the generated cases</h2>
      <DimensionReport report={report} />

      <h2>Seeds</h2>
      <SeedsReport report={report} seeds={seeds} accepted={accepted} />

      <GuidelinesEditor guidelines={guidelines} />

      <h2>Items ({set.numCases + set.numSeeds})</h2>
      <ItemsTable items={items} />
    </section>
  );
}
