import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { workspaceAction, workspaceLoader } from "~/work-items/workspace-route.server";
import {
  getRaterItem,
  raterGuide,
  RatingValuesSchema,
  saveRatingDraft,
  submitRating,
} from "~/judge-validation/judge-ratings.server";
import { WorkspacePage } from "~/work-items/ui/workspace-page";
import { ratingWorkspace } from "~/judge-validation/ui/rating-workspace";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `${data?.item.annotationId ?? "Response"} · Rate · Concord` },
];
// A failed save keeps the workspace (and the draft) on screen: docs/architecture.md, "Saving under load".
export { clientAction, headers, shouldRevalidate } from "~/work-items/ui/save-action";

/**
 * Blinding (docs/architecture.md, "Roles and blinding"): the loader returns the response text, the rater's own labels and the judge prompt's guide —
 * nothing else. getRaterItem selects exactly those columns; an item not assigned to this rater answers 404.
 */
export const loader = async ({ request, params }: LoaderFunctionArgs) => ({
  ...(await workspaceLoader(request, "rater", params.itemId, {
    find: (db, raterId, itemId) => getRaterItem(db, { raterId, itemId }),
    guidelines: "judge_rating",
    itemId: (view) => view.item.id,
  })),
  guide: raterGuide(),
});

export const action = ({ request, params }: ActionFunctionArgs) =>
  workspaceAction(request, "rater", params.itemId, {
    schema: RatingValuesSchema,
    maxLength: 50_000,
    save: (db, { userId: raterId, id: itemId, intent, ...input }) =>
      (intent === "draft" ? saveRatingDraft : submitRating)(db, { ...input, raterId, itemId }),
  });

export default function RateItem() {
  return <WorkspacePage definition={ratingWorkspace} view={useLoaderData<typeof loader>()} />;
}
