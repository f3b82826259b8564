/**
 * Writes a multiple-choice report folder (docs/mc-evaluation.md, "Reports"): report.md, scores.json, one CSV per
 * table, per-run item CSV and scores JSON, the figures as SVG and PNG, and manifest.json with the sha256 of every
 * file and of every run's responses, and each run's decoding parameters. Deterministic apart from `created_at`.
 */
import { createHash } from "node:crypto";
import { writeFolderAtomic } from "../platform/output-files.server";
import type { TopLevelSpec } from "vega-lite";
import { formatCsv } from "../formats/csv-text";
import { renderSvg, svgToPng } from "../charts/charts.server";
import { CASE_TYPES } from "./domain/items";
import { mentalBenchRows, mentatRows } from "./domain/scores";
import { reportMarkdown, reportTables, type LoadedRun, type McReport } from "./report";

const sha256 = (data: string | Uint8Array) => createHash("sha256").update(data).digest("hex");

export function accuracyByTypeSpec(report: McReport): TopLevelSpec | null {
  const values = report.mentalbench.flatMap(({ model, seed, scores }) =>
    CASE_TYPES.flatMap((t) => {
      const g = scores.by_type[t];
      return g && g.accuracy !== null
        ? [{ run: `${model} (seed ${seed})`, type: `Type ${t}`, accuracy: 100 * g.accuracy }]
        : [];
    }),
  );
  if (!values.length) return null;
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    title: "MentalBench accuracy by case type",
    data: { values },
    mark: "bar",
    encoding: {
      x: { field: "type", type: "nominal", title: null, axis: { labelAngle: 0 } },
      xOffset: { field: "run" },
      y: { field: "accuracy", type: "quantitative", title: "accuracy (%)", scale: { domain: [0, 100] } },
      color: { field: "run", type: "nominal", title: "model" },
    },
    width: 360,
    height: 220,
  } as TopLevelSpec;
}

export function driftSpec(report: McReport, dimension: string): TopLevelSpec | null {
  const values = report.mentat.flatMap(({ model, seed, drift }) =>
    drift
      .filter((d) => d.dimension === dimension)
      .flatMap((d) =>
        d.conditions.flatMap((c) =>
          c.accuracy === null
            ? []
            : [
                {
                  run: `${model} (seed ${seed})`,
                  condition: c.condition,
                  accuracy: 100 * c.accuracy,
                  lo: 100 * (c.ci95?.[0] ?? c.accuracy),
                  hi: 100 * (c.ci95?.[1] ?? c.accuracy),
                },
              ],
        ),
      ),
  );
  if (!values.length) return null;
  // The figure says in words which differences the paired tests find beyond chance, so it cannot be misread.
  const findings = report.mentat.flatMap(({ model, seed, drift }) =>
    drift
      .filter((d) => d.dimension === dimension)
      .flatMap((d) =>
        d.tests
          .filter((t) => t.significant)
          .map((t) => `${model} (seed ${seed}): ${t.first} vs ${t.second}, Holm p = ${t.p_holm.toPrecision(2)}`),
      ),
  );
  const alpha = report.drift_options.alpha;
  const subtitle = findings.length
    ? [
        `Beyond chance (paired McNemar, Holm, α = ${alpha}):`,
        ...findings.slice(0, 6),
        ...(findings.length > 6 ? [`… and ${findings.length - 6} more`] : []),
      ]
    : [`No difference between conditions beyond chance (paired McNemar, Holm, α = ${alpha}).`];
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    title: { text: `MENTAT accuracy by ${dimension} (95% bootstrap intervals)`, subtitle },
    data: { values },
    encoding: {
      x: { field: "condition", type: "nominal", title: dimension, sort: null, axis: { labelAngle: 0 } },
      xOffset: { field: "run" },
      color: { field: "run", type: "nominal", title: "model" },
    },
    layer: [
      {
        mark: "rule",
        encoding: {
          y: { field: "lo", type: "quantitative", title: "accuracy (%)", scale: { domain: [0, 100] } },
          y2: { field: "hi" },
        },
      },
      { mark: { type: "point", filled: true, size: 50 }, encoding: { y: { field: "accuracy", type: "quantitative" } } },
    ],
    width: Math.max(360, 110 * new Set(values.map((v) => v.condition)).size),
    height: 220,
  } as TopLevelSpec;
}

export function reportFigures(report: McReport): { name: string; spec: TopLevelSpec }[] {
  const out: { name: string; spec: TopLevelSpec }[] = [];
  const byType = accuracyByTypeSpec(report);
  if (byType) out.push({ name: "accuracy-by-type", spec: byType });
  for (const d of ["gender", "age", "race"]) {
    const spec = driftSpec(report, d);
    if (spec) out.push({ name: `drift-${d}`, spec });
  }
  return out;
}

const safe = (s: string) => s.replace(/[^\w.-]+/g, "-");

function itemCsv(run: LoadedRun): string {
  if (run.run.items_format === "mentalbench") {
    const rows = mentalBenchRows(run.records);
    const byId = new Map(run.records.map((r) => [r.item_id, r]));
    return formatCsv([
      [
        "item_id",
        "type",
        "disease",
        "cluster",
        "answer",
        "status",
        "letters",
        "rule",
        "reason",
        "correct",
        "reference_letters",
        "reference_correct",
      ],
      ...rows.map((r) => {
        const rec = byId.get(r.id)!;
        return [
          r.id,
          r.facts.type,
          r.facts.disease,
          r.facts.cluster ?? "",
          r.facts.answer.join("&"),
          r.status,
          rec.parse.letters.join("&"),
          rec.parse.rule ?? "",
          rec.parse.reason ?? "",
          r.status === "parsed" ? String(r.correct) : "",
          (rec.reference_letters ?? []).join("&"),
          String(r.reference_correct),
        ];
      }),
    ]);
  }
  const rows = mentatRows(run.records);
  return formatCsv([
    [
      "item_id",
      "question_id",
      "dataset",
      "domain",
      "gender",
      "age",
      "race",
      "label_source",
      "status",
      "letter",
      "correct",
      "cross_entropy",
      "preference_mass",
    ],
    ...rows.map((r) => [
      r.id,
      r.facts.question_id,
      r.facts.dataset,
      r.facts.domain,
      r.facts.demographics.gender ?? "",
      r.facts.demographics.age === null ? "" : String(r.facts.demographics.age),
      r.facts.demographics.race ?? "",
      r.facts.label_source,
      r.status,
      r.letter ?? "",
      r.status === "parsed" ? String(r.correct) : "",
      r.cross_entropy === null ? "" : String(r.cross_entropy),
      r.preference_mass === null ? "" : String(r.preference_mass),
    ]),
  ]);
}

export interface WrittenReport {
  files: string[];
}

export async function writeReport(
  report: McReport,
  runs: readonly LoadedRun[],
  outDir: string,
  options: { version: string; createdAt: string; figures: boolean },
): Promise<WrittenReport> {
  const files: Record<string, string | Uint8Array> = {};
  files["report.md"] = reportMarkdown(report);
  files["scores.json"] = JSON.stringify(report, null, 2) + "\n";
  for (const t of reportTables(report)) files[`${t.name}.csv`] = formatCsv([t.header, ...t.rows]);
  for (const run of runs) {
    const stem = `runs/${safe(run.run.model.key)}_${run.run.items_format}_seed-${run.run.seed}`;
    files[`${stem}.csv`] = itemCsv(run);
    const scores =
      run.run.items_format === "mentalbench"
        ? report.mentalbench.find((m) => m.model === run.run.model.key && m.seed === run.run.seed)
        : report.mentat.find((m) => m.model === run.run.model.key && m.seed === run.run.seed);
    files[`${stem}.json`] = JSON.stringify(scores ?? null, null, 2) + "\n";
  }
  if (options.figures) {
    for (const f of reportFigures(report)) {
      const svg = await renderSvg(f.spec);
      files[`${f.name}.svg`] = svg;
      files[`${f.name}.png`] = new Uint8Array(svgToPng(svg));
    }
  }
  const names = Object.keys(files).sort();
  const manifest = {
    format: "concord-mc-report/1",
    software: { name: "concord", version: options.version },
    created_at: options.createdAt,
    scoring: report.scoring,
    drift: report.drift_options,
    runs: runs.map((r) => ({
      dir: r.dir,
      model: r.run.model,
      items_format: r.run.items_format,
      seed: r.run.seed,
      status: r.run.status,
      decoding: r.run.decoding,
      mentalbench_style: r.run.mentalbench_style,
      few_shot: r.run.few_shot,
      prompts: r.run.prompts,
      responses_sha256: r.responsesSha256,
      answered: r.records.length,
      num_items: r.run.num_items,
    })),
    files: Object.fromEntries(names.map((n) => [n, sha256(files[n]!)])),
  };
  // The folder whole or not at all (docs/reliability.md, "Atomic files").
  writeFolderAtomic(outDir, { ...files, "manifest.json": JSON.stringify(manifest, null, 2) + "\n" });
  return { files: [...names, "manifest.json"] };
}
