import { useFetchers, useLocation, useNavigation, useSubmit, type SubmitOptions } from "@remix-run/react";
import { useEffect, useState, type ReactNode } from "react";
import type { BusyAnswer } from "../platform/busy-answer";

/** The last form this page sent (navigation or fetcher), kept in memory only, so a refused one can be sent again. */
interface Submission {
  formData: FormData;
  options: SubmitOptions;
}

/**
 * In the browser only (set in an effect, never on the server): the layout is mounted anew when the error page
 * replaces the page, so the memory cannot live in a component.
 */
let lastSubmission: Submission | null = null;

/**
 * Remembers the form data of the page's last submission. The layout renders it around the page and the error page
 * alike, so the error page of a refused submission still has what was typed (docs/reliability.md, "Busy answers").
 */
export function RememberSubmissions({ children }: { children: ReactNode }) {
  const navigation = useNavigation();
  const fetchers = useFetchers();
  const pending = navigation.state === "submitting" ? navigation : fetchers.find((f) => f.state === "submitting");
  const formData = pending?.formData;
  const action = pending?.formAction;
  const method = pending?.formMethod;
  const encType = pending?.formEncType;
  useEffect(() => {
    if (formData && action && method)
      lastSubmission = { formData, options: { action, method: method.toLowerCase() as "post", encType } };
  }, [formData, action, method, encType]);
  return <>{children}</>;
}

/**
 * The page shown for a 503 answered because another process holds the database's write lock: it says that nothing
 * was saved or changed and offers to send the same form again (or to load the page again), with the error page's
 * links below.
 */
export function BusyPage({ answer, links }: { answer: BusyAnswer; links: ReactNode }) {
  const submit = useSubmit();
  const navigation = useNavigation();
  const { pathname, search } = useLocation();
  // Read after hydration only: the server's render and the first one in the browser must agree.
  const [resend, setResend] = useState<Submission | null>(null);
  useEffect(() => setResend(answer.during === "action" ? lastSubmission : null), [answer]);
  return (
    <section className="error-page card" data-testid="database-busy">
      <h1>The database is busy</h1>
      <p role="alert">{answer.message}</p>
      {resend ? (
        <p>
          What you entered is kept in this page.{" "}
          <button
            type="button"
            disabled={navigation.state !== "idle"}
            onClick={() => submit(resend.formData, resend.options)}
          >
            Send it again
          </button>
        </p>
      ) : (
        <p>
          <a href={pathname + search}>{answer.during === "action" ? "Go back to the page" : "Load the page again"}</a>
        </p>
      )}
      {links}
    </section>
  );
}
