/**
 * The cost of `synchronous = FULL` (docs/security.md, "Durability"): the time of one small write transaction (a
 * draft-sized row and its audit row) in WAL mode under NORMAL and under FULL, on a temporary file on this machine's
 * disk. FULL adds one fsync of the WAL per commit; the figure is reported, with the per-save budget of 250 ms as the
 * target for FULL's p99.
 */
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { Benchmark, Figures } from "./types";

const COMMITS = 300;

function commitTimes(mode: "NORMAL" | "FULL"): number[] {
  const dir = mkdtempSync(join(tmpdir(), "concord-bench-durability-"));
  try {
    const db = new Database(join(dir, "bench.db"));
    db.pragma("journal_mode = WAL");
    db.pragma(`synchronous = ${mode}`);
    db.exec(
      "CREATE TABLE drafts (id INTEGER PRIMARY KEY, body TEXT); CREATE TABLE events (id INTEGER PRIMARY KEY, body TEXT)",
    );
    const insert = db.prepare("INSERT INTO drafts (body) VALUES (?)");
    const audit = db.prepare("INSERT INTO events (body) VALUES (?)");
    const save = db.transaction((body: string) => {
      insert.run(body);
      audit.run(body);
    });
    const body = JSON.stringify({
      sufficiency: "sufficient",
      icd10: "F32.1",
      earliestSection: 2,
      notes: "x".repeat(400),
    });
    const times: number[] = [];
    for (let i = 0; i < COMMITS; i++) {
      const t = performance.now();
      save.immediate(body);
      times.push(performance.now() - t);
    }
    db.close();
    return times.sort((a, b) => a - b);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const round = (ms: number) => Math.round(ms * 1000) / 1000;

export const benchmarks: Benchmark[] = [
  {
    name: "durability",
    run: async ({ log }) => {
      const normal = commitTimes("NORMAL");
      const full = commitTimes("FULL");
      log(
        `${COMMITS} commits each: NORMAL median ${round(quantile(normal, 0.5))} ms, FULL median ${round(quantile(full, 0.5))} ms`,
      );
      const figures: Figures = {
        "durability.commit_median_normal_ms": {
          value: round(quantile(normal, 0.5)),
          unit: "ms",
          target: null,
          pass: null,
        },
        "durability.commit_median_full_ms": { value: round(quantile(full, 0.5)), unit: "ms", target: null, pass: null },
        "durability.commit_p99_full_ms": {
          value: round(quantile(full, 0.99)),
          unit: "ms",
          target: "<= 250",
          pass: quantile(full, 0.99) <= 250,
        },
      };
      return figures;
    },
  },
];
