import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { notFound, requireUser } from "~/accounts/guard.server";
import { getGuidePage } from "~/help/guides.server";
import { HELP_PATH } from "~/work-items/domain/keymap";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.title ?? "Guide"} · Concord` }];

/** A user guide of docs/guides/, for every logged-in user (app/help/guides.server.ts). */
export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireUser(request);
  const page = getGuidePage(params.guide ?? "");
  if (!page) throw notFound("There is no such guide.");
  return page;
}

export default function Guide() {
  const page = useLoaderData<typeof loader>();
  return (
    <section>
      <p className="muted">
        <Link to={HELP_PATH}>Help</Link> › {page.title}
      </p>
      <article className="guide" data-guide={page.id} dangerouslySetInnerHTML={{ __html: page.html }} />
    </section>
  );
}
