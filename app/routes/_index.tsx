import type { LoaderFunctionArgs } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { requireUser } from "~/accounts/guard.server";
import { getDb } from "~/platform/db.server";
import { isNamedReviewer } from "~/preparation/public.server";
import { isModelReviewer, REVIEWER_ROLES } from "~/evaluation/model-review.server";

/** The start page: straight to the user's work when they have one role, a choice when they have several. */
export async function loader({ request }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  const places = [
    user.roles.includes("annotator") && { to: "/annotate", label: "Annotate notes", role: "annotator" },
    user.roles.includes("adjudicator") && {
      to: "/adjudicate",
      label: "Adjudicate disputed notes",
      role: "adjudicator",
    },
    user.roles.includes("rater") && { to: "/judge-validation", label: "Rate model responses", role: "rater" },
    user.roles.includes("rater") && { to: "/screening", label: "Review screening items", role: "rater" },
    user.roles.includes("rater") && {
      to: "/expert-ratings",
      label: "Rate answer options and generated cases (expert ratings)",
      role: "rater",
    },
    // Named by a review of model steps, while an annotator or adjudicator (docs/evaluation.md).
    REVIEWER_ROLES.some((r) => user.roles.includes(r)) &&
      isModelReviewer(getDb(), user.id) && {
        to: "/model-review",
        label: "Review model steps (evaluations)",
        role: "named reviewer",
      },
    // Named by a preparation project, whatever one's roles (docs/preparation.md).
    isNamedReviewer(getDb(), user.id) && {
      to: "/preparation",
      label: "Minimisation review of notes (preparation projects)",
      role: "named reviewer",
    },
    user.roles.includes("admin") && { to: "/admin", label: "Annotation studies (Safe-Psych protocol)", role: "admin" },
    user.roles.includes("admin") && { to: "/admin/judge-validation", label: "Judge validation sets", role: "admin" },
    user.roles.includes("admin") && { to: "/admin/screening", label: "Screening reviews", role: "admin" },
    user.roles.includes("admin") && {
      to: "/admin/expert-ratings",
      label: "Expert ratings and case reviews",
      role: "admin",
    },
    user.roles.includes("admin") && {
      to: "/admin/evaluations",
      label: "Safe-Psych evaluations (runs, metrics, cases step by step)",
      role: "admin",
    },
    user.roles.includes("admin") && {
      to: "/admin/mc-evaluation",
      label: "Model evaluation (multiple-choice reports)",
      role: "admin",
    },
    user.roles.includes("admin") && { to: "/admin/grading", label: "Rubric grading sets", role: "admin" },
    user.roles.includes("admin") && { to: "/admin/eval-jobs", label: "Evaluation jobs", role: "admin" },
    user.roles.includes("admin") && { to: "/admin/preparation", label: "Preparation projects", role: "admin" },
    user.roles.includes("admin") && { to: "/admin/users", label: "Users and roles", role: "admin" },
  ].filter(Boolean) as { to: string; label: string; role: string }[];
  if (places.length === 1) throw redirect(places[0]!.to);
  return { places, name: user.displayName };
}

export default function Index() {
  const { places, name } = useLoaderData<typeof loader>();
  return (
    <section>
      <h1>Welcome, {name}</h1>
      {places.length === 0 ? (
        <p className="notice" role="status">
          You have no role in Concord yet: an admin must grant you a role before you can work here. Once they have,
          reload this page.
        </p>
      ) : null}
      <ul>
        {places.map((p) => (
          <li key={p.to}>
            <Link to={p.to}>{p.label}</Link> <small>({p.role})</small>
          </li>
        ))}
      </ul>
    </section>
  );
}
