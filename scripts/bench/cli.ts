/**
 * Target (docs/architecture.md, "The command line"): a command starts in at most 0.3 s. Measured as the wall time of
 * the compiled command line (`node build/cli/concord.js`, built by `npm run bench`) from spawn to exit, median of
 * nine runs after one warm-up, for a command that opens nothing (`--help`) and one that opens the database and checks
 * its migrations (`users list` on an empty, migrated database). The floor is `node -e 0` measured the same way.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fromRoot } from "../../app/platform/paths.server";
import type { Benchmark, Figures } from "./types";

const CLI = fromRoot("build", "cli", "concord.js");
const RUNS = 9;

function medianSeconds(args: string[], env: Record<string, string>): number {
  const times: number[] = [];
  for (let i = 0; i <= RUNS; i++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, args, { cwd: fromRoot(), env: { ...process.env, ...env }, encoding: "utf8" });
    const seconds = (performance.now() - t0) / 1000;
    if (r.status !== 0) throw new Error(`node ${args.join(" ")} failed: ${(r.stderr ?? "").trim().split("\n").at(-1)}`);
    if (i > 0) times.push(seconds);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

async function run(ctx: { log: (line: string) => void }): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), "concord-bench-cli-"));
  try {
    const env = { CONCORD_DB: join(dir, "concord.db"), CONCORD_DEMO: "0" };
    const floor = medianSeconds(["-e", "0"], env);
    const help = medianSeconds([CLI, "--help"], env);
    const users = medianSeconds([CLI, "users", "list"], env);
    ctx.log(
      `  node -e 0 ${r3(floor)} s; concord --help ${r3(help)} s; concord users list ${r3(users)} s (medians of ${RUNS})`,
    );
    const slowest = Math.max(help, users);
    return {
      "cli.start_help_s": { value: r3(help), unit: "s", target: "<= 0.3", pass: help <= 0.3 },
      "cli.start_users_list_s": { value: r3(users), unit: "s", target: "<= 0.3", pass: users <= 0.3 },
      "cli.node_floor_s": { value: r3(floor), unit: "s", target: null, pass: null },
      "cli.start_x_floor": { value: r3(slowest / floor), unit: "x", target: null, pass: null },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const benchmarks: Benchmark[] = [{ name: "cli", run }];
