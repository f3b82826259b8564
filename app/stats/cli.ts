import { readCodedRatings, type CodedRatings, type RatingsCsvIssue } from "./ratings-csv";
import {
  buildCodedRatingTable,
  isNumericLabel,
  summariseAgreement,
  type AgreementSummary,
  type IntervalSummary,
  type OrdinalWeights,
  type Scale,
} from "./index";
import { issueLines, readText, readTextChunks, table } from "../cli/io";
import { CliError, parseOptions, requireOption, type Command } from "../cli/command";
import { joinDashValues, mixedSpellings, normalizeLabel } from "./agreement-labels";
import { pushAll } from "./extremes";

const SCALES: readonly Scale[] = ["nominal", "ordinal", "interval"];
const WEIGHTS: readonly OrdinalWeights[] = ["linear", "quadratic"];

const help = `Usage: npm run concord -- agreement --ratings FILE [--json] [--scale nominal|ordinal|interval]
                                     [--weights linear|quadratic] [--order a,b,c] [--normalize]

Agreement between raters (docs/statistics.md) from a long-format ratings file: percent agreement, Cohen's kappa
(exactly two raters), Gwet's AC1 with standard error and 95% confidence interval (irrCAC gwet.ac1.raw),
Fleiss' kappa (irrCAC fleiss.kappa.raw), Krippendorff's alpha and, for two raters, the confusion matrix.
Missing ratings are allowed.

FILE is CSV with the header item,rater,label and one rating per row; a missing rating is an absent row.
Labels are strings compared exactly (case-sensitive, surrounding blanks trimmed); a number spelled two ways
("1" and "1.0") is refused, and labels that differ only in case get a warning — give --normalize to read them
as irrCAC does. The coefficients follow irrCAC, except that an undefined one (0/0, e.g. AC1 when only one
category is observed, where irrCAC substitutes 1e-15 for the chance agreement and reports 1) is null.

Options:
  --ratings FILE    the ratings file (required)
  --json            print one JSON object and nothing else, with the keys n_items, n_raters, categories,
                    scale, weights, percent_agreement (a fraction in [0, 1]), cohen_kappa, gwet_ac1
                    {value, se, ci95: [low, high]}, fleiss_kappa, krippendorff_alpha, cohen_kappa_weighted,
                    gwet_ac2 {value, se, ci95}, confusion {raters, categories, counts, n_items}, warnings.
                    An undefined coefficient is null and has a warnings entry saying why.
  --scale S         nominal (default), ordinal or interval: the level of Krippendorff's alpha; ordinal and
                    interval also report Cohen's weighted kappa (two raters) and Gwet's AC2
  --weights W       linear or quadratic (default quadratic): the weights of the weighted coefficients
  --order a,b,c     the categories in order (this also fixes the category set, so unused categories count);
                    without it, ordinal and interval labels must be numbers and are ordered by value.
                    Weights use the numeric values when every category is a number, else the ranks 1..q.
                    A list starting with "-" may follow --order directly: --order -7,4,99.
  --normalize       read labels as irrCAC does: numbers by value ("1.0" is "1"), text trimmed and upper-cased
                    ("yes" is "YES"); --order is read the same way

Exit status: 0 on success (also when a coefficient is undefined), 2 for a bad file or bad options.
`;

function parseOrder(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const order = value.split(",").map((c) => c.trim());
  if (order.some((c) => c === "")) throw new CliError(`--order has an empty category: "${value}"`);
  const duplicate = order.find((c, i) => order.indexOf(c) !== i);
  if (duplicate !== undefined) throw new CliError(`--order lists "${duplicate}" twice`);
  return order;
}

/** The rows whose label is bad, as issues in file order (only built when there are some). */
function rowsWithLabels(coded: CodedRatings, bad: Uint8Array, message: (label: string) => string): RatingsCsvIssue[] {
  const issues: RatingsCsvIssue[] = [];
  for (let i = 0; i < coded.count; i++)
    if (bad[coded.rowLabel[i]])
      issues.push({ line: coded.rowLine[i], message: message(coded.labels[coded.rowLabel[i]]) });
  return issues;
}

function checkLabels(path: string, coded: CodedRatings, scale: Scale, order: string[] | undefined): void {
  let bad: Uint8Array;
  let message: (label: string) => string;
  let hint: string;
  if (order) {
    const known = new Set(order);
    bad = Uint8Array.from(coded.labels, (label) => (known.has(label) ? 0 : 1));
    message = (label) => `label "${label}" is not in --order`;
    hint = "add it to --order";
  } else if (scale !== "nominal") {
    bad = Uint8Array.from(coded.labels, (label) => (isNumericLabel(label) ? 0 : 1));
    message = (label) => `label "${label}" is not a number`;
    hint = `give the category order with --order for a ${scale} scale`;
  } else {
    return;
  }
  if (!bad.includes(1)) return;
  const issues = rowsWithLabels(coded, bad, message);
  throw new CliError(`${path}: ${hint}\n${issueLines(issues, { file: path, prefix: "  " }).join("\n")}`);
}

/** --normalize: every label read as irrCAC does; labels that become the same category share one code. */
function normalizeLabels(coded: CodedRatings): void {
  const index = new Map<string, number>();
  const labels: string[] = [];
  const remap = Int32Array.from(coded.labels, (label) => {
    const normal = normalizeLabel(label);
    let k = index.get(normal);
    if (k === undefined) {
      k = labels.length;
      index.set(normal, k);
      labels.push(normal);
    }
    return k;
  });
  for (let i = 0; i < coded.count; i++) coded.rowLabel[i] = remap[coded.rowLabel[i]];
  coded.labels = labels;
}

const fixed = (value: number | null | undefined): string =>
  value === null || value === undefined ? "undefined" : value.toFixed(3);

function intervalCells(estimate: IntervalSummary): string[] {
  return [
    fixed(estimate.value),
    estimate.se === null ? "" : fixed(estimate.se),
    estimate.ci95 === null ? "" : `[${fixed(estimate.ci95[0])}, ${fixed(estimate.ci95[1])}]`,
  ];
}

/** The readable form of the summary printed without --json. */
export function formatAgreementSummary(s: AgreementSummary): string {
  const shownCategories =
    s.categories.length > 20
      ? `${s.categories.slice(0, 20).join(", ")}, … (${s.categories.length - 20} more)`
      : s.categories.join(", ");
  const lines = [
    `Agreement: ${s.n_items} items, ${s.n_raters} raters, ${s.categories.length} categories (${shownCategories})`,
    `Scale: ${s.scale}${s.weights ? `, ${s.weights} weights` : ""}`,
    "",
  ];
  const rows: string[][] = [["Coefficient", "Value", "SE", "95% CI"]];
  rows.push(["Percent agreement", fixed(s.percent_agreement), "", ""]);
  if ("cohen_kappa" in s) rows.push(["Cohen's kappa", fixed(s.cohen_kappa), "", ""]);
  rows.push(["Gwet's AC1", ...intervalCells(s.gwet_ac1)]);
  rows.push(["Fleiss' kappa", fixed(s.fleiss_kappa), "", ""]);
  rows.push([`Krippendorff's alpha (${s.scale})`, fixed(s.krippendorff_alpha), "", ""]);
  if ("cohen_kappa_weighted" in s)
    rows.push([`Cohen's weighted kappa (${s.weights})`, fixed(s.cohen_kappa_weighted), "", ""]);
  if (s.gwet_ac2) rows.push([`Gwet's AC2 (${s.weights})`, ...intervalCells(s.gwet_ac2)]);
  pushAll(lines, table(rows, { gap: 3 }));

  if (s.confusion) {
    const c = s.confusion;
    lines.push("", `Confusion matrix: rows ${c.raters[0]}, columns ${c.raters[1]} (${c.n_items} items rated by both)`);
    if (c.categories.length <= 15) {
      pushAll(lines, [
        ...table([["", ...c.categories], ...c.counts.map((row, k) => [c.categories[k], ...row.map(String)])], {
          gap: 3,
        }),
      ]);
    } else {
      lines.push(`  ${c.categories.length} categories: too wide to print; use --json`);
    }
  }
  if (s.warnings.length > 0) pushAll(lines, ["", "Warnings:", ...s.warnings.map((w) => `  - ${w}`)]);
  return lines.join("\n") + "\n";
}

export const agreementCommand: Command = {
  name: "agreement",
  summary: "Agreement coefficients (kappa, AC1, Fleiss, Krippendorff) for a ratings CSV",
  help,
  async run(argv, io) {
    const { values } = parseOptions(joinDashValues(argv, ["order"]), {
      ratings: { type: "string" },
      json: { type: "boolean", default: false },
      scale: { type: "string" },
      weights: { type: "string" },
      order: { type: "string" },
      normalize: { type: "boolean", default: false },
    });
    const path = requireOption(values.ratings, "--ratings");
    const scale = (values.scale ?? "nominal") as Scale;
    if (!SCALES.includes(scale))
      throw new CliError(`--scale must be one of ${SCALES.join(", ")}, got "${values.scale}"`);
    const weights = values.weights as OrdinalWeights | undefined;
    if (weights !== undefined && !WEIGHTS.includes(weights)) {
      throw new CliError(`--weights must be linear or quadratic, got "${weights}"`);
    }
    if (weights !== undefined && scale === "nominal") {
      throw new CliError("--weights needs --scale ordinal or --scale interval");
    }
    const order = parseOrder(values.order)?.map((c) => (values.normalize ? normalizeLabel(c) : c));
    if (order && new Set(order).size !== order.length)
      throw new CliError(`--order lists one category twice once normalised: "${values.order}"`);

    // Read in chunks into integer codes (docs/statistics.md#at-scale); the whole text is read only for files the
    // full CSV parser must read.
    const coded = readCodedRatings(readTextChunks(path), () => readText(path));
    if (coded.errors.length > 0)
      throw new CliError(
        `${path} is not a valid ratings file\n${issueLines(coded.errors, { file: path, prefix: "  " }).join("\n")}`,
      );
    const spelling = mixedSpellings(coded.labels.map((label, k) => ({ label, line: coded.labelLine[k] })));
    if (values.normalize) {
      normalizeLabels(coded);
    } else if (spelling.errors.length > 0) {
      throw new CliError(
        `${path}: labels spell one number two ways\n${issueLines(spelling.errors, { file: path, prefix: "  " }).join("\n")}`,
      );
    }
    checkLabels(path, coded, scale, order);

    const ratingTable = buildCodedRatingTable(coded, order ? { categories: order } : {});
    const summary = summariseAgreement(ratingTable, {
      scale,
      weights,
      warnings: [...coded.warnings, ...(values.normalize ? [] : spelling.warnings)].map(
        (w) => `line ${w.line}: ${w.message}`,
      ),
    });
    io.out(values.json ? JSON.stringify(summary) + "\n" : formatAgreementSummary(summary));
    return 0;
  },
};
