/**
 * The one output layer (docs/reliability.md, "Atomic files"): every file Concord writes — a report folder of the
 * command line, an export, a backup, the temporary file a web download is made in — is written here, complete or
 * not at all. A file is written under a temporary name beside its target, every byte checked written (a write to a
 * full disk may write part of its bytes without an error: the rest is written again, which then fails), synced,
 * closed and renamed into place; a folder is written as a temporary folder beside its target and renamed into place.
 * On any error the temporary file or folder is removed, the target is left as it was, and the error thrown is an
 * OutputError that names the real cause (the disk is full, permission denied, a read-only file system), never the
 * error of a clean-up step after it.
 *
 * The rest of app/ may not import node:fs's write functions (eslint.config.js, "one output layer"); the exceptions
 * listed there are logs that must survive a kill by appending (a run's step log and responses) and are not final
 * files.
 */
import { randomBytes } from "node:crypto";
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";

export type FileContent = string | Uint8Array;

/** A file or folder that could not be written; `cause` says why in words, `code` is the system's code (ENOSPC, …). */
export class OutputError extends Error {
  constructor(
    readonly target: string,
    readonly code: string | null,
    readonly reason: string,
  ) {
    super(
      `cannot write ${target}: ${reason}. Nothing was written${code === "ENOSPC" ? "; free some space and try again" : ""}.`,
    );
    this.name = "OutputError";
  }
}

const CAUSES: Record<string, string> = {
  ENOSPC: "the disk is full",
  EDQUOT: "the disk quota is used up",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EROFS: "the file system is read-only",
  EIO: "the disk reported an input/output error",
  ENOTDIR: "a part of the path is not a folder",
  EISDIR: "it is a folder",
  ENAMETOOLONG: "the name is too long",
  EMFILE: "too many files are open",
  SQLITE_FULL: "the disk is full",
  SQLITE_READONLY: "the file system is read-only",
  SQLITE_CANTOPEN: "the file cannot be created there (permission denied, or no such folder)",
  SQLITE_IOERR: "the disk reported an input/output error",
};

/** The words for a write error's cause: the disk is full, permission denied, … (the system's message otherwise). */
export function outputCause(error: unknown): string {
  const code = errorCode(error);
  if (code && CAUSES[code]) return `${CAUSES[code]} (${code})`;
  return error instanceof Error ? error.message : String(error);
}

function errorCode(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return null;
  // SQLite's extended codes (SQLITE_IOERR_WRITE, SQLITE_READONLY_DBMOVED) by their primary code.
  const primary = code.match(/^SQLITE_[A-Z]+/)?.[0];
  return primary && CAUSES[primary] ? primary : code;
}

/** The error as an OutputError for `target` (kept as it is when it already is one). */
export function asOutputError(target: string, error: unknown): OutputError {
  if (error instanceof OutputError) return error;
  return new OutputError(target, errorCode(error), outputCause(error));
}

// ---------------------------------------------------------------------------------------------------------------
// A full disk on demand, for the tests of every writer (test/integration/output-faults.test.ts): the layer's own
// writes fail with `code` once `afterBytes` bytes have been written (part of the failing write is written first, as
// a full disk does), or at the first open for writing when `afterBytes` is null (permission denied, a read-only
// file system). Nothing outside tests sets it.

interface Fault {
  code: string;
  remaining: number | null;
}
let fault: Fault | null = null;

/** Makes the layer's writes fail with `code` after `afterBytes` bytes (null: at the first open); returns the undo. */
export function injectOutputFault(code: string, afterBytes: number | null = 0): () => void {
  fault = { code, remaining: afterBytes };
  return () => {
    fault = null;
  };
}

function systemError(code: string, syscall: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${CAUSES[code] ?? "error"}, ${syscall}`), { code, syscall });
}

function openForWrite(path: string, flags: string, mode: number): number {
  if (fault && fault.remaining === null) throw systemError(fault.code, "open");
  return openSync(path, flags, mode);
}

/** Writes every byte of `data` (a short write is continued, so a full disk ends in its error, never a short file). */
function writeAll(fd: number, data: FileContent): void {
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  let offset = 0;
  while (offset < bytes.byteLength) {
    let length = bytes.byteLength - offset;
    if (fault && fault.remaining !== null) {
      if (fault.remaining <= 0) throw systemError(fault.code, "write");
      length = Math.min(length, fault.remaining);
      fault.remaining -= length;
    }
    offset += writeSync(fd, bytes, offset, length);
  }
}

/** Flushes a file or a folder (its entries, after a rename) to disk. */
export function syncPath(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function tempName(target: string, suffix: string): string {
  return join(dirname(target), `.${basename(target)}.${randomBytes(6).toString("hex")}.${suffix}`);
}

/** A file being written under a temporary name: `write` as often as needed, then `commit` or `abort`. */
class PendingFile {
  private fd: number | null;
  private pending: string[] = [];
  private size = 0;

  constructor(
    readonly path: string,
    mode: number,
  ) {
    this.fd = openForWrite(path, "wx", mode);
  }

  /** Text is gathered into pieces of about 64 KiB before it is written (few system calls, little memory). */
  write(data: FileContent): void {
    if (typeof data !== "string") {
      this.flush();
      writeAll(this.fd!, data);
      return;
    }
    this.pending.push(data);
    this.size += data.length;
    if (this.size >= FLUSH_CHARS) this.flush();
  }

  flush(): void {
    if (this.size) writeAll(this.fd!, this.pending.join(""));
    this.pending = [];
    this.size = 0;
  }

  /** Writes what is left, syncs and closes; the file is then complete under its temporary name. */
  finish(): void {
    this.flush();
    fsyncSync(this.fd!);
    const fd = this.fd!;
    this.fd = null;
    closeSync(fd);
  }

  /** Closes (if still open) and removes the temporary file; errors of this clean-up are not the cause. */
  abort(): void {
    if (this.fd !== null) {
      try {
        closeSync(this.fd);
      } catch {
        // The write's own error is the one reported.
      }
      this.fd = null;
    }
    rmSync(this.path, { force: true });
  }
}

/**
 * Text kept in memory per file before it is written out. Small: text held across many garbage collections makes the
 * runtime allocate such text straight into its old generation, which then grows with the export (at 1 MiB the peak
 * of a 100,000-case export-gold was 193 MiB, at 64 KiB 132 MiB, the same as at 50,000).
 */
const FLUSH_CHARS = 1 << 16;

/**
 * A file being written under a temporary name beside `path`: `write` as often as needed, then `commit` (synced and
 * renamed to `path`) or `abort` (removed; `path` as it was). A failed write or commit removes the temporary file
 * itself and throws an OutputError naming the cause; a caller whose own work fails in between calls `abort`.
 */
export interface OutputFile {
  write(data: FileContent): void;
  commit(): void;
  abort(): void;
}

/**
 * A temporary file of this layer left beside `target` by a process that was killed while writing it
 * (`.NAME.<12 hex>.partial`), untouched for a minute: removed when the same file is written again. A writer still at
 * work writes at least every few seconds, so its file is never taken for a leftover.
 */
const LEFTOVER_AGE_MS = 60_000;

function removeFileLeftovers(target: string): void {
  const dir = dirname(target);
  const pattern = new RegExp(
    `^\\.${basename(target).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\.[0-9a-f]{12}\\.partial$`,
  );
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return;
  }
  for (const entry of entries) {
    if (!pattern.test(entry)) continue;
    const path = join(dir, entry);
    try {
      if (Date.now() - statSync(path).mtimeMs > LEFTOVER_AGE_MS) rmSync(path, { force: true });
    } catch {
      // Gone meanwhile, or not ours to remove: the new file is written all the same.
    }
  }
}

export function openOutputFile(path: string, options: { mode?: number } = {}): OutputFile {
  const target = resolve(path);
  let file: PendingFile;
  try {
    mkdirSync(dirname(target), { recursive: true });
    removeFileLeftovers(target);
    file = new PendingFile(tempName(target, "partial"), options.mode ?? 0o644);
  } catch (e) {
    throw asOutputError(path, e);
  }
  let done = false;
  const failed = (e: unknown) => {
    done = true;
    file.abort();
    return asOutputError(path, e);
  };
  return {
    write(data) {
      if (done) throw new Error(`${path} is already closed`);
      try {
        file.write(data);
      } catch (e) {
        throw failed(e);
      }
    },
    commit() {
      if (done) throw new Error(`${path} is already closed`);
      try {
        file.finish();
        renameSync(file.path, target);
        done = true;
        syncPath(dirname(target));
      } catch (e) {
        if (!done) throw failed(e);
        throw asOutputError(path, e);
      }
    },
    abort() {
      if (done) return;
      done = true;
      file.abort();
    },
  };
}

/**
 * Writes one file whole or not at all: `produce` calls `write` as often as it likes; the text goes to a temporary
 * file beside `path`, which is synced and renamed to `path` when `keep(result)` (default: always) is true. On any
 * error, or when not kept, the temporary file is removed and `path` is as it was. Errors of the file are OutputErrors
 * naming their cause; an error of `produce` itself is thrown as it is.
 */
export function writeFileStreaming<R>(
  path: string,
  produce: (write: (data: FileContent) => void) => R,
  keep: (result: R) => boolean = () => true,
  options: { mode?: number } = {},
): R {
  const file = openOutputFile(path, options);
  let result: R;
  try {
    result = produce((data) => file.write(data));
  } catch (e) {
    file.abort();
    throw e;
  }
  if (keep(result)) file.commit();
  else file.abort();
  return result;
}

/** writeFileStreaming of one whole content. */
export function writeFileAtomic(path: string, content: FileContent, options: { mode?: number } = {}): void {
  writeFileStreaming(path, (write) => write(content), undefined, options);
}

const writeErrors = new WeakSet<object>();
function isWriteError(e: unknown): boolean {
  return e instanceof OutputError || (typeof e === "object" && e !== null && writeErrors.has(e));
}

/** Runs a write of the layer, marking its error as a write error (for the callers that tell it from the producer's). */
function marked<T>(body: () => T): T {
  try {
    return body();
  } catch (e) {
    if (typeof e === "object" && e !== null) writeErrors.add(e);
    throw e;
  }
}

export interface FolderOptions {
  /**
   * Whether `out` may be replaced when it holds entries this write does not make: true for all, or a test of the
   * entry's name (files an earlier run of the same command wrote). Default: none, such a folder is refused, since
   * replacing it would delete those files. The gold export replaces its folder whole.
   */
  replaceForeign?: boolean | ((entry: string) => boolean);
  /** The files' permissions; default 0o644. The gold export's and the statistics CSVs are the owner's only (0o600). */
  mode?: number;
}

/**
 * Writes the folder `out` whole or not at all: into a temporary folder beside it, each file synced, then the old folder
 * moved aside and the new one renamed into its place, so that a reader — or a kill — finds either the old folder or
 * the new one, never a mix. The old folder is removed last. Leftovers of an interrupted run (`.NAME.*.partial`,
 * `.NAME.*.old`) are removed at the next run; an `.old` folder left without `out` is the previous one and is put
 * back first. The files' content is produced piece by piece: `produce` calls `write(file, data)` as often as it likes
 * (a file is created when first written; `file` may name a subfolder, `runs/a.csv`) and its result is returned. When
 * `keep(result)` is false, nothing replaces `out` and the temporary folder is removed. Errors of the files are
 * OutputErrors naming their cause; an error of `produce` itself is thrown as it is.
 */
export function writeFolderStreaming<R>(
  out: string,
  produce: (write: (file: string, data: FileContent) => void) => R,
  keep: (result: R) => boolean = () => true,
  options: FolderOptions = {},
): R {
  const target = resolve(out);
  const parent = dirname(target);
  const name = basename(target);
  let temp: string | null = null;
  let old: string | null = null;
  const open = new Map<string, PendingFile>();
  let producing = false;
  try {
    mkdirSync(parent, { recursive: true });
    if (existsSync(target) && !statSync(target).isDirectory())
      throw new OutputError(out, null, "it exists and is not a folder");
    recoverLeftovers(parent, name, target);
    const tag = randomBytes(6).toString("hex");
    temp = join(parent, `.${name}.${tag}.partial`);
    old = join(parent, `.${name}.${tag}.old`);
    if (fault && fault.remaining === null) throw systemError(fault.code, "mkdir");
    mkdirSync(temp, { mode: 0o755 });
    const dir = temp;
    producing = true;
    const result = produce((file, data) =>
      marked(() => {
        let f = open.get(file);
        if (!f) {
          if (file.split("/").some((part) => part === "" || part === "." || part === ".."))
            throw new Error(`"${file}" is not a file name inside the folder`);
          if (file.includes("/")) mkdirSync(dirname(join(dir, file)), { recursive: true });
          open.set(file, (f = new PendingFile(join(dir, file), options.mode ?? 0o644)));
        }
        f.write(data);
      }),
    );
    producing = false;
    for (const f of open.values()) f.finish();
    if (!keep(result)) {
      rmSync(temp, { recursive: true, force: true });
      return result;
    }
    if (existsSync(target) && options.replaceForeign !== true) {
      const mine = new Set([...open.keys()].map((f) => f.split("/")[0]!));
      const replaceable = typeof options.replaceForeign === "function" ? options.replaceForeign : () => false;
      const other = readdirSync(target).filter((e) => !mine.has(e) && !replaceable(e));
      if (other.length)
        throw new OutputError(
          out,
          null,
          `the folder holds other files (${other.slice(0, 3).join(", ")}${other.length > 3 ? ", …" : ""}), which replacing it would delete; name a new folder`,
        );
    }
    syncPath(temp);
    if (existsSync(target)) renameSync(target, old);
    renameSync(temp, target);
    temp = null;
    // The new folder is in place: the old one goes whatever happens next.
    try {
      syncPath(parent);
    } finally {
      rmSync(old, { recursive: true, force: true });
    }
    return result;
  } catch (e) {
    for (const f of open.values()) {
      try {
        f.abort();
      } catch {
        // The folder is removed below.
      }
    }
    if (temp) rmSync(temp, { recursive: true, force: true });
    if (old && existsSync(old) && !existsSync(target)) renameSync(old, target);
    if (producing && !isWriteError(e)) throw e;
    throw asOutputError(out, e);
  }
}

/** writeFolderStreaming of whole files: name (may include a subfolder, `runs/a.csv`) → content. */
export function writeFolderAtomic(out: string, files: Record<string, FileContent>, options: FolderOptions = {}): void {
  writeFolderStreaming(
    out,
    (write) => {
      for (const [file, content] of Object.entries(files)) write(file, content);
    },
    undefined,
    options,
  );
}

function recoverLeftovers(parent: string, name: string, target: string): void {
  for (const entry of readdirSync(parent)) {
    if (!entry.startsWith(`.${name}.`)) continue;
    const path = join(parent, entry);
    if (entry.endsWith(".old") && !existsSync(target)) renameSync(path, target);
    else if (entry.endsWith(".partial") || entry.endsWith(".old")) rmSync(path, { recursive: true, force: true });
  }
}

/**
 * Writes `path` whole or not at all through another writer (SQLite's online backup): `write` is given a temporary
 * name beside `path` to write and close; the file is then synced and renamed to `path`. On any error the temporary
 * file and the SQLite companions a connection may have left beside it (`-wal`, `-shm`, `-journal`) are removed, and
 * the error is an OutputError naming its cause.
 */
export async function writeFileWith(path: string, write: (temp: string) => Promise<void> | void): Promise<void> {
  const target = resolve(path);
  const temp = tempName(target, "partial");
  try {
    if (fault && fault.remaining === null) throw systemError(fault.code, "open");
    await write(temp);
    // The other writer's bytes are past any budget of an injected fault: it fails as the disk filling at the end.
    if (fault) throw systemError(fault.code, "write");
    syncPath(temp);
    renameSync(temp, target);
    syncPath(dirname(target));
  } catch (e) {
    removeWithCompanions(temp);
    throw asOutputError(path, e);
  }
}

/** Removes a file and the SQLite companions a connection may have left beside it. */
export function removeWithCompanions(path: string): void {
  for (const suffix of ["", "-wal", "-shm", "-journal"]) {
    try {
      unlinkSync(path + suffix);
    } catch {
      // Absent.
    }
  }
}
