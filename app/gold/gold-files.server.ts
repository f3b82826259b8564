/**
 * The gold export's folder on disk (docs/reliability.md, "Atomic files"): written whole or not at all, and checked
 * against its manifest.
 */
import { createHash, randomBytes } from "node:crypto";
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { z } from "zod";

function syncPath(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Bytes kept in memory per file before they are written out. Small: text held across many garbage collections makes
 * the runtime allocate such text straight into its old generation, which then grows with the export (at 1 MiB the
 * peak of a 100,000-case export-gold was 193 MiB, at 64 KiB 132 MiB, the same as at 50,000).
 */
const FLUSH_BYTES = 1 << 16;

/**
 * Writes the folder `out` whole or not at all: into a temporary folder beside it, each file synced, then the old folder
 * moved aside and the new one renamed into its place, so that a reader — or a kill — finds either the old export or
 * the new one, never a mix. The old folder is removed last. Leftovers of an interrupted run (`.NAME.*.partial`,
 * `.NAME.*.old`) are removed at the next run; an `.old` folder left without `out` is the previous export and is put
 * back first. The files' text is produced piece by piece: `produce` calls `write(file, text)` as often as it likes
 * (a file is created when first written) and its result is returned. When `keep(result)` is false, nothing replaces
 * `out` and the temporary folder is removed.
 */
export function writeFolderStreaming<R>(
  out: string,
  produce: (write: (file: string, text: string) => void) => R,
  keep: (result: R) => boolean,
): R {
  const target = resolve(out);
  const parent = dirname(target);
  const name = basename(target);
  mkdirSync(parent, { recursive: true });
  if (existsSync(target) && !statSync(target).isDirectory()) throw new Error("it exists and is not a folder");
  recoverLeftovers(parent, name, target);
  const tag = randomBytes(6).toString("hex");
  const temp = join(parent, `.${name}.${tag}.partial`);
  const old = join(parent, `.${name}.${tag}.old`);
  mkdirSync(temp);
  const open = new Map<string, { fd: number; pending: string[]; size: number }>();
  const flush = (f: { fd: number; pending: string[]; size: number }) => {
    if (f.size) writeSync(f.fd, f.pending.join(""));
    f.pending = [];
    f.size = 0;
  };
  try {
    const result = produce((file, text) => {
      let f = open.get(file);
      if (!f) open.set(file, (f = { fd: openSync(join(temp, file), "wx", 0o600), pending: [], size: 0 }));
      f.pending.push(text);
      f.size += text.length;
      if (f.size >= FLUSH_BYTES) flush(f);
    });
    for (const f of open.values()) {
      flush(f);
      fsyncSync(f.fd);
      closeSync(f.fd);
    }
    open.clear();
    if (!keep(result)) {
      rmSync(temp, { recursive: true, force: true });
      return result;
    }
    syncPath(temp);
    if (existsSync(target)) renameSync(target, old);
    renameSync(temp, target);
    syncPath(parent);
    rmSync(old, { recursive: true, force: true });
    return result;
  } catch (e) {
    for (const f of open.values()) closeSync(f.fd);
    rmSync(temp, { recursive: true, force: true });
    if (existsSync(old) && !existsSync(target)) renameSync(old, target);
    throw e;
  }
}

function recoverLeftovers(parent: string, name: string, target: string): void {
  for (const entry of readdirSync(parent)) {
    if (!entry.startsWith(`.${name}.`)) continue;
    const path = join(parent, entry);
    if (entry.endsWith(".old") && !existsSync(target)) renameSync(path, target);
    else if (entry.endsWith(".partial") || entry.endsWith(".old")) rmSync(path, { recursive: true, force: true });
  }
}

const ManifestFiles = z.record(
  z.string(),
  z.object({ sha256: z.string().regex(/^[0-9a-f]{64}$/), records: z.number().int().min(0) }),
);
const Manifest = z.object({ files: ManifestFiles });

/** What is wrong with an export folder against its manifest.json (each file present, its sha256); empty when it matches. */
export function verifyGoldFolder(dir: string): string[] {
  const manifestPath = join(dir, "manifest.json");
  if (!existsSync(manifestPath)) return ["no manifest.json: not an export folder, or an export that did not finish."];
  let manifest: z.infer<typeof Manifest>;
  try {
    const parsed = Manifest.safeParse(JSON.parse(readFileSync(manifestPath, "utf8")));
    if (!parsed.success) return [`manifest.json does not list the files with their sha256 and record counts.`];
    manifest = parsed.data;
  } catch (e) {
    return [`manifest.json is not valid JSON (${(e as Error).message}).`];
  }
  const problems: string[] = [];
  for (const [file, want] of Object.entries(manifest.files)) {
    if (file.includes("/") || file.includes("\\") || file.startsWith(".")) {
      problems.push(`manifest.json names "${file}", which is not a file of the folder.`);
      continue;
    }
    const path = join(dir, file);
    if (!existsSync(path)) {
      problems.push(`${file} is missing.`);
      continue;
    }
    const sha = createHash("sha256").update(readFileSync(path)).digest("hex");
    if (sha !== want.sha256)
      problems.push(`${file} does not match the manifest (sha256 ${sha}, expected ${want.sha256}).`);
  }
  return problems;
}
