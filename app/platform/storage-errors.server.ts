import { data } from "@remix-run/node";
import { DatabaseBusyError, isBusy } from "./db.server";

/**
 * A save that fails because the server's disk is full is not a bug in the page: it answers 507 (Insufficient
 * Storage) with a message the workspace shows above the fields, and the page keeps the draft, so nothing typed is
 * lost once space is freed (docs/security.md, "Honest answers").
 */
export const OUT_OF_SPACE_MESSAGE =
  "The server is out of disk space, so this was not saved. Your draft is kept in this page: leave it open, " +
  "tell the study manager, and save again once space has been freed.";

export interface OutOfSpace {
  ok: false;
  status: 507;
  message: string;
}

/** SQLite's "database or disk is full", or the operating system's ENOSPC from a file write. */
export function isOutOfSpace(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "SQLITE_FULL" || code === "ENOSPC" || (typeof code === "string" && code.startsWith("SQLITE_FULL"));
}

/**
 * A save refused because another process (an import, a backup) holds the database's write lock: it answers 503 with
 * Retry-After within the web server's short busy timeout, and the page keeps the draft and saves it again by itself
 * (docs/architecture.md, "Saving under load").
 */
export const BUSY_MESSAGE =
  "The database is busy with another task (an import or a backup), so this was not saved yet. Your draft is kept in " +
  "this page and is saved again automatically in a moment.";

/** Seconds the page is told to wait before saving again after a 503. */
export const BUSY_RETRY_AFTER_S = 1;

export interface Busy {
  ok: false;
  status: 503;
  message: string;
  /** The Retry-After header's value, also in the body for the page's retry. */
  retryAfter: number;
}

export type StorageRefusal = OutOfSpace | Busy;

/**
 * Runs a save; a full disk becomes the 507 result above, a write lock held elsewhere the 503 one, every other error
 * is left to the error boundary.
 */
export function unlessOutOfSpace<T>(save: () => T): T | StorageRefusal {
  try {
    return save();
  } catch (error) {
    return storageRefusal(error);
  }
}

/** unlessOutOfSpace for work that is awaited (an import confirmed on a worker thread). */
export async function unlessOutOfSpaceAwaited<T>(save: () => Promise<T>): Promise<T | StorageRefusal> {
  try {
    return await save();
  } catch (error) {
    return storageRefusal(error);
  }
}

/** A full disk's or a held lock's refusal; any other error is thrown again. */
function storageRefusal(error: unknown): StorageRefusal {
  if (isOutOfSpace(error)) return { ok: false, status: 507, message: OUT_OF_SPACE_MESSAGE };
  if (error instanceof DatabaseBusyError || isBusy(error))
    return { ok: false, status: 503, message: BUSY_MESSAGE, retryAfter: BUSY_RETRY_AFTER_S };
  throw error;
}

/** A workspace action's answer: the save result with its real status, and Retry-After on a 503. */
export function saveResponse<R extends { ok: boolean; status?: unknown }>(result: R) {
  const status = result.ok ? 200 : typeof result.status === "number" ? result.status : 500;
  const headers: Record<string, string> = status === 503 ? { "Retry-After": String(BUSY_RETRY_AFTER_S) } : {};
  // A save sent as the page is left (fetch keepalive, app/work-items/ui/use-save-state.ts) reads the new version from here.
  const saved = result as { ok: boolean; version?: unknown; savedAt?: unknown };
  if (saved.ok && typeof saved.version === "number") headers["X-Concord-Version"] = String(saved.version);
  if (saved.ok && typeof saved.savedAt === "number") headers["X-Concord-Saved-At"] = String(saved.savedAt);
  return data(result, { status, headers });
}
