/**
 * `npm run bench -- --only imports-memory`: the peak resident memory of the imports that read their file through the
 * one streaming reader (docs/reliability.md, "Bulk imports": memory bounded by the longest line, not by the file),
 * each run on a file and on one four times larger, in a fresh database each time. GNU time's maximum RSS of the
 * command line (build/cli, built by `npm run bench`). What each import keeps between lines is its own (ids and
 * hashes for `grade-import`, the checked rows for the others): the figures show how much of the file's growth reaches
 * the peak.
 *
 * The peak RSS also grows with what the runtime leaves uncollected while it has room, so each larger file is run
 * again with the old generation capped at HEAP_CAP_MIB: an import that holds only lines completes, one that holds
 * its file or its rows runs out of memory.
 *
 * - `grade-import`, `judge-import`, `mentat-import`, `casereview-import` and `mentat-import-ratings` (two passes,
 *   ids and hashes kept): target — completes with the cap;
 * - `screening-import --items` (rows kept until written), `judge-report --labels` (labels kept),
 *   `rater-quality --calibration` and `mc-run`'s CSV items (read through the streaming
 *   reader; what they keep is their own): reported.
 */
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fromRoot } from "../../app/platform/paths.server";
import type { Benchmark, Figures } from "./types";

const CLI = process.env.CONCORD_BENCH_CLI ?? fromRoot("build", "cli", "concord.js");
const TIME = "/usr/bin/time";
const MiB = 1024 * 1024;
/** The old-generation cap of the capped runs: far below the larger files. */
const HEAP_CAP_MIB = 48;
const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;

/** Writes `n` lines made by `line` to `file`, 4 MiB at a time (the bench itself never holds the file). */
function writeLines(file: string, n: number, line: (i: number) => string, header?: string): number {
  const fd = openSync(file, "w");
  try {
    let buffer: string[] = header ? [header] : [];
    let held = 0;
    for (let i = 0; i < n; i++) {
      const l = line(i);
      buffer.push(l);
      held += l.length;
      if (held > 4 * MiB) {
        writeSync(fd, buffer.join("\n") + "\n");
        buffer = [];
        held = 0;
      }
    }
    if (buffer.length) writeSync(fd, buffer.join("\n") + "\n");
  } finally {
    closeSync(fd);
  }
  return statSync(file).size;
}

const conversation = (i: number) =>
  JSON.stringify({
    prompt_id: `p${i}`,
    prompt: [
      {
        role: "user",
        content: `Question ${i}: I have not slept properly for ${i % 40} weeks and feel low. ${"x".repeat(900)}`,
      },
    ],
    rubrics: [
      { criterion: "Asks about duration.", points: 5, tags: ["axis:completeness"] },
      { criterion: "Suggests seeing a clinician.", points: 3, tags: ["axis:accuracy"] },
    ],
    example_tags: ["theme:hedging"],
  });

const screeningItem = (i: number) =>
  JSON.stringify({ id: `i${i}`, text: `Item ${i}: a conversation about low mood. ${"y".repeat(900)}` });

// 10 raters a response (judge-report's own figures spread one value a response: 200,000 responses overflow the stack).
const labelRow = (i: number) =>
  `r${Math.floor(i / 10)},rater${i % 10},${i % 2 ? "committed" : "differential"},none,diagnose`;

interface Kind {
  name: string;
  /** Run in the fresh database before the import (e.g. the study a calibration file is for). */
  setup?(dir: string): string[];
  /**
   * The import refuses the file after reading every line of it (exit 2), by design of the bench: its rows name
   * nothing in the database (a calibration file's cases, a ratings file's bank), or ask nothing (items whose answers
   * name no option, so that no model is called). The peak is that of reading and checking the whole file.
   */
  refuses?: boolean;
  /** Lines in the smaller file (the larger has four times as many). */
  lines: number;
  write(file: string, n: number): number;
  args(file: string): string[];
  extension: string;
}

const judgeResponse = (i: number) =>
  JSON.stringify({ id: `r${i}`, response: `Response ${i}: the symptoms suggest low mood. ${"z".repeat(900)}` });

const RATINGS_HEADER =
  "rt,stimulus,response,trial_type,trial_index,time_elapsed,internal_node_id,participant_name,rater_id,question_order,q_no,q,q_key";
const ratingRow = (i: number) =>
  `2000,,"{""Q0"":10,""Q1"":20,""Q2"":30,""Q3"":40,""Q4"":50,""comment"":""${"c".repeat(200)}""}",survey-slider,${i + 4},${i},0.0-${i + 4}.0,,,"[0,1,2,3,4]",${i + 1},Question ${i + 1},q_male`;

const CALIBRATION_HEADER = "study,case,purpose,sufficiency,icd10,earliest_section,missing_info,missing_other,rationale";
const calibrationRow = (i: number) =>
  `Earlier,e${i},calibration,sufficient,F32.1,2,,,Rationale ${i}: ${"r".repeat(60)}`;

const mcItemRow = (i: number) => `mb${i},Case ${i}: ${"q".repeat(900)},MDD,BD-II,GAD,PDD,none,I,GAD`;

const bankRow = (i: number) =>
  `q${i},triage,"A <AGE> patient asks about low mood ${i}: ${"b".repeat(800)}",Wait,Call,Refer,Admit,Discharge,c,Note ${i}`;

const reviewRow = (i: number) => `c${i},case,"A 40-year-old teacher ${i}, low mood: ${"v".repeat(900)}",F32.1`;

/**
 * A data_gt.json of `n` records, the reference fixture's records repeated under new ids (about 1.9 KiB each),
 * written record by record as export-gold writes one (each element indented by two spaces).
 */
function writeDataGt(file: string, n: number): number {
  const base = JSON.parse(readFileSync(fromRoot("test", "fixtures", "safe-psych", "concord.data_gt.json"), "utf8")) as {
    id: string;
  }[];
  let k = 0;
  return writeLines(file, n + 2, (i) => {
    if (i === 0) return "[";
    if (i === n + 1) return "]";
    const record = { ...base[k % base.length]!, id: `${base[k % base.length]!.id}-${k}` };
    k++;
    const text = JSON.stringify(record, null, 2).replace(/\n/g, "\n  ");
    return `  ${text}${i < n ? "," : ""}`;
  });
}

const KINDS: Kind[] = [
  {
    name: "grade-import",
    lines: 15_000,
    extension: "jsonl",
    write: (f, n) => writeLines(f, n, conversation),
    args: (f) => ["grade-import", "--set", "bench", f],
  },
  {
    name: "screening-import",
    lines: 15_000,
    extension: "jsonl",
    write: (f, n) => writeLines(f, n, screeningItem),
    args: (f) => ["screening-import", "--study", "bench", "--categories", "a;b", "--items", f],
  },
  {
    name: "judge-report-labels",
    lines: 200_000,
    extension: "csv",
    write: (f, n) => writeLines(f, n, labelRow, "response_id,rater,primary_answer,info_request,action"),
    args: (f) => ["judge-report", "--labels", f, "--json"],
  },
  {
    name: "judge-import",
    lines: 15_000,
    extension: "jsonl",
    write: (f, n) => writeLines(f, n, judgeResponse),
    args: (f) => ["judge-import", "--set", "bench", f],
  },
  {
    // Its limit is 20 MB: 4.5 and 18 MiB. The bank is not in the database: refused after every line is checked.
    name: "mentat-import-ratings",
    lines: 14_000,
    extension: "csv",
    refuses: true,
    write: (f, n) => writeLines(f, n, ratingRow, RATINGS_HEADER),
    args: (f) => ["mentat-import-ratings", "--bank", "bench", f],
  },
  {
    // Its limit is 2 MB: 0.45 and 1.8 MiB. The cases are not in the database: refused after every line is checked.
    name: "calibration",
    lines: 3_800,
    extension: "csv",
    refuses: true,
    setup: (dir) => {
      const notes = join(dir, "main.jsonl");
      writeLines(notes, 3, (i) =>
        JSON.stringify({
          id: `m${i}`,
          presenting_symptoms: "Low mood.",
          psychiatric_history: "None.",
          psychiatric_exam: "Slowed.",
        }),
      );
      return ["import", "--study", "Main", notes];
    },
    write: (f, n) => writeLines(f, n, calibrationRow, CALIBRATION_HEADER),
    args: (f) => ["rater-quality", "--study", "Main", "--calibration", f],
  },
  {
    // Its limit is 20 MB: 4.1 and 16.6 MiB, into a new bank.
    name: "mentat-import",
    lines: 4_500,
    extension: "csv",
    write: (f, n) => writeLines(f, n, bankRow, "id,domain,question,a,b,c,d,e,answer,notes"),
    args: (f) => ["mentat-import", "--bank", "bench", f],
  },
  {
    // Its limit is 20 MB: 4.2 and 16.8 MiB, into a new review set.
    name: "casereview-import",
    lines: 4_500,
    extension: "csv",
    write: (f, n) => writeLines(f, n, reviewRow, "id,kind,text,diagnosis"),
    args: (f) => ["casereview-import", "--set", "bench", f],
  },
  {
    // One JSON document (its limit is 1 GB): 14 and 56 MiB, into a new study.
    name: "import-gold",
    lines: 7_500,
    extension: "json",
    write: writeDataGt,
    args: (f) => ["import-gold", f, "--study", "bench"],
  },
  {
    // Every answer names no option: refused after every item is checked, so no model is asked.
    name: "mc-run-csv",
    lines: 15_000,
    extension: "csv",
    refuses: true,
    write: (f, n) => writeLines(f, n, mcItemRow, "id,question,A,B,C,D,answer,type,disease"),
    args: (f) => ["mc-run", "--items", f, "--models", "m", "--base-url", "http://127.0.0.1:1/v1", "--out", f + ".out"],
  },
];

function peakRss(
  args: string[],
  dbPath: string,
  heapCapMiB?: number,
): { rssMiB: number | null; seconds: number; status: number | null; err: string } {
  const withTime = existsSync(TIME);
  const cmd = process.execPath;
  const t0 = performance.now();
  const node = [...(heapCapMiB ? [`--max-old-space-size=${heapCapMiB}`] : []), CLI, ...args];
  const r = spawnSync(withTime ? TIME : cmd, withTime ? ["-f", "MAXRSS %M", cmd, ...node] : node, {
    cwd: fromRoot(),
    env: { ...process.env, CONCORD_DB: dbPath, CONCORD_DEMO: "0" },
    encoding: "utf8",
    maxBuffer: 256 * MiB,
  });
  const m = /MAXRSS (\d+)/.exec(r.stderr ?? "");
  return {
    rssMiB: m ? Number(m[1]) / 1024 : null,
    seconds: (performance.now() - t0) / 1000,
    status: r.status,
    err: (r.stderr ?? "").replace(/MAXRSS \d+\s*$/, "").trim(),
  };
}

export const benchmarks: Benchmark[] = [
  {
    name: "imports-memory",
    async run({ log }) {
      const figures: Figures = {};
      const dir = mkdtempSync(join(tmpdir(), "concord-bench-imports-memory-"));
      try {
        // CONCORD_BENCH_IMPORTS=name,name… runs only those (e.g. to measure a build of older code against these).
        const only = process.env.CONCORD_BENCH_IMPORTS?.split(",");
        for (const kind of KINDS.filter((k) => !only || only.includes(k.name))) {
          const runs: { mib: number; rss: number; seconds: number; capped: boolean }[] = [];
          for (const scale of [1, 4]) {
            const file = join(dir, `${kind.name}-${scale}.${kind.extension}`);
            const bytes = kind.write(file, kind.lines * scale);
            const dbPath = join(dir, `${kind.name}-${scale}.db`);
            const clean = () => {
              for (const suffix of ["", "-wal", "-shm"]) rmSync(dbPath + suffix, { force: true });
            };
            const expected = kind.refuses ? 2 : 0;
            const prepare = () => {
              if (!kind.setup) return;
              const p = peakRss(kind.setup(dir), dbPath);
              if (p.status !== 0) throw new Error(`${kind.name}: setup failed (exit ${p.status}): ${p.err}`);
            };
            prepare();
            const r = peakRss(kind.args(file), dbPath);
            if (r.status !== expected)
              throw new Error(`${kind.name} failed (exit ${r.status}): ${r.err.split("\n").at(-1)}`);
            clean();
            prepare();
            // The same import with the runtime's old generation capped far below the file: it completes only if
            // what it holds is bounded (an import that held the file would run out of memory).
            const capped = scale === 4 ? peakRss(kind.args(file), dbPath, HEAP_CAP_MIB).status === expected : true;
            clean();
            runs.push({ mib: bytes / MiB, rss: r.rssMiB ?? -1, seconds: r.seconds, capped });
            rmSync(file, { force: true });
          }
          const [small, large] = runs as [(typeof runs)[0], (typeof runs)[0]];
          log(
            `${kind.name}: ${round(small.mib)} MiB file peak ${round(small.rss, 0)} MiB (${round(small.seconds)} s); ` +
              `${round(large.mib)} MiB file peak ${round(large.rss, 0)} MiB (${round(large.seconds)} s); ` +
              `with the heap capped at ${HEAP_CAP_MIB} MiB: ${large.capped ? "completes" : "runs out of memory"}`,
          );
          const key = kind.name.replace(/-/g, "_");
          // The two-pass imports (secondPass): what they hold does not grow with the file.
          const bounded = [
            "grade-import",
            "judge-import",
            "mentat-import",
            "casereview-import",
            "mentat-import-ratings",
            "import-gold",
          ].includes(kind.name);
          figures[`${key}.peak_rss_small_mib`] = { value: round(small.rss, 0), unit: "MiB", target: null, pass: null };
          figures[`${key}.peak_rss_large_mib`] = { value: round(large.rss, 0), unit: "MiB", target: null, pass: null };
          figures[`${key}.large_file_mib`] = { value: round(large.mib, 0), unit: "MiB", target: null, pass: null };
          figures[`${key}.completes_with_heap_capped`] = {
            value: large.capped ? 1 : 0,
            unit: `(1 = completes with ${HEAP_CAP_MIB} MiB of old generation)`,
            target: bounded ? "1" : null,
            pass: bounded ? large.capped : null,
          };
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      return figures;
    },
  },
];
