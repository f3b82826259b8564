import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { movedUrl } from "~/platform/moved-urls";

export const meta: MetaFunction = () => [{ title: "Not found · Concord" }];

/** Every URL no other route matches: a moved page is redirected to its new address, anything else is a 404. */
function answer(request: Request): never {
  const url = new URL(request.url);
  // Browsers ask for /favicon.ico whatever the page links; the icon is public/favicon.svg.
  if (url.pathname === "/favicon.ico") throw redirect("/favicon.svg", 301);
  const to = movedUrl(url.pathname, url.search);
  // 308 keeps the method, so a form posted from a page opened before the move still reaches its action.
  if (to) throw redirect(to, request.method === "GET" || request.method === "HEAD" ? 301 : 308);
  throw new Response("There is no page at this address.", { status: 404 });
}

export async function loader({ request }: LoaderFunctionArgs) {
  return answer(request);
}

export async function action({ request }: LoaderFunctionArgs) {
  return answer(request);
}

export default function NotFound() {
  return null;
}
