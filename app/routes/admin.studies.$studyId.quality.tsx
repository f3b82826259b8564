import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { z } from "zod";
import { ActionResult } from "~/ui/admin-notices";
import { getDb } from "~/platform/db.server";
import { importBytesProblem, importLimits, refusalLine } from "~/formats/import-contract";
import { parseIntent } from "~/platform/intent";
import { requireById, requireForm, requireRole } from "~/accounts/guard.server";
import { getStudy } from "~/annotation/studies.server";
import { ServiceError } from "~/platform/service-error";
import {
  addCalibrationCase,
  getQualitySettings,
  getRaterQualityReport,
  importAdjudicatedCalibration,
  importCalibrationCsv,
  listCalibrationSet,
  removeCalibrationCase,
  setQualitySettings,
  qualitySwitchPreview,
} from "~/annotation/rater-quality.server";
import {
  AdjudicatedImportFormSchema,
  CalibrationCsvFormSchema,
  CalibrationFormSchema,
  QualitySettingsFormSchema,
  RemoveCalibrationFormSchema,
} from "~/annotation/domain/rater-quality-form";
import { QUALITY_OFF, qualityOn } from "~/annotation/domain/rater-quality";
import {
  CalibrationAccuracy,
  CalibrationSetTable,
  ItemsGiven,
  QualitySettingsForm,
  RetestTables,
} from "~/annotation/ui/rater-quality";
import { HeadlineTable } from "~/study-report/ui/headline-table";
import { Fold, ReasonNotes, ReasonNumbersProvider } from "~/study-report/ui/report-parts";
import { Csrf } from "~/ui/root-data";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `Rater quality · ${data?.study.name ?? "Study"} · Concord` },
];

function studyOr404(param: string | undefined) {
  return requireById(param, (id) => getStudy(getDb(), id), "No such study.");
}

export async function loader({ request, params }: LoaderFunctionArgs) {
  await requireRole(request, "admin");
  const study = studyOr404(params.studyId);
  const db = getDb();
  return {
    study,
    settings: getQualitySettings(db, study.id) ?? QUALITY_OFF,
    // What switching it on would do to the work now (docs/rater-quality.md, "Switching it on mid-study").
    preview: qualityOn(getQualitySettings(db, study.id) ?? QUALITY_OFF) ? null : qualitySwitchPreview(db, study.id),
    calibration: listCalibrationSet(db, study.id),
    report: getRaterQualityReport(db, study.id),
  };
}

const ActionSchema = z.discriminatedUnion("intent", [
  QualitySettingsFormSchema,
  CalibrationFormSchema,
  AdjudicatedImportFormSchema,
  CalibrationCsvFormSchema,
  RemoveCalibrationFormSchema,
]);

export async function action({ request, params }: ActionFunctionArgs) {
  const me = await requireRole(request, "admin");
  const form = await requireForm(request, me);
  const study = studyOr404(params.studyId);
  const parsed = parseIntent(form, ActionSchema, { arrays: ["missingInfo"] });
  if (!parsed.ok) return { ok: false as const, message: parsed.message, errors: [] as string[] };
  const db = getDb();
  const d = parsed.data;
  try {
    switch (d.intent) {
      case "settings": {
        const { intent: _i, ...settings } = d;
        setQualitySettings(db, { studyId: study.id, settings, actorId: me.id });
        return { ok: true as const, message: "Rater-quality settings saved.", errors: [] };
      }
      case "add-calibration":
        addCalibrationCase(db, {
          studyId: study.id,
          actorId: me.id,
          entry: {
            sourceStudy: d.sourceStudy,
            externalId: d.externalId,
            purpose: d.purpose,
            rationale: d.rationale,
            reference: {
              sufficiency: d.sufficiency,
              icd10: d.icd10,
              earliestSection: d.earliestSection,
              missingInfo: d.missingInfo,
              missingOther: d.missingOther,
            },
          },
        });
        return { ok: true as const, message: `Added case ${d.externalId} (${d.purpose}).`, errors: [] };
      case "import-adjudicated": {
        const r = importAdjudicatedCalibration(db, {
          studyId: study.id,
          fromStudy: d.fromStudy,
          purpose: d.purpose,
          actorId: me.id,
        });
        return {
          ok: true as const,
          message: `Added ${r.added} adjudicated case(s) of "${d.fromStudy}"; ${r.skipped} already in the set.`,
          errors: [],
        };
      }
      case "import-csv": {
        // The import contract (docs/reliability.md, "The import contract"): line length, NUL.
        const problem = importBytesProblem(Buffer.from(d.csv, "utf8"), importLimits("calibration"), { json: false });
        if (problem)
          return { ok: false as const, message: "Nothing was imported.", errors: [refusalLine("pasted.csv", problem)] };
        const r = importCalibrationCsv(db, { studyId: study.id, filename: "pasted.csv", text: d.csv, actorId: me.id });
        if (!r.ok)
          return {
            ok: false as const,
            message: "Nothing was imported: fix these lines and paste again.",
            errors: r.errors,
          };
        return {
          ok: true as const,
          message: `Imported ${r.added} case(s); ${r.skipped} already in the set.${r.warnings.map((w) => ` ${w}`).join("")}`,
          errors: [],
        };
      }
      case "remove-calibration":
        removeCalibrationCase(db, { studyId: study.id, id: d.id, actorId: me.id });
        return { ok: true as const, message: "Removed from the calibration set.", errors: [] };
    }
  } catch (e) {
    if (e instanceof ServiceError) return { ok: false as const, message: e.message, errors: [] };
    throw e;
  }
}

export default function RaterQualityPage() {
  const { study, settings, calibration, report, preview } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const busy = useNavigation().state !== "idle";
  const pooled = report.retest.pooled;
  const on = qualityOn(settings);
  const below = report.calibration.some((c) => c.below.length > 0);
  return (
    <section>
      <p>
        <Link to="/admin">Studies</Link> › <Link to={`/admin/studies/${study.id}`}>{study.name}</Link> ›
      </p>
      <div className="row">
        <h1>Rater quality</h1>
        <span className="spacer" />
        <a href={`/admin/studies/${study.id}/rater-quality.csv`} className="button secondary" download>
          Download rater-quality.csv
        </a>
      </div>
      <p className="muted">
        Test–retest, calibration cases and a training round. Annotators are never told which cases are retests or
        calibration cases; their second labels and calibration labels stay out of gold, adjudication and the inter-rater
        statistics. The rules are in the documentation, “Rater quality”.
      </p>
      <ActionResult result={result} testId="quality-result" />
      {result?.errors.length ? (
        <pre className="notice bad" data-testid="quality-errors">
          {result.errors.join("\n")}
        </pre>
      ) : null}

      <h2>Test–retest, pooled over annotators</h2>
      {pooled.n === 0 ? (
        <p className="muted">No retest has been submitted yet.</p>
      ) : (
        <ReasonNumbersProvider reasons={pooled.reasons}>
          <HeadlineTable
            figures={pooled}
            caption={`Each annotator's first label against their retest label, ${pooled.n} pair(s); diagnosis and earliest section over the ${pooled.diagnosis.n} pair(s) called sufficient both times. 95% Student-t intervals.`}
          />
          <ReasonNotes reasons={pooled.reasons} />
        </ReasonNumbersProvider>
      )}

      <Fold id="retest" title="Test–retest per annotator">
        <RetestTables report={report} />
      </Fold>
      <Fold id="calibration-accuracy" title="Calibration accuracy" open={below}>
        <CalibrationAccuracy report={report} />
      </Fold>
      <Fold id="items-given" title="Items given">
        <ItemsGiven report={report} />
      </Fold>
      <Fold id="settings" title="Settings" open={!on}>
        {preview && preview.started + preview.unstarted > 0 ? (
          <div className="notice warn" data-testid="quality-switch-preview">
            <p style={{ margin: 0 }}>
              Rater quality is off. Switching it on now (a retest fraction, a calibration rate or a training round):
            </p>
            <ul style={{ margin: "0.25rem 0 0" }}>
              <li>
                {preview.started} case{preview.started === 1 ? "" : "s"} already started by {preview.annotators}{" "}
                annotator
                {preview.annotators === 1 ? "" : "s"} keep their names and addresses;
              </li>
              <li>
                {preview.unstarted} case{preview.unstarted === 1 ? "" : "s"} not started yet are shown under opaque
                names (e.g. “Case 3F9A2”) at new addresses, so that retest and calibration cases look like them;
              </li>
              <li>
                the annotators’ lists are numbered 1, 2, 3… in list order, and their totals grow by the retest,
                calibration and training cases added.
              </li>
            </ul>
          </div>
        ) : null}
        <QualitySettingsForm settings={settings} busy={busy} />
      </Fold>
      <Fold id="calibration-set" title={`Calibration set (${calibration.length})`}>
        <CalibrationSetTable rows={calibration} busy={busy} />
        <div className="grid2">
          <CalibrationEntryForm busy={busy} />
          <div>
            <form method="post" className="card">
              <Csrf />
              <h3 style={{ marginTop: 0 }}>Adjudicated cases of an earlier study</h3>
              <label htmlFor="fromStudy">Study</label>
              <input id="fromStudy" name="fromStudy" required />
              <label htmlFor="adj-purpose">Use as</label>
              <select id="adj-purpose" name="purpose" defaultValue="calibration">
                <option value="calibration">calibration cases</option>
                <option value="training">training cases</option>
              </select>
              <p>
                <button type="submit" name="intent" value="import-adjudicated" disabled={busy}>
                  Add adjudicated cases
                </button>
              </p>
            </form>
            <form method="post" className="card">
              <Csrf />
              <h3 style={{ marginTop: 0 }}>Import a CSV</h3>
              <p className="muted">
                Header: study,case,purpose,sufficiency,icd10,earliest_section,missing_info,missing_other,rationale
                (missing_info separated by “;”). All lines or none are imported.
              </p>
              <label htmlFor="csv">CSV</label>
              <textarea id="csv" name="csv" rows={6} />
              <p>
                <button type="submit" name="intent" value="import-csv" disabled={busy}>
                  Import
                </button>
              </p>
            </form>
          </div>
        </div>
      </Fold>
    </section>
  );
}

function CalibrationEntryForm({ busy }: { busy: boolean }) {
  return (
    <form method="post" className="card" data-testid="calibration-form">
      <Csrf />
      <h3 style={{ marginTop: 0 }}>Add a known-answer case</h3>
      <label htmlFor="sourceStudy">Study the case comes from</label>
      <input id="sourceStudy" name="sourceStudy" required />
      <label htmlFor="externalId">Case id in that study</label>
      <input id="externalId" name="externalId" required />
      <label htmlFor="purpose">Use as</label>
      <select id="purpose" name="purpose" defaultValue="calibration">
        <option value="calibration">calibration case (blinded, in the queue)</option>
        <option value="training">training case (before real work, reference shown)</option>
      </select>
      <label htmlFor="sufficiency">Reference sufficiency</label>
      <select id="sufficiency" name="sufficiency" defaultValue="sufficient">
        <option value="sufficient">sufficient</option>
        <option value="insufficient">insufficient</option>
      </select>
      <label htmlFor="icd10">ICD-10 code (sufficient)</label>
      <input id="icd10" name="icd10" />
      <label htmlFor="earliestSection">Earliest sufficient section (sufficient)</label>
      <input id="earliestSection" name="earliestSection" type="number" min={1} max={5} />
      <label htmlFor="missingInfo">Missing information keys (insufficient; separated by “;”)</label>
      <input id="missingInfo" name="missingInfo" />
      <label htmlFor="missingOther">Other missing information</label>
      <input id="missingOther" name="missingOther" />
      <label htmlFor="rationale">Rationale (shown after a training case)</label>
      <textarea id="rationale" name="rationale" rows={3} />
      <p>
        <button type="submit" name="intent" value="add-calibration" disabled={busy}>
          Add
        </button>
      </p>
    </form>
  );
}
