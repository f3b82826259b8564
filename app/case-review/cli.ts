/** Commands of generated-case review (docs/case-review.md): review-set import and the report. */
import { getDb } from "../platform/db.server";
import { getReviewReport, importReviewSet, requireReviewSetByName } from "./case-review.server";
import { listIssues, importFileSource } from "../cli/io";
import { CliError, parseOptions, requireOption, type Command, serviceCall } from "../cli/command";
import { fmt } from "../expert-panel/cli";

export const casereviewImportCommand: Command = {
  name: "casereview-import",
  summary: "Import generated cases and seeds (CSV) into a review set, validated whole",
  help: `Usage: npm run concord -- casereview-import FILE --set NAME [--dry-run]

Reads cases into the review set NAME (created if needed). Columns (case-insensitive):
  id         the case's id (letters, digits, . _ -)
  text       the case as the experts read it
  kind       case (rated on linguistic naturalness, diagnostic validity, clinical realism, 1–5) or seed (accepted or
             rejected with a reason); default case
  case_type  optional: I, II, III, IV (MentalBench's case types) or 1–4
  diagnosis  optional: the case's target diagnosis, shown to experts with the diagnostic-validity question only
  seed_id    optional: the seed a generated case came from
The whole file is validated first; problems are listed as FILE:LINE and nothing is written (exit 2).`,
  async run(argv, io) {
    const { values, positionals } = parseOptions(
      argv,
      { set: { type: "string" }, "dry-run": { type: "boolean", default: false } },
      true,
    );
    if (positionals.length !== 1) throw new CliError("give exactly one CSV FILE. See --help.");
    const file = positionals[0]!;
    const result = importReviewSet(getDb(), {
      setName: requireOption(values.set, "--set"),
      text: importFileSource(file, "expert", { json: false }),
      actorId: null,
      dryRun: values["dry-run"],
    });
    if (!result.ok) {
      listIssues(io, result.errors, { file: file, kind: "error" });
      listIssues(io, result.warnings, { file: file, kind: "warning" });
      io.err(`${result.errors.length} error${result.errors.length === 1 ? "" : "s"}; nothing was imported.\n`);
      return 2;
    }
    listIssues(io, result.warnings, { file: file, kind: "warning" });
    io.out(
      `${result.written ? "Imported" : "Checked (dry run, nothing written)"} ${result.total} items into review set "${
        result.setName
      }": ${result.created} new, ${result.updated} changed, ${result.unchanged} unchanged.\n`,
    );
    return 0;
  },
};

export const casereviewReportCommand: Command = {
  name: "casereview-report",
  summary: "Quality scores, agreement and accepted seeds of a review set",
  help: `Usage: npm run concord -- casereview-report --set NAME [--json] [--weights linear|quadratic]

From the submitted reviews: per dimension (linguistic naturalness, diagnostic validity, clinical realism) the mean,
SD and distribution of scores 1–5 overall and per expert; agreement per dimension: Cohen's weighted kappa (two
experts), Gwet's AC2 with its 95% interval and Krippendorff's alpha (ordinal); seed decisions with percent
agreement, Gwet's AC1 and Krippendorff's alpha (nominal); and the accepted seeds (accepted by every expert who
reviewed them). Undefined coefficients print as – (the JSON has null and a reason).

Options:
  --json      print the report as JSON
  --weights   linear or quadratic (default) weights for kappa and AC2`,
  async run(argv, io) {
    const { values } = parseOptions(argv, {
      set: { type: "string" },
      json: { type: "boolean", default: false },
      weights: { type: "string" },
    });
    const weights = (values.weights ?? "quadratic") as "linear" | "quadratic";
    if (weights !== "linear" && weights !== "quadratic")
      throw new CliError(`--weights must be linear or quadratic, not "${values.weights}".`);
    const db = getDb();
    return serviceCall(() => {
      const set = requireReviewSetByName(db, requireOption(values.set, "--set"));
      const r = getReviewReport(db, set.id, { weights });
      if (values.json) {
        io.out(JSON.stringify({ set: set.name, ...r }, null, 2) + "\n");
        return 0;
      }
      io.out(
        `Review set "${set.name}": ${r.nCases} cases, ${r.nSeeds} seeds, ${r.nReviews} submitted reviews by ${r.experts.length} experts.\n\n`,
      );
      io.out(
        `dimension                n   mean     sd   1/2/3/4/5          alpha(ord)  AC2 (${weights})          kappa_w\n`,
      );
      for (const d of r.dimensions) {
        const a = d.agreement;
        const ci = a.gwetAc2.confidenceInterval
          ? ` [${fmt(a.gwetAc2.confidenceInterval[0], 2)}, ${fmt(a.gwetAc2.confidenceInterval[1], 2)}]`
          : "";
        io.out(
          `${d.dimension.padEnd(20)} ${String(d.n).padStart(5)}  ${fmt(d.mean, 2).padStart(5)}  ${fmt(d.sd, 2).padStart(
            5,
          )}   ${d.distribution.join("/").padEnd(17)}  ${fmt(a.krippendorffAlphaOrdinal).padStart(10)}  ${(
            fmt(a.gwetAc2.value) + ci
          ).padEnd(22)} ${fmt(a.cohenWeightedKappa)}\n`,
        );
        for (const e of d.perExpert)
          io.out(
            `  ${e.rater.padEnd(18)} ${String(e.n).padStart(5)}  ${fmt(e.mean, 2).padStart(5)}  ${fmt(e.sd, 2).padStart(
              5,
            )}   ${e.distribution.join("/")}\n`,
          );
      }
      const s = r.seedAgreement;
      io.out(
        `\nSeeds: ${r.acceptedSeeds.length} accepted, ${
          r.seeds.filter((x) => x.status === "rejected").length
        } rejected, ${r.seeds.filter((x) => x.status === "pending").length} pending; agreement ${fmt(
          s.percentAgreement,
        )} (AC1 ${fmt(s.gwetAc1)}, alpha ${fmt(s.krippendorffAlphaNominal)}).\n`,
      );
      for (const seed of r.seeds) {
        io.out(`  ${seed.id.padEnd(16)} ${seed.status.padEnd(9)} ${seed.accepts} accept, ${seed.rejects} reject\n`);
        for (const reason of seed.reasons) io.out(`      ${reason.rater}: ${reason.reason.replace(/\s+/g, " ")}\n`);
      }
      io.out(`\nAccepted seeds: ${r.acceptedSeeds.join(", ") || "none"}\n`);
      return 0;
    });
  },
};
