/**
 * The study report as readable text (the `stats` command's default) and as Markdown (`--md`, and the dashboard's
 * Markdown download): one list of headings, paragraphs and tables, rendered two ways.
 */
import { MISSING_INFO, REFERENCE_NAMES } from "../../labels/labels";
import type { IntervalSummary } from "../../stats/index";
import type { LevelAgreement, StudyReport } from "./study-report";
import { maxOf, pushAll } from "../../stats/extremes";

export type Block =
  | { kind: "heading"; text: string; level: 1 | 2 }
  | { kind: "text"; text: string }
  | { kind: "table"; header: string[]; rows: string[][] };

const NA = "n/a";

export const fixed3 = (v: number | null | undefined): string => (v === null || v === undefined ? NA : v.toFixed(3));

/** A fraction as a percentage with one decimal (the paper's style: 90.4%). */
export const percent = (v: number | null | undefined): string =>
  v === null || v === undefined ? NA : `${(100 * v).toFixed(1)}%`;

export const ci95 = (e: IntervalSummary): string => (e.ci95 ? `[${fixed3(e.ci95[0])}, ${fixed3(e.ci95[1])}]` : "");

const ofCount = (part: number, whole: number) => `${part}/${whole}`;

function levelRow(name: string, l: LevelAgreement): string[] {
  return [
    name,
    String(l.n),
    String(l.n_categories),
    `${percent(l.percent_agreement)} (${ofCount(l.n_agreed, l.n)})`,
    fixed3(l.cohen_kappa),
    fixed3(l.gwet_ac1.value),
    fixed3(l.gwet_ac1.se),
    ci95(l.gwet_ac1),
  ];
}

const MISSING_LABEL = new Map<string, string>(MISSING_INFO.map((m) => [m.key, m.label]));

function sourceText(report: StudyReport): string {
  const s = report.label_distributions.source;
  const parts = [
    s.agreed ? `${s.agreed} agreed` : "",
    s.adjudicated ? `${s.adjudicated} adjudicated` : "",
    s.reference ? `${s.reference} imported reference` : "",
  ].filter(Boolean);
  return parts.length ? `Source: gold labels of ${parts.join(", ")} case(s).` : "Source: no gold labels yet.";
}

function blocks(report: StudyReport): Block[] {
  const out: Block[] = [];
  const heading = (text: string, level: 1 | 2 = 2) => out.push({ kind: "heading", text, level });
  const text = (t: string) => out.push({ kind: "text", text: t });
  const table = (header: string[], rows: string[][]) => out.push({ kind: "table", header, rows });
  const c = report.case_counts;

  heading(`Study report: ${report.study.name}`, 1);
  text(
    "Agreement between the two primary annotations of each case, before adjudication (docs/statistics.md); " +
      "A and B are the rows and columns of each table, by the rule stated under Sufficiency.",
  );

  heading("Cases");
  table(
    ["State", "Cases"],
    [
      ["All cases", String(c.n_cases)],
      ["No annotation submitted", String(c.annotations_in.none)],
      ["One annotation submitted", String(c.annotations_in.one)],
      ["Both annotations in", String(c.annotations_in.both)],
      ["Agreed", String(c.outcomes.agreed)],
      ["Disputed, awaiting adjudication", String(c.outcomes.disputed)],
      ["Adjudicated", String(c.outcomes.adjudicated)],
      ["Disputed on sufficiency (incl. adjudicated)", String(c.disputes_by_reason.sufficiency)],
      ["Disputed on diagnosis (incl. adjudicated)", String(c.disputes_by_reason.diagnosis)],
      ["With a gold label", String(c.with_gold)],
    ],
  );

  const s = report.sufficiency;
  heading("Sufficiency");
  text(`${s.n} case(s) with both primary annotations. ${report.raters.description}`);
  table(
    ["A \\ B", ...s.categories],
    s.categories.map((k, i) => [k, ...s.matrix[i].map(String)]),
  );
  table(
    ["Statistic", "Value", "SE", "95% CI"],
    [
      ["Percent agreement", `${percent(s.percent_agreement)} (${ofCount(s.n_agreed, s.n)})`, "", ""],
      ["Cohen's kappa", fixed3(s.cohen_kappa), "", ""],
      ["Gwet's AC1", fixed3(s.gwet_ac1.value), fixed3(s.gwet_ac1.se), ci95(s.gwet_ac1)],
    ],
  );

  const e = report.earliest_section;
  heading("Earliest sufficient section");
  text(`${e.n} case(s) both annotators called sufficient; scale 1..${e.sections.length}.`);
  table(
    ["Statistic", "Value", "SE", "95% CI"],
    [
      ["Exact agreement", `${percent(e.exact_agreement)} (${ofCount(e.n_exact, e.n)})`, "", ""],
      ["Mean |difference| (sections)", fixed3(e.mean_absolute_difference), "", ""],
      ...(["linear", "quadratic"] as const).flatMap((w) => [
        [`Cohen's weighted kappa (${w})`, fixed3(e.weighted[w].cohen_kappa_weighted), "", ""],
        [
          `Gwet's AC2 (${w})`,
          fixed3(e.weighted[w].gwet_ac2.value),
          fixed3(e.weighted[w].gwet_ac2.se),
          ci95(e.weighted[w].gwet_ac2),
        ],
      ]),
    ],
  );
  table(
    ["|A − B| (sections)", "Cases", "Share"],
    e.differences.map((d) => [String(d.difference), String(d.n), percent(d.share)]),
  );

  const d = report.diagnosis;
  heading("Diagnosis");
  text(`${d.n} case(s) both annotators called sufficient.`);
  table(
    ["Level", "n", "Categories", "Percent agreement", "Cohen's kappa", "Gwet's AC1", "SE", "95% CI"],
    [
      levelRow("Diagnosis level", d.diagnosis_level),
      levelRow("Category (3 characters)", d.category),
      levelRow("Group (WHO block)", d.group),
    ],
  );

  const p = report.per_diagnosis;
  heading("Per diagnosis");
  if (p.source === null) text("No case has both a gold diagnosis and annotator labels.");
  else {
    text(
      `The ${p.rows.length} most frequent of ${p.n_categories} gold categories; agreement between the annotators ` +
        (p.source === "reference_labels"
          ? "from the imported agreement flags."
          : "of the cases with that gold category."),
    );
    table(
      ["Category", "Title", "n", "Sufficiency agreement", "Diagnosis agreement", "Category agreement"],
      p.rows.map((r) => [
        r.category,
        r.title ?? "",
        String(r.n),
        percent(r.sufficiency_agreement),
        percent(r.diagnosis_agreement),
        r.n_category_agreed === null ? NA : percent(r.category_agreement),
      ]),
    );
  }

  const l = report.label_distributions;
  heading("Expert action labels by section");
  text(`${sourceText(report)} Each case's last section is in the Final column (docs/statistics.md).`);
  table(
    ["Section", "Clarify", "Diagnose", "Abstain", "Total"],
    l.action_labels.rows.map((r) => [
      r.column,
      String(r.clarify),
      String(r.diagnose),
      String(r.abstain),
      String(r.total),
    ]),
  );

  heading("Gold labels");
  text(`${sourceText(report)} ${l.sufficiency.sufficient} sufficient, ${l.sufficiency.insufficient} insufficient.`);
  table(
    ["ICD-10 code", "Cases"],
    l.icd10_codes.map((r) => [r.code, String(r.n)]),
  );
  table(
    ["Category", "Title", "Cases"],
    l.icd10_categories.map((r) => [r.category, r.title ?? "", String(r.n)]),
  );
  table(
    ["WHO block", "Cases"],
    l.icd10_groups.map((r) => [r.group, String(r.n)]),
  );
  if (l.missing_info.length) {
    table(
      ["Missing information (insufficient)", "Cases"],
      l.missing_info.map((r) => [MISSING_LABEL.get(r.key) ?? r.key, String(r.n)]),
    );
  }

  heading("Cases by age group and number of sections");
  table(
    ["Age group", "Cases"],
    l.age_groups.map((r) => [r.age_group, String(r.n)]),
  );
  table(
    ["Sections", "Cases"],
    l.section_counts.map((r) => [String(r.sections), String(r.n)]),
  );

  const ref = report.reference_agreement;
  if (ref) {
    heading("Imported agreement flags");
    text(
      `${ref.n} case(s) carry the imported dataset's agreement flags (percent agreement only: no annotator labels).`,
    );
    table(
      ["Flag", "Percent agreement"],
      [
        [
          REFERENCE_NAMES.sufficiencyAgreement,
          `${percent(ref.sufficiency.percent_agreement)} (${ofCount(ref.sufficiency.n_agreed, ref.sufficiency.n)})`,
        ],
        [
          REFERENCE_NAMES.diagnosisAgreement,
          `${percent(ref.diagnosis.percent_agreement)} (${ofCount(ref.diagnosis.n_agreed, ref.diagnosis.n)})`,
        ],
      ],
    );
  }

  const reasons = Object.entries(report.reasons);
  if (reasons.length || report.notes.length) {
    heading("Notes");
    for (const n of report.notes) text(`- ${n}`);
    for (const [path, reason] of reasons) text(`- ${path} is ${NA}: ${reason}`);
  }
  return out;
}

const NUMERIC_CELL = /^(|n\/a|[-−\d.,%/()[\] ]+)$/;

/** Columns after the first whose every cell is a number, a share, a count "k/n", an interval or n/a: right-aligned. */
function numericColumns(header: string[], rows: string[][]): boolean[] {
  return header.map((_, i) => i > 0 && rows.some((r) => r[i]) && rows.every((r) => NUMERIC_CELL.test(r[i] ?? "")));
}

function padTable(header: string[], rows: string[][]): string[] {
  const all = [header, ...rows];
  const widths = header.map((_, i) => maxOf(all.map((r) => (r[i] ?? "").length)));
  const numeric = numericColumns(header, rows);
  const line = (r: string[]) =>
    ("  " + r.map((cell, i) => (numeric[i] ? cell.padStart(widths[i]) : cell.padEnd(widths[i]))).join("   ")).trimEnd();
  return [line(header), "  " + widths.map((w) => "-".repeat(w)).join("   "), ...rows.map(line)];
}

/** Plain text with aligned tables, for a terminal. */
export function formatStudyReportText(report: StudyReport): string {
  return blocksText(blocks(report));
}

/** Headings, paragraphs and aligned tables as plain text. */
export function blocksText(list: readonly Block[]): string {
  const lines: string[] = [];
  for (const b of list) {
    if (b.kind === "heading") {
      if (lines.length && lines[lines.length - 1] !== "") lines.push("");
      lines.push(b.text, (b.level === 1 ? "=" : "-").repeat(b.text.length));
    } else if (b.kind === "text") lines.push(b.text);
    else if (b.rows.length === 0) lines.push("  (none)");
    else pushAll(lines, [...padTable(b.header, b.rows), ""]);
  }
  return lines.join("\n").replace(/\n+$/, "") + "\n";
}

const mdCell = (s: string) => s.replace(/\\/g, "\\\\").replace(/\|/g, "\\|").replace(/\r?\n/g, " ");

/** GitHub-flavoured Markdown. */
export function formatStudyReportMarkdown(report: StudyReport): string {
  return blocksMarkdown(blocks(report));
}

/** Headings, paragraphs and tables as GitHub-flavoured Markdown. */
export function blocksMarkdown(list: readonly Block[]): string {
  const parts: string[] = [];
  for (const b of list) {
    if (b.kind === "heading") parts.push(`${"#".repeat(b.level)} ${mdCell(b.text)}`);
    else if (b.kind === "text") parts.push(b.text);
    else if (b.rows.length === 0) parts.push("_None._");
    else {
      parts.push(
        [
          `| ${b.header.map(mdCell).join(" | ")} |`,
          `| ${numericColumns(b.header, b.rows)
            .map((n) => (n ? "---:" : "---"))
            .join(" | ")} |`,
          ...b.rows.map((r) => `| ${r.map(mdCell).join(" | ")} |`),
        ].join("\n"),
      );
    }
  }
  // Consecutive list items stay one list.
  return parts.join("\n\n").replace(/\n\n(?=- )/g, "\n") + "\n";
}
