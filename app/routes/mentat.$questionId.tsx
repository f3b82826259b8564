import type { ActionFunctionArgs, LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import styles from "~/expert-panel/ui/expert-ratings.css?url";
import { workspaceAction, workspaceLoader } from "~/work-items/workspace-route.server";
import { getRaterQuestion, OptionRatingSchema, saveOptionRating } from "~/mentat/ratings.server";
import { WorkspacePage } from "~/work-items/ui/workspace-page";
import { optionRatingWorkspace } from "~/mentat/ui/option-rating-workspace";

export const meta: MetaFunction = () => [{ title: "Rate answer options · Concord" }];
// A failed save keeps the workspace (and the draft) on screen: docs/architecture.md, "Saving under load".
export { clientAction, headers, shouldRevalidate } from "~/work-items/ui/save-action";
export const links: LinksFunction = () => [{ rel: "stylesheet", href: styles }];

// A question that is not this expert's (or no question at all) answers 404: ids reveal nothing.
export const loader = ({ request, params }: LoaderFunctionArgs) =>
  workspaceLoader(request, "rater", params.questionId, {
    find: (db, userId, questionId) => getRaterQuestion(db, { userId, questionId }),
    guidelines: "mentat_rating",
    itemId: (view) => view.question.id,
  });

export const action = ({ request, params }: ActionFunctionArgs) =>
  workspaceAction(request, "rater", params.questionId, {
    schema: OptionRatingSchema,
    maxLength: 50_000,
    report: "message",
    save: (db, { id: questionId, ...input }) => saveOptionRating(db, { ...input, questionId }),
  });

export default function RateQuestion() {
  return <WorkspacePage definition={optionRatingWorkspace} view={useLoaderData<typeof loader>()} />;
}
