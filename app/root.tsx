import type { LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import {
  Form,
  isRouteErrorResponse,
  Link,
  Links,
  Meta,
  NavLink,
  Outlet,
  Scripts,
  ScrollRestoration,
  useRouteError,
  useLocation,
} from "@remix-run/react";
import { useEffect } from "react";
import { getUser } from "./accounts/guard.server";
import { useNonce } from "./nonce";
import { isBusyAnswer } from "./platform/busy-answer";
import { BusyPage, RememberSubmissions } from "./ui/busy-page";
import { Csrf, useRootData, type RootData } from "./ui/root-data";
import { skipRevalidationAfterDraft } from "./work-items/ui/should-revalidate";
import styles from "./styles.css?url";
import type { Role } from "./accounts/roles";

export const links: LinksFunction = () => [
  { rel: "stylesheet", href: styles },
  { rel: "icon", href: "/favicon.svg", type: "image/svg+xml" },
];
export const meta: MetaFunction = () => [{ title: "Concord" }];

// The signed-in user does not change with a draft autosave of a workspace.
export const shouldRevalidate = skipRevalidationAfterDraft;

export async function loader({ request }: LoaderFunctionArgs) {
  const user = await getUser(request);
  return {
    user: user && { username: user.username, displayName: user.displayName, roles: user.roles, csrf: user.csrf },
  } satisfies RootData;
}

function Header() {
  const data = useRootData();
  const user = data?.user;
  // "Studies" covers the annotation studies' pages, not the other admin areas that also live under /admin.
  const studiesActive = /^\/admin(\/(studies|import|cases)(\/|$)|\/?$)/.test(useLocation().pathname);
  return (
    <header className="topbar">
      <Link to="/" className="brand">
        Concord
      </Link>
      {user ? (
        <nav aria-label="Main">
          {user.roles.includes("annotator") && <NavLink to="/annotate">Annotate</NavLink>}
          {user.roles.includes("adjudicator") && <NavLink to="/adjudicate">Adjudicate</NavLink>}
          {user.roles.includes("rater") && <NavLink to="/judge-validation">Rate responses</NavLink>}
          {user.roles.includes("rater") && <NavLink to="/screening">Screening review</NavLink>}
          {user.roles.includes("rater") && <NavLink to="/expert-ratings">Expert ratings</NavLink>}
          {user.roles.includes("admin") && (
            <NavLink to="/admin" className={() => (studiesActive ? "active" : "")}>
              Studies
            </NavLink>
          )}
          {user.roles.includes("admin") && <NavLink to="/admin/judge-validation">Judges</NavLink>}
          {user.roles.includes("admin") && <NavLink to="/admin/screening">Screening</NavLink>}
          {user.roles.includes("admin") && <NavLink to="/admin/expert-ratings">Experts</NavLink>}
          {user.roles.includes("admin") && <NavLink to="/admin/evaluations">Evaluations</NavLink>}
          {user.roles.includes("admin") && <NavLink to="/admin/mc-evaluation">Model evaluation</NavLink>}
          {user.roles.includes("admin") && <NavLink to="/admin/grading">Grading</NavLink>}
          {user.roles.includes("admin") && <NavLink to="/admin/users">Users</NavLink>}
          <NavLink to="/help">Help</NavLink>
        </nav>
      ) : null}
      {user ? (
        <Form method="post" action="/logout" className="who">
          <Link to="/account" title="Your account: password, second factor, sessions">
            {user.displayName} <small>({user.roles.join(", ")})</small>
          </Link>
          <Csrf />
          <button type="submit" className="link">
            Log out
          </button>
        </Form>
      ) : null}
    </header>
  );
}

export function Layout({ children }: { children: React.ReactNode }) {
  const nonce = useNonce();
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <Meta />
        <Links />
      </head>
      <body>
        <RememberSubmissions>
          <Header />
          <main>{children}</main>
        </RememberSubmissions>
        <ScrollRestoration nonce={nonce} />
        <Scripts nonce={nonce} />
      </body>
    </html>
  );
}

export default function App() {
  // Marks the page as interactive, so browser tests (and people with slow connections) know the keys work.
  useEffect(() => {
    document.documentElement.dataset.hydrated = "true";
  }, []);
  return <Outlet />;
}

/** The list of the protocol an address belongs to (its first path segment), for the error page's first link. */
const LIST_OF_PREFIX: Record<string, { to: string; label: string; role: Role }> = {
  annotate: { to: "/annotate", label: "My cases", role: "annotator" },
  adjudicate: { to: "/adjudicate", label: "Adjudication queue", role: "adjudicator" },
  "judge-validation": { to: "/judge-validation", label: "My responses", role: "rater" },
  screening: { to: "/screening", label: "Screening review", role: "rater" },
  "expert-ratings": { to: "/expert-ratings", label: "Expert ratings", role: "rater" },
  mentat: { to: "/expert-ratings", label: "Expert ratings", role: "rater" },
  "case-review": { to: "/expert-ratings", label: "Expert ratings", role: "rater" },
};

/**
 * Where a user can go from an error page: the list of the protocol of the address (a missing screening item offers
 * the screening list), else their own start page by role (the header above keeps the full menu).
 */
function ErrorLinks() {
  const user = useRootData()?.user;
  const { pathname } = useLocation();
  const ofUrl = LIST_OF_PREFIX[pathname.split("/")[1] ?? ""];
  const home =
    ofUrl && user?.roles.includes(ofUrl.role)
      ? ofUrl
      : user?.roles.includes("admin")
        ? { to: "/admin", label: "Studies" }
        : user?.roles.includes("annotator")
          ? { to: "/annotate", label: "My cases" }
          : user?.roles.includes("adjudicator")
            ? { to: "/adjudicate", label: "Adjudication queue" }
            : user?.roles.includes("rater")
              ? { to: "/expert-ratings", label: "Expert ratings" }
              : null;
  return (
    <nav aria-label="Error page">
      <ul className="error-links">
        {home ? (
          <li>
            <Link to={home.to}>{home.label}</Link>
          </li>
        ) : null}
        <li>
          <Link to="/">Start page</Link>
        </li>
        {user ? null : (
          <li>
            <Link to="/login">Log in</Link>
          </li>
        )}
      </ul>
    </nav>
  );
}

/** A fetch that never reached the server throws a TypeError ("Failed to fetch", "NetworkError…", "Load failed"). */
function isUnreachable(error: unknown): boolean {
  if (typeof navigator !== "undefined" && navigator.onLine === false) return true;
  return error instanceof TypeError && /fetch|network|load failed/i.test(error.message);
}

export function ErrorBoundary() {
  const error = useRouteError();
  // Another process (an import, a backup) holds the database's write lock: nothing was written, try again.
  if (isRouteErrorResponse(error) && error.status === 503 && isBusyAnswer(error.data))
    return <BusyPage answer={error.data} links={<ErrorLinks />} />;
  if (isRouteErrorResponse(error)) {
    const title = error.status === 403 ? "Forbidden" : error.status === 404 ? "Not found" : error.statusText || "Error";
    return (
      <section className="error-page card">
        <h1>
          {error.status} {title}
        </h1>
        <p>
          {typeof error.data === "string" && error.data
            ? error.data
            : error.status === 404
              ? "There is no page at this address."
              : "Something went wrong."}
        </p>
        <ErrorLinks />
      </section>
    );
  }
  // A page that could not be loaded because the server was unreachable (the network gone, the server restarting):
  // not an error of Concord's, and nothing was lost.
  if (isUnreachable(error)) {
    return (
      <section className="error-page card" data-testid="unreachable">
        <h1>The server could not be reached</h1>
        <p>
          This page could not be loaded: the network or the server is down. Nothing you saved before this was lost.
          Check the connection, then reload the page.
        </p>
        <ErrorLinks />
      </section>
    );
  }
  return (
    <section className="error-page card">
      <h1>500 Unexpected error</h1>
      <p>Concord hit an error it did not expect. Nothing you saved before this was lost. Reload the page to go on.</p>
      <ErrorLinks />
    </section>
  );
}
