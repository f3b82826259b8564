import { Form } from "@remix-run/react";
import { Csrf } from "~/ui/root-data";
import type { QualitySettings } from "~/annotation/domain/rater-quality";
import type { CalibrationSetRow, RaterQualityReport } from "~/annotation/rater-quality.server";
import type { CaseLabel } from "~/labels/labels";

const pct = (v: number | null | undefined) => (v === null || v === undefined ? "—" : `${(100 * v).toFixed(1)}%`);
const num = (v: number | null | undefined) => (v === null || v === undefined ? "—" : v.toFixed(3));
const ci = (c: [number, number] | null) => (c ? ` [${c[0].toFixed(3)}, ${c[1].toFixed(3)}]` : "");

/** The study's rater-quality settings (docs/rater-quality.md, "Settings"). */
export function QualitySettingsForm({ settings, busy }: { settings: QualitySettings; busy: boolean }) {
  return (
    <Form method="post" className="card" data-testid="quality-settings">
      <Csrf />
      <div className="grid2">
        <div>
          <h3 style={{ marginTop: 0 }}>Test–retest</h3>
          <label htmlFor="retestFraction">Retest fraction (0 = off, e.g. 0.10)</label>
          <input
            id="retestFraction"
            name="retestFraction"
            type="number"
            step="0.01"
            min={0}
            max={0.5}
            defaultValue={settings.retestFraction}
          />
          <label htmlFor="washoutCases">Wash-out: other cases submitted since the first label, at least</label>
          <input id="washoutCases" name="washoutCases" type="number" min={0} defaultValue={settings.washoutCases} />
          <label htmlFor="washoutDays">Wash-out: days since the first label, at least</label>
          <input id="washoutDays" name="washoutDays" type="number" min={0} defaultValue={settings.washoutDays} />
          <label htmlFor="qseed">Seed (sample, calibration draw, places in the queue)</label>
          <input id="qseed" name="seed" type="number" min={0} defaultValue={settings.seed} />
        </div>
        <div>
          <h3 style={{ marginTop: 0 }}>Calibration and training</h3>
          <label htmlFor="calibrationRate">Calibration cases per assigned case (0 = off, e.g. 0.05)</label>
          <input
            id="calibrationRate"
            name="calibrationRate"
            type="number"
            step="0.01"
            min={0}
            max={0.5}
            defaultValue={settings.calibrationRate}
          />
          <label className="inline">
            <input type="checkbox" name="training" value="1" defaultChecked={settings.training} /> Training round before
            real work (the training cases, reference shown after each)
          </label>
          <label htmlFor="accuracyThreshold">Accuracy threshold for the “below threshold” mark (blank = none)</label>
          <input
            id="accuracyThreshold"
            name="accuracyThreshold"
            type="number"
            step="0.01"
            min={0}
            max={1}
            defaultValue={settings.accuracyThreshold ?? ""}
          />
        </div>
      </div>
      <p>
        <button type="submit" name="intent" value="settings" disabled={busy}>
          Save settings
        </button>
      </p>
    </Form>
  );
}

const labelText = (l: CaseLabel) =>
  l.sufficiency === "sufficient"
    ? `sufficient · ${l.icd10} · section ${l.earliestSection}`
    : `insufficient · ${l.missingInfo.join(", ")}`;

/** The calibration set, with a remove button for cases no annotator has been given. */
export function CalibrationSetTable({ rows, busy }: { rows: CalibrationSetRow[]; busy: boolean }) {
  if (!rows.length) return <p className="muted">No known-answer cases yet: add them below.</p>;
  return (
    <table data-testid="calibration-set">
      <thead>
        <tr>
          <th>Use</th>
          <th>Study</th>
          <th>Case</th>
          <th>Reference</th>
          <th>Source</th>
          <th>In queues</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.id}>
            <td>{r.purpose}</td>
            <td>{r.sourceStudy}</td>
            <td>{r.externalId}</td>
            <td>{labelText(r.reference)}</td>
            <td>{r.source}</td>
            <td>{r.inUse}</td>
            <td>
              {r.inUse === 0 ? (
                <Form method="post">
                  <Csrf />
                  <input type="hidden" name="id" value={r.id} />
                  <button type="submit" name="intent" value="remove-calibration" className="link" disabled={busy}>
                    Remove
                  </button>
                </Form>
              ) : null}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Test–retest per annotator and pooled, and the first labels revised after their retest was given. */
export function RetestTables({ report }: { report: RaterQualityReport }) {
  const retestRows = [...report.retest.annotators, { annotator: "pooled", ...report.retest.pooled }];
  return (
    <>
      <p className="muted" data-testid="retest-first-label">
        Each retest is compared with the first label as it was when the retest entered the annotator&apos;s queue; a
        revision of the first label after that is listed below and does not change these figures.
        {report.firstLabelsNotKept
          ? ` ${report.firstLabelsNotKept} retest(s) given before first labels were kept are compared with the first label as it is now.`
          : ""}
      </p>
      {report.retest.pooled.n === 0 ? (
        <p className="muted">No retest has been submitted yet.</p>
      ) : (
        <table data-testid="retest-table">
          <thead>
            <tr>
              <th>Annotator</th>
              <th>n</th>
              <th>Sufficiency %</th>
              <th>Cohen&apos;s κ</th>
              <th>AC1 [95% CI]</th>
              <th>Code %</th>
              <th>Category %</th>
              <th>Block %</th>
              <th>Earliest section exact</th>
              <th>Weighted κ (linear)</th>
              <th>AC2 (linear)</th>
            </tr>
          </thead>
          <tbody>
            {retestRows.map((r) => (
              <tr key={r.annotator} data-annotator={r.annotator}>
                <td>{r.annotator}</td>
                <td>{r.n}</td>
                <td>{pct(r.sufficiency.percent_agreement)}</td>
                <td>{num(r.sufficiency.cohen_kappa)}</td>
                <td>
                  {num(r.sufficiency.gwet_ac1.value)}
                  {ci(r.sufficiency.gwet_ac1.ci95)}
                </td>
                <td>{pct(r.diagnosis.diagnosis_level.percent_agreement)}</td>
                <td>{pct(r.diagnosis.category.percent_agreement)}</td>
                <td>{pct(r.diagnosis.group.percent_agreement)}</td>
                <td>{pct(r.earliest_section.exact_agreement)}</td>
                <td>{num(r.earliest_section.weighted.linear.cohen_kappa_weighted)}</td>
                <td>{num(r.earliest_section.weighted.linear.gwet_ac2.value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {report.revisedFirstLabels.length ? (
        <>
          <h4>First labels revised after their retest was given</h4>
          <table data-testid="revised-first-labels">
            <thead>
              <tr>
                <th>Annotator</th>
                <th>Case</th>
                <th>Compared with (as it was)</th>
                <th>Now</th>
                <th>Retest submitted</th>
              </tr>
            </thead>
            <tbody>
              {report.revisedFirstLabels.map((r) => (
                <tr key={`${r.annotator}-${r.case}`}>
                  <td>{r.annotator}</td>
                  <td>{r.case}</td>
                  <td>{labelText(r.asCompared)}</td>
                  <td>{labelText(r.now)}</td>
                  <td>{r.retestSubmitted ? "yes" : "no"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
    </>
  );
}

/** Calibration accuracy per annotator, with the annotators below the threshold marked. */
export function CalibrationAccuracy({ report }: { report: RaterQualityReport }) {
  const threshold = report.settings?.accuracyThreshold ?? null;
  const below = report.calibration.filter((c) => c.below.length > 0);
  return (
    <>
      {threshold !== null ? (
        <p data-testid="below-threshold" className={below.length ? "notice bad" : "notice ok"}>
          {below.length
            ? `Below the threshold of ${pct(threshold)}: ${below.map((b) => `${b.annotator} (${b.below.join(", ").replace("diagnosis_level", "diagnosis")})`).join("; ")}.`
            : `Nobody is below the threshold of ${pct(threshold)}.`}
        </p>
      ) : null}
      {report.calibration.length === 0 ? (
        <p className="muted">No calibration case has been given yet.</p>
      ) : (
        <table data-testid="calibration-table">
          <thead>
            <tr>
              <th>Annotator</th>
              <th>n</th>
              <th>Sufficiency</th>
              <th>Code</th>
              <th>Category</th>
              <th>Block</th>
              <th>Earliest section</th>
            </tr>
          </thead>
          <tbody>
            {report.calibration.map((c) => (
              <tr key={c.annotator} data-annotator={c.annotator} className={c.below.length ? "below" : undefined}>
                <td>
                  {c.annotator}
                  {c.below.length ? " ⚠ below threshold" : ""}
                </td>
                <td>{c.n}</td>
                <td>
                  {pct(c.sufficiency.accuracy)} ({c.sufficiency.n_correct}/{c.sufficiency.n})
                </td>
                <td>
                  {pct(c.diagnosis_level.accuracy)} ({c.diagnosis_level.n_correct}/{c.diagnosis_level.n})
                </td>
                <td>{pct(c.category.accuracy)}</td>
                <td>{pct(c.group.accuracy)}</td>
                <td>{pct(c.earliest_section.accuracy)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

/** How many retests, calibration and training cases each annotator was given and submitted. */
export function ItemsGiven({ report }: { report: RaterQualityReport }) {
  return (
    <>
      {report.items.length ? (
        <>
          <table>
            <thead>
              <tr>
                <th>Annotator</th>
                <th>Kind</th>
                <th>Given</th>
                <th>Submitted</th>
              </tr>
            </thead>
            <tbody>
              {report.items.map((i) => (
                <tr key={`${i.annotator}-${i.kind}`}>
                  <td>{i.annotator}</td>
                  <td>{i.kind}</td>
                  <td>{i.given}</td>
                  <td>{i.submitted}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : (
        <p className="muted">No retest, calibration or training case has been given yet.</p>
      )}
    </>
  );
}
