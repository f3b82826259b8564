import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { getDb } from "../platform/db.server";
import { importGold, streamGold } from "./gold-export.server";
import { verifyGoldFolder } from "./gold-files.server";
import { writeFolderStreaming } from "../platform/output-files.server";
import { requireStudyByName } from "../annotation/public.server";
import { ServiceError } from "../platform/service-error";
import { CliError, parseOptions, requireOption, type Command } from "../cli/command";
import { importFileSource, listIssues, readText } from "../cli/io";

export const exportGoldCommand: Command = {
  name: "export-gold",
  summary: "Write data_gt.json, samples.json, data.csv and manifest.json for a study",
  help: `Usage: npm run concord -- export-gold --study NAME --out DIR [--as-released] [--allow-partial]
       npm run concord -- export-gold --verify DIR

Writes the study's gold labels in the Safe-Psych reference implementation's formats (docs/formats.md):
  DIR/data_gt.json   one record per case, reference fields + Concord's fields (action_labels, presenting_symptoms_label,
                     adjudicated, adjudication_reason, missing_info, missing_info_other, annotators {A, B})
  DIR/samples.json   the present sections of each case, numbered 1..T
  DIR/data.csv       the released-CSV form (13 columns)
  DIR/manifest.json  counts by state, sha256 of each file, software version, adjudication mode, export time
                     and rater_agreement (agreement per pair and over time, docs/statistics.md)

Cases keep their import order; repeating the export gives byte-identical files (only the manifest's time differs).
Refuses (exit 2, with counts by state) while some cases are not final, unless --allow-partial.
The files are written into a temporary folder beside DIR, synced to disk, then put in DIR's place in one rename:
an interrupted export leaves the previous DIR as it was.
--verify DIR checks a folder against its manifest (every file present, its sha256 and record count); exit 2 if not.

Options:
  --as-released    leave out presenting_symptoms_label, so the reference's stage-1 script behaves as released
  --allow-partial  export the final cases only; recorded in the manifest`,
  async run(argv, io) {
    const { values } = parseOptions(argv, {
      study: { type: "string" },
      out: { type: "string" },
      verify: { type: "string" },
      "as-released": { type: "boolean", default: false },
      "allow-partial": { type: "boolean", default: false },
    });
    if (values.verify !== undefined) {
      const problems = verifyGoldFolder(values.verify);
      if (problems.length) {
        for (const p of problems) io.err(`${values.verify}: ${p}\n`);
        return 2;
      }
      io.out(`${values.verify} matches its manifest.\n`);
      return 0;
    }
    const db = getDb();
    let study;
    try {
      study = requireStudyByName(db, requireOption(values.study, "--study"));
    } catch (e) {
      if (e instanceof ServiceError) throw new CliError(e.message);
      throw e;
    }
    const out = requireOption(values.out, "--out");
    // Streamed into a temporary folder beside DIR and renamed into place when complete (docs/reliability.md,
    // "Atomic files"). A write error is an OutputError naming its cause, a database error is reported as such; both
    // leave DIR as it was (app/cli/index.ts).
    const result = writeFolderStreaming(
      out,
      (write) =>
        streamGold(
          db,
          { studyId: study.id, asReleased: values["as-released"], allowPartial: values["allow-partial"] },
          write,
        ),
      (r) => r.ok,
      { replaceForeign: true, mode: 0o600 },
    );
    if (!result.ok) throw new CliError(result.message);
    io.out(
      `Exported ${result.exported} cases of "${study.name}" to ${out} (data_gt.json, samples.json, data.csv, manifest.json).\n`,
    );
    return 0;
  },
};

export const importGoldCommand: Command = {
  name: "import-gold",
  summary: "Read a data_gt.json (Concord's or the reference's) into a study as reference labels",
  help: `Usage: npm run concord -- import-gold FILE [--study NAME] [--manifest FILE]

Reads a data_gt.json written by Concord or by the Safe-Psych reference implementation: its cases (from
sections_metadata) and their labels, kept as the study's reference labels, with Concord's extra fields. Exporting the
study afterwards writes the same records. The study defaults to the file name without extension.
The export's manifest.json (beside FILE, or --manifest) gives the study export-gold's annotator_order_seed, so that
the restored study draws every case's "Annotator A/B" order as the original did; without a manifest, or with an
older one that has no seed, a notice says that a new seed will be drawn. A study that already has another seed is
refused.
The whole file is validated first; errors name the element and field (the manifest's as FILE:LINE), and nothing is
written.`,
  async run(argv, io) {
    const { values, positionals } = parseOptions(
      argv,
      { study: { type: "string" }, manifest: { type: "string" } },
      true,
    );
    if (positionals.length !== 1) throw new CliError("give exactly one data_gt.json FILE. See --help.");
    const file = positionals[0]!;
    // Read as a stream, in two passes (docs/reliability.md, "Memory bounded by the longest line"): never held whole.
    const text = importFileSource(file, "gold", { json: true });
    const manifestPath = values.manifest ?? join(dirname(file), "manifest.json");
    const manifest =
      values.manifest !== undefined || existsSync(manifestPath)
        ? { text: readText(manifestPath), filename: manifestPath }
        : null;
    const studyName = values.study ?? file.replace(/^.*[\\/]/, "").replace(/\.json$/i, "");
    let result;
    try {
      result = importGold(getDb(), { studyName, text, filename: file, actorId: null, manifest });
    } catch (e) {
      // Another import of the same study still running after the wait (docs/reliability.md, "Bulk imports").
      if (e instanceof ServiceError) throw new CliError(e.message);
      throw e;
    }
    if (!result.ok) {
      for (const e of result.errors.slice(0, 50)) io.err(`${e}\n`);
      io.err(`${result.errors.length} error${result.errors.length === 1 ? "" : "s"}; nothing was imported.\n`);
      return 2;
    }
    listIssues(io, result.parse.warnings, { file, kind: "warning" });
    for (const n of result.notices) io.err(`notice: ${n}\n`);
    io.out(
      result.written
        ? `Imported ${result.total} cases into study "${result.studyName}": ${result.create} new, ${result.update} changed, ${result.unchanged} unchanged.\n`
        : `Study "${result.studyName}" already holds these ${result.total} cases and labels. Nothing to change.\n`,
    );
    if (result.written && result.seedToRecord)
      io.out(`Recorded the export's A/B order seed ${result.annotatorOrderSeed} for the study.\n`);
    return 0;
  },
};
