import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { invariantFound, notFound, requireUser } from "~/accounts/guard.server";
import { getDb } from "~/platform/db.server";
import { parseId } from "~/platform/forms";
import { preparationReport } from "~/preparation/public.server";

export const meta: MetaFunction = () => [{ title: "Preparation report · Concord" }];

/**
 * The preparation report (docs/preparation.md, "The report"): cases reviewed and excluded, decisions by category,
 * the back-translation scores and the mismatches found and corrected. Admins only; anyone else is answered 404.
 */
export async function loader({ request, params }: LoaderFunctionArgs) {
  const user = await requireUser(request);
  if (!user.roles.includes("admin")) throw notFound();
  const id = parseId(params.projectId);
  return { report: invariantFound(id === null ? null : preparationReport(getDb(), id)) };
}

const fix = (x: number | null, digits = 1) => (x === null ? "–" : x.toFixed(digits));

export default function PreparationReport() {
  const { report: r } = useLoaderData<typeof loader>();
  const base = `/admin/preparation/${r.project.id}`;
  const t = r.thresholds;
  const shown = (x: number | null) => (x === null ? "not checked" : String(x));
  return (
    <section data-testid="prep-report">
      <p>
        <Link to={base}>← {r.project.name}</Link>
      </p>
      <h1>
        Preparation report: {r.project.name} <small className="muted">({r.project.sourceLanguage})</small>
      </h1>
      <p className="row">
        <a href={`${base}/report.csv`} download>
          CSV
        </a>
        <a href={`${base}/report.svg`}>Chart (SVG)</a>
      </p>
      <div className="card table-wrap">
        <h2 style={{ marginTop: 0 }}>Cases</h2>
        <table data-testid="prep-report-cases">
          <tbody>
            <tr>
              <th>Notes</th>
              <td className="num">{r.cases.total}</td>
            </tr>
            <tr>
              <th>Reviewed and kept</th>
              <td className="num">{r.cases.reviewed}</td>
            </tr>
            <tr>
              <th>Excluded</th>
              <td className="num">{r.cases.excluded}</td>
            </tr>
            <tr>
              <th>Waiting for a review</th>
              <td className="num">{r.cases.pending}</td>
            </tr>
            <tr>
              <th>Waiting for a settlement</th>
              <td className="num">{r.cases.differ}</td>
            </tr>
          </tbody>
        </table>
      </div>
      <div className="card table-wrap">
        <h2 style={{ marginTop: 0 }}>Proposals by category</h2>
        <p className="muted">
          The final review of each case kept; missed text is what the reviewers marked themselves.
        </p>
        <table data-testid="prep-report-proposals">
          <thead>
            <tr>
              <th>Category</th>
              <th className="num">Accepted</th>
              <th className="num">Edited</th>
              <th className="num">Rejected</th>
              <th className="num">Missed</th>
            </tr>
          </thead>
          <tbody>
            {r.proposals.map((p) => (
              <tr key={p.category}>
                <td>{p.category}</td>
                <td className="num">{p.accepted}</td>
                <td className="num">{p.edited}</td>
                <td className="num">{p.rejected}</td>
                <td className="num">{p.missed}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div className="card table-wrap">
        <h2 style={{ marginTop: 0 }}>Exclusions</h2>
        {r.exclusions.length === 0 ? (
          <p className="muted">No case excluded.</p>
        ) : (
          <table data-testid="prep-report-exclusions">
            <thead>
              <tr>
                <th>Note</th>
                <th>Reason</th>
              </tr>
            </thead>
            <tbody>
              {r.exclusions.map((e) => (
                <tr key={e.note}>
                  <td>{e.note}</td>
                  <td>{e.reason}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
      <div className="card table-wrap">
        <h2 style={{ marginTop: 0 }}>Back-translation scores</h2>
        <p className="muted">
          Per note (corpus-level over its sections); the project&apos;s BLEU and chrF are corpus-level over every scored
          section, its COMET the notes&apos; mean. Thresholds: BLEU {shown(t.minBleu)}, chrF {shown(t.minChrf)}, COMET{" "}
          {shown(t.minComet)}.
        </p>
        <table data-testid="prep-report-scores">
          <thead>
            <tr>
              <th>Metric</th>
              <th className="num">Notes</th>
              <th className="num">Median</th>
              <th className="num">IQR</th>
              <th className="num">Project</th>
            </tr>
          </thead>
          <tbody>
            {r.scores.map((d) => {
              const digits = d.metric === "COMET" ? 3 : 1;
              return (
                <tr key={d.metric}>
                  <td>{d.metric}</td>
                  <td className="num">{d.n}</td>
                  <td className="num">{fix(d.median, digits)}</td>
                  <td className="num">{d.q1 === null ? "–" : `${fix(d.q1, digits)}–${fix(d.q3, digits)}`}</td>
                  <td className="num">{fix(d.project, digits)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
        {r.scores.some((d) => d.n > 0) ? (
          <img
            src={`${base}/report.svg`}
            alt="Histograms of the notes' BLEU, chrF and COMET"
            style={{ maxWidth: "100%", height: "auto" }}
          />
        ) : (
          <p className="muted">No note scored yet.</p>
        )}
      </div>
      <div className="card table-wrap">
        <h2 style={{ marginTop: 0 }}>Correction</h2>
        <table data-testid="prep-report-quality">
          <tbody>
            <tr>
              <th>Notes scored</th>
              <td className="num">{r.quality.scored}</td>
            </tr>
            <tr>
              <th>Needing correction</th>
              <td className="num">{r.quality.needsCorrection}</td>
            </tr>
            <tr>
              <th>… of which corrected</th>
              <td className="num">{r.quality.corrected}</td>
            </tr>
            <tr>
              <th>Test names or scores missing (notes)</th>
              <td className="num">
                {r.quality.mismatches} ({r.quality.notesWithMismatches})
              </td>
            </tr>
            <tr>
              <th>… in a corrected section</th>
              <td className="num">{r.quality.mismatchesCorrected}</td>
            </tr>
          </tbody>
        </table>
        {r.notes.some((n) => n.needsCorrection) ? (
          <table data-testid="prep-report-flagged">
            <thead>
              <tr>
                <th>Note</th>
                <th>Why</th>
                <th>Corrected</th>
              </tr>
            </thead>
            <tbody>
              {r.notes
                .filter((n) => n.needsCorrection)
                .map((n) => (
                  <tr key={n.note}>
                    <td>{n.note}</td>
                    <td>{n.reason}</td>
                    <td>{n.corrected ? "yes" : "no"}</td>
                  </tr>
                ))}
            </tbody>
          </table>
        ) : null}
      </div>
    </section>
  );
}
