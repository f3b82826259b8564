/**
 * Finds the trajectory files under the `--runs` folders of `concord metrics` and places them in the layout the
 * reference scripts expect (docs/formats.md#run-folders): a folder holding run folders plays `runs/`; a run folder given directly
 * is placed at `runs/<its name>/`; a folder whose path names `runs_seeds` plays the seed script's
 * `evaluations/multiple_seed_runs/runs_seeds/` (without one, every folder also plays that role).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join, relative, resolve, sep } from "node:path";
import type { TrajectoryFile } from "./domain/metrics-inputs";

/** Files any script or the paper mode might read: `*trajectories*.json*`. */
const CANDIDATE = /trajectories.*\.json/;

function walk(dir: string, found: string[]): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, found);
    else if (entry.isFile() && CANDIDATE.test(entry.name)) found.push(path);
  }
}

export interface FoundFiles {
  /** Files under the reference's runs/ (every mode reads them). */
  runs: TrajectoryFile[];
  /** Files the seed script reads. */
  seeds: TrajectoryFile[];
  /** Files only the seed script reads (under a runs_seeds folder); the paper mode reads them too. */
  seedsOnly: TrajectoryFile[];
}

export function findTrajectoryFiles(dirs: readonly string[]): FoundFiles {
  const runs: TrajectoryFile[] = [];
  const seedsOnly: TrajectoryFile[] = [];
  for (const dir of dirs) {
    if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new Error(`${dir} is not a folder`);
    const absolute = resolve(dir);
    const isSeeds = absolute.split(sep).some((part) => part.includes("runs_seeds"));
    const root = isSeeds ? "runs_seeds" : "runs";
    const direct = readdirSync(absolute).some(
      (name) => CANDIDATE.test(name) && statSync(join(absolute, name)).isFile(),
    );
    const found: string[] = [];
    walk(absolute, found);
    found.sort();
    for (const path of found) {
      const rel = relative(absolute, path).split(sep).join("/");
      const virtual = direct ? `${root}/${basename(absolute)}/${rel}` : `${root}/${rel}`;
      (isSeeds ? seedsOnly : runs).push({ path: virtual, text: readFileSync(path, "utf8") });
    }
  }
  const seeds = dirs.some((d) =>
    resolve(d)
      .split(sep)
      .some((p) => p.includes("runs_seeds")),
  )
    ? seedsOnly
    : runs.map((f) => ({ path: f.path.replace(/^runs\//, "runs_seeds/"), text: f.text }));
  return { runs, seeds, seedsOnly };
}
