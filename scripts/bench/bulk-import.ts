/**
 * Bulk imports and exports (docs/reliability.md, "Bulk imports"), each command run as its own process the way a user
 * runs it (`node build/cli/concord.js`, compiled by `npm run bench`), on realistic notes in the released layout
 * (scripts/bench/realistic-notes.ts: varied, multi-line, quoted, about 300 bytes per section, seeded).
 *
 * `--only bulk-import`:
 * - draft saves while `import` writes 100,000 cases in another process: a draft-sized save (a row and its audit row,
 *   one IMMEDIATE transaction, as the work-item engine writes) every 20 ms on a connection with the web server's
 *   200 ms busy timeout, so a save that cannot get the lock in time is one the app would answer 503. Target: p99
 *   <= 10 ms and no failed save.
 * - `import` of 50,000 notes against two comparators run in the same invocation on the same file: a raw better-sqlite3
 *   import (the floor: scripts/bench/comparators/raw-import.mjs) and a Python standard-library preprocessing of the
 *   released CSV into data_gt.json and samples.json (scripts/bench/comparators/preprocess.py), which stands in for
 *   the reference implementation's preprocessing script (not part of this project). Targets: <= 0.5x the Python
 *   one, <= 5x the floor.
 * - `export-gold` of the same 50,000 cases against the same Python comparator (which writes the same two files) and a
 *   raw better-sqlite3 export (scripts/bench/comparators/raw-export.mjs). Targets: <= 0.5x the Python one, <= 5x the
 *   floor.
 *
 * `--only bulk-memory`:
 * - peak resident memory of `import` at 10,000, 50,000, 100,000 and 200,000 notes (GNU time's maximum RSS of the
 *   child, the lower of two runs): the import reads its file as a stream and holds one batch of cases, so doubling the file once the
 *   runtime's heap is at its working size must add at most 16 MiB, and 100,000 notes at most 1.5x the peak of 10,000.
 * - what the import and the export hold, garbage collected after every chunk (importHeld below).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { BATCH_CASES } from "../../app/annotation/studies.server";
import { EXPORT_BATCH } from "../../app/gold/gold-export.server";
import { openDatabase, WEB_BUSY_TIMEOUT_MS } from "../../app/platform/db.server";
import { fromRoot } from "../../app/platform/paths.server";
import { cachedRealisticReleasedCsv } from "./realistic-notes";
import type { Benchmark, Figures } from "./types";

const CLI = fromRoot("build", "cli", "concord.js");
const TIME = "/usr/bin/time";

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A released CSV of `n` realistic notes with reference labels (scripts/bench/realistic-notes.ts), generated once per
 * version of the generator and kept under the system's temporary folder for the next runs (read only here).
 */
function releasedCsv(n: number): string {
  return cachedRealisticReleasedCsv(n);
}

interface Measured {
  seconds: number;
  rssMiB: number | null;
  status: number | null;
  stderr: string;
}

/** Runs a command as a child process; wall time, and its peak RSS when GNU time is installed. */
function measure(cmd: string, args: string[], env: Record<string, string> = {}): Measured {
  const withTime = existsSync(TIME);
  const t0 = performance.now();
  const r = spawnSync(withTime ? TIME : cmd, withTime ? ["-f", "MAXRSS %M", cmd, ...args] : args, {
    cwd: fromRoot(),
    env: { ...process.env, ...env },
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  const seconds = (performance.now() - t0) / 1000;
  const m = /MAXRSS (\d+)/.exec(r.stderr ?? "");
  return { seconds, rssMiB: m ? Number(m[1]) / 1024 : null, status: r.status, stderr: r.stderr ?? "" };
}

function concord(dbPath: string, args: string[]): Measured {
  const m = measure(process.execPath, [CLI, ...args], { CONCORD_DB: dbPath, CONCORD_DEMO: "0" });
  if (m.status !== 0) throw new Error(`concord ${args[0]} failed: ${m.stderr.trim().split("\n").at(-1)}`);
  return m;
}

const python = (() => {
  const r = spawnSync("python3", ["-c", "import csv, json, sqlite3"], { encoding: "utf8" });
  return r.status === 0;
})();

async function savesDuringImport(dir: string, log: (l: string) => void): Promise<Figures> {
  const ROWS = 100_000;
  const dbPath = join(dir, "saves.db");
  const db = openDatabase(dbPath, { busyTimeoutMs: WEB_BUSY_TIMEOUT_MS });
  db.$client.exec("CREATE TABLE bench_drafts (id INTEGER PRIMARY KEY, body TEXT)");
  const file = releasedCsv(ROWS);
  const insert = db.$client.prepare("INSERT INTO bench_drafts (body) VALUES (?)");
  const audit = db.$client.prepare(
    "INSERT INTO events (at, entity, entity_id, action, changes) VALUES (?, 'bench', '1', 'save', '{}')",
  );
  const save = db.$client.transaction((body: string) => {
    insert.run(body);
    audit.run(Date.now());
  });
  const body = JSON.stringify({ sufficiency: "sufficient", icd10: "F32.1", notes: "x".repeat(400) });
  // The same saves with no import running: what a save costs on this machine at this moment (its commit waits for
  // the disk), the floor of the figure below.
  const alone: number[] = [];
  for (let i = 0; i < 150; i++) {
    const t = performance.now();
    save.immediate(body);
    alone.push(performance.now() - t);
    await sleep(20);
  }
  alone.sort((a, b) => a - b);
  const started = performance.now();
  const child = spawn(process.execPath, [CLI, "import", "--study", "Bulk", file], {
    cwd: fromRoot(),
    env: { ...process.env, CONCORD_DB: dbPath, CONCORD_DEMO: "0" },
    stdio: "ignore",
  });
  let running = true;
  let exitCode: number | null = null;
  child.on("exit", (code) => ((running = false), (exitCode = code)));
  const times: number[] = [];
  // Of each save, the time it waited for the write lock (BEGIN IMMEDIATE, the import's chunk ahead of it) and the
  // rest (its writes and its commit, which waits for the disk): which of the two a slow save spent its time on.
  const waits: number[] = [];
  const commits: number[] = [];
  const begin = db.$client.prepare("BEGIN IMMEDIATE");
  const commit = db.$client.prepare("COMMIT");
  let failed = 0;
  while (running) {
    const t = performance.now();
    try {
      begin.run();
      const locked = performance.now();
      waits.push(locked - t);
      try {
        insert.run(body);
        audit.run(Date.now());
        commit.run();
      } catch (e) {
        if (db.$client.inTransaction) db.$client.exec("ROLLBACK");
        throw e;
      }
      commits.push(performance.now() - locked);
    } catch {
      // Busy past the web server's timeout: the app would have answered 503. Counted with the time it waited.
      failed++;
    }
    times.push(performance.now() - t);
    await sleep(20);
  }
  const importMs = performance.now() - started;
  const imported = (db.$client.prepare("select count(*) as n from cases").get() as { n: number }).n;
  db.$client.close();
  if (exitCode !== 0 || imported !== ROWS)
    throw new Error(`the 100k import failed (exit ${exitCode}, ${imported} cases)`);
  times.sort((a, b) => a - b);
  waits.sort((a, b) => a - b);
  commits.sort((a, b) => a - b);
  const p99 = quantile(times, 0.99);
  log(
    `saves with no import running: median ${round(quantile(alone, 0.5))} ms, p99 ${round(quantile(alone, 0.99))} ms; ` +
      `import of ${ROWS} cases took ${Math.round(importMs)} ms; ${times.length} saves meanwhile: median ${round(
        quantile(times, 0.5),
      )} ms, p99 ${round(p99)} ms, max ${round(times.at(-1) ?? 0)} ms, ${failed} failed (busy past ${WEB_BUSY_TIMEOUT_MS} ms); ` +
      `of which waiting for the lock: median ${round(quantile(waits, 0.5))} ms, p99 ${round(quantile(waits, 0.99))} ms; ` +
      `writing and committing: median ${round(quantile(commits, 0.5))} ms, p99 ${round(quantile(commits, 0.99))} ms`,
  );
  return {
    "bulk_import.import_100k_ms": { value: Math.round(importMs), unit: "ms", target: null, pass: null },
    "bulk_import.save_p99_ms": { value: round(p99), unit: "ms", target: "<= 10", pass: p99 <= 10 },
    "bulk_import.save_alone_p99_ms": {
      value: round(quantile(alone, 0.99)),
      unit: "ms",
      target: null,
      pass: null,
    },
    "bulk_import.save_lock_wait_p99_ms": {
      value: round(quantile(waits, 0.99)),
      unit: "ms",
      target: null,
      pass: null,
    },
    "bulk_import.save_commit_p99_ms": { value: round(quantile(commits, 0.99)), unit: "ms", target: null, pass: null },
    "bulk_import.failed_saves": { value: failed, unit: "saves", target: "0", pass: failed === 0 },
  };
}

function importAndExport(dir: string, log: (l: string) => void): Figures {
  const N = 50_000;
  const file = releasedCsv(N);
  const dbPath = join(dir, "io.db");
  const imp = concord(dbPath, ["import", "--study", "Bulk", file]);
  const floor = measure(process.execPath, [
    fromRoot("scripts", "bench", "comparators", "raw-import.mjs"),
    file,
    join(dir, "floor.db"),
  ]);
  const out = join(dir, "export");
  const exp = concord(dbPath, ["export-gold", "--study", "Bulk", "--out", out]);
  const expFloor = measure(process.execPath, [
    fromRoot("scripts", "bench", "comparators", "raw-export.mjs"),
    dbPath,
    join(dir, "floor.json"),
  ]);
  const py = python
    ? measure("python3", [fromRoot("scripts", "bench", "comparators", "preprocess.py"), file, join(dir, "py")])
    : null;
  log(
    `50k notes: import ${round(imp.seconds, 2)} s (peak ${round(imp.rssMiB ?? 0, 0)} MiB), raw better-sqlite3 floor ${round(
      floor.seconds,
      2,
    )} s; export-gold ${round(exp.seconds, 2)} s (peak ${round(exp.rssMiB ?? 0, 0)} MiB), raw floor ${round(
      expFloor.seconds,
      2,
    )} s; ` +
      (py
        ? `Python standard-library preprocessing ${round(py.seconds, 2)} s (stands in for the reference script, which is not part of this project)`
        : "python3 is not available: the ratios to the Python comparator are not measured"),
  );
  const ratio = (a: Measured, b: Measured | null) => (b ? round(a.seconds / b.seconds, 2) : -1);
  return {
    "import_50k.seconds": { value: round(imp.seconds, 2), unit: "s", target: null, pass: null },
    "import_50k.floor_seconds": { value: round(floor.seconds, 2), unit: "s", target: null, pass: null },
    "import_50k.x_floor": {
      value: ratio(imp, floor),
      unit: "x",
      target: "<= 5",
      pass: imp.seconds <= 5 * floor.seconds,
    },
    "import_50k.x_python": {
      value: ratio(imp, py),
      unit: "x",
      target: "<= 0.5",
      pass: py ? imp.seconds <= 0.5 * py.seconds : null,
    },
    "export_gold_50k.seconds": { value: round(exp.seconds, 2), unit: "s", target: null, pass: null },
    "export_gold_50k.peak_rss_mib": { value: round(exp.rssMiB ?? -1, 0), unit: "MiB", target: null, pass: null },
    "export_gold_50k.floor_seconds": { value: round(expFloor.seconds, 2), unit: "s", target: null, pass: null },
    "export_gold_50k.x_floor": {
      value: ratio(exp, expFloor),
      unit: "x",
      target: "<= 5",
      pass: exp.seconds <= 5 * expFloor.seconds,
    },
    "export_gold_50k.x_python": {
      value: ratio(exp, py),
      unit: "x",
      target: "<= 0.5",
      pass: py ? exp.seconds <= 0.5 * py.seconds : null,
    },
    "preprocess_python_50k.seconds": { value: py ? round(py.seconds, 2) : -1, unit: "s", target: null, pass: null },
  };
}

function importMemory(dir: string, log: (l: string) => void): Figures {
  const sizes = [10_000, 50_000, 100_000, 200_000];
  const peak: Record<number, Measured> = {};
  const exportPeak: Record<number, Measured> = {};
  const runs: Record<number, string> = {};
  for (const n of sizes) {
    const file = releasedCsv(n);
    // Twice, into a fresh database each time; the lower peak counts: on a loaded machine the collector's concurrent
    // marking can fall behind and let the heap overshoot by tens of MiB, which says nothing about what the import holds.
    const twice = [1, 2].map((k) => {
      const db = join(dir, `mem-${n}-${k}.db`);
      const m = concord(db, ["import", "--study", "Bulk", file]);
      if (k === 1) {
        const out = join(dir, `mem-${n}-gold`);
        exportPeak[n] = concord(db, ["export-gold", "--study", "Bulk", "--out", out]);
        rmSync(out, { recursive: true, force: true });
      }
      for (const suffix of ["", "-wal", "-shm"]) rmSync(db + suffix, { force: true });
      return m;
    });
    runs[n] = twice.map((m) => round(m.rssMiB ?? -1, 0)).join(" and ");
    peak[n] = twice.reduce((a, b) => ((a.rssMiB ?? Infinity) <= (b.rssMiB ?? Infinity) ? a : b));
  }
  const rss = (n: number) => peak[n]!.rssMiB ?? -1;
  const measured = rss(10_000) > 0;
  const growth = measured ? round(rss(100_000) / rss(10_000), 2) : -1;
  // Doubling the file once the runtime's heap has reached its working size (its young generation grows to its
  // maximum within the first tens of thousands of cases): the import holds one batch of cases, so this stays small.
  const doubling = (from: number) => (measured ? round(rss(2 * from) - rss(from), 0) : -1);
  log(
    `import peak RSS: ${sizes
      .map((n) => `${n / 1000}k notes ${round(rss(n), 0)} MiB (runs: ${runs[n]} MiB; ${round(peak[n]!.seconds, 2)} s)`)
      .join(", ")}`,
  );
  const exportRss = (n: number) => exportPeak[n]!.rssMiB ?? -1;
  log(
    `export-gold peak RSS: ${sizes.map((n) => `${n / 1000}k cases ${round(exportRss(n), 0)} MiB (${round(exportPeak[n]!.seconds, 2)} s)`).join(", ")}`,
  );
  const exportDoubling = (from: number) => (measured ? round(exportRss(2 * from) - exportRss(from), 0) : -1);
  const flat = (from: number) => ({
    value: doubling(from),
    unit: "MiB",
    target: "<= 16 (flat)",
    pass: measured ? doubling(from) <= 16 : null,
  });
  return {
    "import.peak_rss_10k_mib": { value: round(rss(10_000), 0), unit: "MiB", target: null, pass: null },
    "import.peak_rss_50k_mib": { value: round(rss(50_000), 0), unit: "MiB", target: null, pass: null },
    "import.peak_rss_100k_mib": { value: round(rss(100_000), 0), unit: "MiB", target: null, pass: null },
    "import.peak_rss_200k_mib": { value: round(rss(200_000), 0), unit: "MiB", target: null, pass: null },
    "import.rss_growth_10k_to_100k": {
      value: growth,
      unit: "x",
      target: "<= 1.5 (flat)",
      pass: measured ? growth <= 1.5 : null,
    },
    "import.rss_50k_to_100k_mib": flat(50_000),
    "import.rss_100k_to_200k_mib": flat(100_000),
    "export_gold.peak_rss_10k_mib": { value: round(exportRss(10_000), 0), unit: "MiB", target: null, pass: null },
    "export_gold.peak_rss_100k_mib": { value: round(exportRss(100_000), 0), unit: "MiB", target: null, pass: null },
    "export_gold.peak_rss_200k_mib": { value: round(exportRss(200_000), 0), unit: "MiB", target: null, pass: null },
    "export_gold.rss_growth_10k_to_100k": {
      value: measured ? round(exportRss(100_000) / exportRss(10_000), 2) : -1,
      unit: "x",
      target: "<= 1.5 (flat)",
      pass: measured ? exportRss(100_000) / exportRss(10_000) <= 1.5 : null,
    },
    "export_gold.rss_50k_to_100k_mib": {
      value: exportDoubling(50_000),
      unit: "MiB",
      target: "<= 16 (flat)",
      pass: measured ? exportDoubling(50_000) <= 16 : null,
    },
    "export_gold.rss_100k_to_200k_mib": {
      value: exportDoubling(100_000),
      unit: "MiB",
      target: "<= 16 (flat)",
      pass: measured ? exportDoubling(100_000) <= 16 : null,
    },
  };
}

interface Held {
  max: number;
  min: number;
  samples: number;
  /** The export's bytes written per record. */
  bytesPerRecord?: number;
}

/** The probe's figures for one file (scripts/bench/import-held.ts). */
function heldDuringImport(dir: string, file: string): { import: Held; export: Held } {
  const db = join(dir, "held.db");
  const r = spawnSync(
    process.execPath,
    ["--expose-gc", "--import", "tsx", fromRoot("scripts", "bench", "import-held.ts"), db, file],
    { cwd: fromRoot(), encoding: "utf8", env: { ...process.env, CONCORD_DEMO: "0" }, maxBuffer: 16 << 20 },
  );
  for (const suffix of ["", "-wal", "-shm"]) rmSync(db + suffix, { force: true });
  if (r.status !== 0) throw new Error(`import-held failed: ${r.stderr.trim().split("\n").at(-1)}`);
  return JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { import: Held; export: Held };
}

/**
 * What the import and the gold export hold, garbage collected after every chunk (every 500 records), at 10,000 and
 * 100,000 notes. The import reads the file as a stream, keeps the ids it has read on disk and holds one batch of
 * cases at a time; the export reads the study and writes its records a batch at a time; so the most either holds is
 * the same at both sizes: the largest at 100,000 may exceed the largest at 10,000 by at most twice a batch's bytes
 * (the import's batch in the file it reads, the export's in the files it writes).
 */
function importHeld(dir: string, log: (l: string) => void): Figures {
  const held: Record<number, { import: Held; export: Held }> = {};
  // A batch's bytes: the import's in the file it reads, the export's in the files it writes.
  const batchBytes = { import: 0, export: 0 };
  for (const n of [10_000, 100_000]) {
    const file = releasedCsv(n);
    batchBytes.import = Math.max(batchBytes.import, (BATCH_CASES * statSync(file).size) / n);
    held[n] = heldDuringImport(dir, file);
    batchBytes.export = Math.max(batchBytes.export, EXPORT_BATCH * held[n]!.export.bytesPerRecord!);
  }
  const mib = (bytes: number) => round(bytes / 2 ** 20, 2);
  const figures: Figures = {};
  for (const kind of ["import", "export"] as const) {
    const at = (n: number) => held[n]![kind];
    const growth = at(100_000).max - at(10_000).max;
    const sizes = [10_000, 100_000]
      .map((n) => `${n / 1000}k notes ${mib(at(n).min)}–${mib(at(n).max)} MiB over ${at(n).samples} samples`)
      .join(", ");
    const batch =
      kind === "import"
        ? `a batch of ${BATCH_CASES} cases is ${round(batchBytes.import / 1024, 0)} KiB of the file`
        : `a batch of ${EXPORT_BATCH} records is ${round(batchBytes.export / 1024, 0)} KiB of the files written`;
    const what =
      kind === "import"
        ? "import holds (collected every chunk)"
        : "export-gold holds (every 640 KiB of data.csv, about 500 records)";
    log(`${what}: ${sizes}; 100k − 10k: ${growth >= 0 ? "+" : ""}${round(growth / 1024, 0)} KiB; ${batch}`);
    const name = kind === "import" ? "import" : "export_gold";
    figures[`${name}.held_10k_mib`] = { value: mib(at(10_000).max), unit: "MiB", target: null, pass: null };
    figures[`${name}.held_100k_mib`] = { value: mib(at(100_000).max), unit: "MiB", target: null, pass: null };
    figures[`${name}.held_growth_10k_to_100k_kib`] = {
      value: round(growth / 1024, 0),
      unit: "KiB",
      target: `<= ${round((2 * batchBytes[kind]) / 1024, 0)} (2 batches)`,
      pass: growth <= 2 * batchBytes[kind],
    };
  }
  return figures;
}

/** A fresh folder for a group's files, removed after it. */
async function inTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  if (!existsSync(CLI)) throw new Error("build/cli/concord.js is missing: run `npm run build:cli` first.");
  const dir = mkdtempSync(join(tmpdir(), "concord-bench-bulk-"));
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const benchmarks: Benchmark[] = [
  {
    name: "bulk-import",
    run: ({ log }) =>
      inTempDir(async (dir) => ({ ...(await savesDuringImport(dir, log)), ...importAndExport(dir, log) })),
  },
  {
    name: "bulk-memory",
    run: ({ log }) => inTempDir(async (dir) => ({ ...importMemory(dir, log), ...importHeld(dir, log) })),
  },
];
