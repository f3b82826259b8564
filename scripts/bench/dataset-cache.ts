/**
 * Data sets the benchmarks generate, kept between `npm run bench` runs under the system's temporary folder
 * (`concord-bench-datasets/<version>/`, docs/development.md). A data set's version is a hash of the source files that
 * make it (its generator, and for a database the migrations), so a changed generator or schema makes a new one; a
 * file is written under a temporary name and renamed, so the cache holds whole files only.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A hash of the files (a folder: every file in it, by name) and of `extra`. */
export function sourceVersion(paths: string[], extra = ""): string {
  const hash = createHash("sha256").update(extra);
  const add = (path: string) => {
    if (statSync(path).isDirectory()) for (const name of readdirSync(path).sort()) add(join(path, name));
    else hash.update(path).update(readFileSync(path));
  };
  for (const path of paths) add(path);
  return hash.digest("hex").slice(0, 16);
}

/**
 * The cached file `name` of this `version`; `build` writes it (to the path it is given) the first time. The caller
 * must not change or remove it.
 */
export function cachedFile(version: string, name: string, build: (path: string) => void): string {
  const dir = join(tmpdir(), "concord-bench-datasets", version);
  const file = join(dir, name);
  if (existsSync(file)) return file;
  mkdirSync(dir, { recursive: true });
  const partial = `${file}.${process.pid}.partial`;
  try {
    build(partial);
    renameSync(partial, file);
  } finally {
    rmSync(partial, { force: true });
  }
  return file;
}

/** cachedFile for a data set written asynchronously. */
export async function cachedFileAsync(
  version: string,
  name: string,
  build: (path: string) => Promise<void>,
): Promise<string> {
  const dir = join(tmpdir(), "concord-bench-datasets", version);
  const file = join(dir, name);
  if (existsSync(file)) return file;
  mkdirSync(dir, { recursive: true });
  const partial = `${file}.${process.pid}.partial`;
  try {
    await build(partial);
    renameSync(partial, file);
  } finally {
    for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(partial + suffix, { force: true });
  }
  return file;
}
