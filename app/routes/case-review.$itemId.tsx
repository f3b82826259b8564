import type { ActionFunctionArgs, LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import styles from "~/expert-panel/ui/expert-ratings.css?url";
import { workspaceAction, workspaceLoader } from "~/work-items/workspace-route.server";
import { getRaterItem, ReviewValuesSchema, saveReview } from "~/case-review/case-review.server";
import { WorkspacePage } from "~/work-items/ui/workspace-page";
import { reviewWorkspace } from "~/case-review/ui/review-workspace";

export const meta: MetaFunction = () => [{ title: "Review a case · Concord" }];
// A failed save keeps the workspace (and the draft) on screen: docs/architecture.md, "Saving under load".
export { clientAction, headers, shouldRevalidate } from "~/work-items/ui/save-action";
export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];

export const loader = ({ request, params }: LoaderFunctionArgs) =>
  workspaceLoader(request, "rater", params.itemId, {
    find: (db, userId, itemId) => getRaterItem(db, { userId, itemId }),
    guidelines: "case_review",
    itemId: (view) => view.item.id,
  });

export const action = ({ request, params }: ActionFunctionArgs) =>
  workspaceAction(request, "rater", params.itemId, {
    schema: ReviewValuesSchema,
    maxLength: 50_000,
    report: "message",
    save: (db, { id: itemId, ...input }) => saveReview(db, { ...input, itemId }),
  });

export default function ReviewItem() {
  return <WorkspacePage definition={reviewWorkspace} view={useLoaderData<typeof loader>()} />;
}
