import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { workspaceAction, workspaceLoader } from "~/work-items/workspace-route.server";
import { getReviewEntry, saveVoteDraft, submitVote, VoteValuesSchema } from "~/screening/screening-review.server";
import { WorkspacePage } from "~/work-items/ui/workspace-page";
import { voteWorkspace } from "~/screening/ui/vote-workspace";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `Item ${data?.entry.position ?? ""} · Screening review · Concord` },
];
// A failed save keeps the workspace (and the draft) on screen: docs/architecture.md, "Saving under load".
export { clientAction, headers, shouldRevalidate } from "~/work-items/ui/save-action";

/**
 * The reviewer's item. The service's projection is the blinding: it returns the item's messages and the reviewer's
 * own vote, never control status, screen labels, rubrics or other reviewers' votes. Not theirs → 404.
 */
export const loader = ({ request, params }: LoaderFunctionArgs) =>
  workspaceLoader(request, "rater", params.entryId, {
    find: (db, userId, entryId) => getReviewEntry(db, { userId, entryId }),
    guidelines: "screening_vote",
    itemId: (view) => view.entry.id,
  });

export const action = ({ request, params }: ActionFunctionArgs) =>
  workspaceAction(request, "rater", params.entryId, {
    schema: VoteValuesSchema,
    maxLength: 100_000,
    save: (db, { id: entryId, intent, ...input }) =>
      (intent === "draft" ? saveVoteDraft : submitVote)(db, { ...input, entryId }),
  });

export default function ReviewItem() {
  return <WorkspacePage definition={voteWorkspace} view={useLoaderData<typeof loader>()} />;
}
