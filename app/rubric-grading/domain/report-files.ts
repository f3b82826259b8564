/**
 * The report's files from an Evaluation (docs/rubric-grading.md, "Reports"): Table 1 as CSV and Markdown, the
 * per-tag tables (rubric tags such as `axis:*`, and example tags such as `theme:*`), the judge-agreement appendix
 * and the paired comparisons. Numbers are written with fixed decimals, rows in a stable order.
 */
import { formatCsv } from "../../formats/csv-text";
import type { Evaluation } from "./evaluation";

const f = (x: number | null | undefined, d = 4) => (x === null || x === undefined ? "" : x.toFixed(d));

export function table1Csv(e: Evaluation, judges: readonly string[]): string {
  return formatCsv([
    [
      "rank",
      "candidate",
      "panel",
      "ci95_low",
      "ci95_high",
      "bootstrap_std",
      ...judges.flatMap((j) => [j, `${j}_ci95_low`, `${j}_ci95_high`]),
      "conversations",
      "refusals",
      "excluded",
    ],
    ...e.table.map((r) => [
      String(r.rank),
      r.candidate,
      f(r.panel?.mean),
      f(r.panel?.ci95[0]),
      f(r.panel?.ci95[1]),
      f(r.panel?.bootstrapStd),
      ...judges.flatMap((j) => [f(r.judges[j]?.mean), f(r.judges[j]?.ci95[0]), f(r.judges[j]?.ci95[1])]),
      String(r.conversations),
      String(r.refusals),
      String(r.excluded),
    ]),
  ]);
}

export function table1Markdown(e: Evaluation, judges: readonly string[]): string {
  const head = ["Rank", "Candidate", "Panel (95% CI)", ...judges, "n"];
  const rows = e.table.map((r) => [
    String(r.rank),
    r.candidate,
    r.panel ? `${f(r.panel.mean, 3)} (${f(r.panel.ci95[0], 3)}–${f(r.panel.ci95[1], 3)})` : "—",
    ...judges.map((j) => f(r.judges[j]?.mean, 3) || "—"),
    String(r.conversations),
  ]);
  return [head, head.map(() => "---"), ...rows].map((r) => `| ${r.join(" | ")} |`).join("\n") + "\n";
}

export function tagsCsv(e: Evaluation, judges: readonly string[], keep: (tag: string) => boolean): string {
  return formatCsv([
    ["tag", "candidate", "panel", "n", ...judges],
    ...e.tags
      .filter((t) => keep(t.tag))
      .sort(
        (a, b) =>
          (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0) ||
          e.table.findIndex((r) => r.candidate === a.candidate) - e.table.findIndex((r) => r.candidate === b.candidate),
      )
      .map((t) => [t.tag, t.candidate, f(t.panel), String(t.n), ...judges.map((j) => f(t.judges[j]))]),
  ]);
}

export function pairedCsv(e: Evaluation): string {
  return formatCsv([
    ["a", "b", "difference", "ci95_low", "ci95_high", "p", "p_holm", "significant_95", "significant_95_holm", "n"],
    ...e.paired.map((p) => [
      p.a,
      p.b,
      f(p.difference),
      f(p.ci95[0]),
      f(p.ci95[1]),
      f(p.p),
      f(p.pHolm),
      p.significant ? "yes" : "no",
      p.significantHolm ? "yes" : "no",
      String(p.n),
    ]),
  ]);
}

export function agreementCsv(
  e: Evaluation,
  verdicts: readonly { a: string; b: string; n: number; agreement: number | null; kappa: number | null }[] = [],
): string {
  const a = e.agreement;
  return formatCsv([
    ["figure", "judge", "other", "value"],
    ...a.kendall.map((k) => ["kendall_tau_b", k.a, k.b, f(k.tau)]),
    ["grand_mean", "", "", f(a.grandMean)],
    ...a.judges.flatMap((j) => [
      ["judge_mean", j.judge, "", f(j.mean)],
      ["severity", j.judge, "", f(j.severity)],
    ]),
    ...a.selfPreference.flatMap((s) => [
      ["self_preference_raw", s.judge, s.candidate, f(s.raw)],
      ["self_preference_corrected", s.judge, s.candidate, f(s.corrected)],
    ]),
    ...verdicts.flatMap((v) => [
      ["verdict_pairs", v.a, v.b, String(v.n)],
      ["verdict_agreement", v.a, v.b, f(v.agreement)],
      ["verdict_cohen_kappa", v.a, v.b, f(v.kappa)],
    ]),
  ]);
}
