import { Link } from "@remix-run/react";
import { MISSING_INFO, type CaseLabel } from "~/labels/labels";

/**
 * The reference of a training case and its rationale, shown once the annotator has submitted their own label
 * (docs/rater-quality.md, "Training round"): the one place an annotator sees a result.
 */
export function TrainingReveal({
  reveal,
  next,
}: {
  reveal: { reference: CaseLabel; rationale: string };
  next: string;
}) {
  const r = reveal.reference;
  return (
    <div className="card" data-testid="training-reveal" aria-live="polite">
      <h3>Reference label</h3>
      <dl>
        <dt>Sufficiency</dt>
        <dd data-testid="reference-sufficiency">{r.sufficiency}</dd>
        {r.sufficiency === "sufficient" ? (
          <>
            <dt>Diagnosis (ICD-10)</dt>
            <dd data-testid="reference-icd10">{r.icd10}</dd>
            <dt>Earliest sufficient section</dt>
            <dd>{r.earliestSection}</dd>
          </>
        ) : (
          <>
            <dt>Missing information</dt>
            <dd>
              {r.missingInfo.map((k) => MISSING_INFO.find((m) => m.key === k)?.label ?? k).join(", ")}
              {r.missingInfoOther ? ` (${r.missingInfoOther})` : ""}
            </dd>
          </>
        )}
      </dl>
      <h3>Rationale</h3>
      <p data-testid="reference-rationale" style={{ whiteSpace: "pre-wrap" }}>
        {reveal.rationale || "No rationale was given for this case."}
      </p>
      <Link to={next} className="button" data-testid="training-next">
        Continue
      </Link>
    </div>
  );
}
