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

/** Runs a save; a full disk becomes the 507 result above, every other error is left to the error boundary. */
export function unlessOutOfSpace<T>(save: () => T): T | OutOfSpace {
  try {
    return save();
  } catch (error) {
    if (isOutOfSpace(error)) return { ok: false, status: 507, message: OUT_OF_SPACE_MESSAGE };
    throw error;
  }
}
