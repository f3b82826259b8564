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

/** A trajectory file found under the folders given, not yet read. */
export interface LocatedFile {
  /** Where it is on disk. */
  file: string;
  /** Its path as the metrics see it (TrajectoryFile.path). */
  path: string;
  /** Under a runs_seeds folder: read by the seed script only (and by the paper mode). */
  seedsOnly: boolean;
}

/** The trajectory files under `dirs` and where the metrics place them, without reading them (see the module's comment). */
export function locateTrajectoryFiles(dirs: readonly string[]): LocatedFile[] {
  const located: LocatedFile[] = [];
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
    for (const file of found) {
      const rel = relative(absolute, file).split(sep).join("/");
      const path = direct ? `${root}/${basename(absolute)}/${rel}` : `${root}/${rel}`;
      located.push({ file, path, seedsOnly: isSeeds });
    }
  }
  return located;
}

export function findTrajectoryFiles(dirs: readonly string[]): FoundFiles {
  const runs: TrajectoryFile[] = [];
  const seedsOnly: TrajectoryFile[] = [];
  for (const { file, path, seedsOnly: isSeeds } of locateTrajectoryFiles(dirs))
    (isSeeds ? seedsOnly : runs).push({ path, text: readFileSync(file, "utf8") });
  const seeds = dirs.some((d) =>
    resolve(d)
      .split(sep)
      .some((p) => p.includes("runs_seeds")),
  )
    ? seedsOnly
    : runs.map((f) => ({ path: f.path.replace(/^runs\//, "runs_seeds/"), text: f.text }));
  return { runs, seeds, seedsOnly };
}

/**
 * The files as `findTrajectoryFiles` groups them, from files already read (an evaluation's stored runs): the paths
 * say which are under runs_seeds; without any, the runs also play the seed script's runs_seeds.
 */
export function groupTrajectoryFiles(files: readonly TrajectoryFile[]): FoundFiles {
  const runs = files.filter((f) => !f.path.startsWith("runs_seeds/"));
  const seedsOnly = files.filter((f) => f.path.startsWith("runs_seeds/"));
  const seeds =
    seedsOnly.length > 0
      ? seedsOnly
      : runs.map((f) => ({ path: f.path.replace(/^runs\//, "runs_seeds/"), text: f.text }));
  return { runs, seeds, seedsOnly };
}
