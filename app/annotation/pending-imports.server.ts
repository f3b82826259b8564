import { and, eq, gt, lt } from "drizzle-orm";
import { randomBytes } from "node:crypto";
import { pendingImports } from "../../db/schema";
import type { CaseColumn } from "./domain/case-import";
import type { Db } from "../platform/db.server";
import { runDbWorker } from "../platform/db-worker.server";
import { getStudyByName, importCases, planImport, type ImportPlan } from "./studies.server";
import { ServiceError } from "../platform/service-error";

const PENDING_TTL_MS = 24 * 60 * 60 * 1000;

interface Stored {
  bytes: string;
  format?: "csv" | "jsonl";
  columnMap?: Partial<Record<CaseColumn, string>>;
}

/**
 * Checks an upload and, when it can be imported, keeps it until the admin confirms the preview. The file is stored
 * only in the database (never on disk), and only for the admin who uploaded it.
 */
export function stagePendingImport(
  db: Db,
  input: {
    userId: string;
    studyName: string;
    filename: string;
    bytes: Uint8Array;
    format?: "csv" | "jsonl";
    columnMap?: Partial<Record<CaseColumn, string>>;
  },
): { plan: ImportPlan; pendingId: string | null } {
  db.delete(pendingImports)
    .where(lt(pendingImports.createdAt, Date.now() - PENDING_TTL_MS))
    .run();
  const plan = planImport(db, input);
  if (!plan.ok || plan.create + plan.update + plan.labelChanges === 0) return { plan, pendingId: null };
  const id = randomBytes(12).toString("base64url");
  const stored: Stored = {
    bytes: Buffer.from(input.bytes).toString("base64"),
    format: input.format,
    columnMap: input.columnMap,
  };
  db.insert(pendingImports)
    .values({
      id,
      studyName: plan.studyName,
      filename: input.filename,
      content: stored,
      createdBy: input.userId,
      createdAt: Date.now(),
    })
    .run();
  return { plan, pendingId: id };
}

export function confirmPendingImport(
  db: Db,
  input: { id: string; userId: string },
): { plan: ImportPlan; studyId: number } {
  const row = db
    .select()
    .from(pendingImports)
    .where(
      and(
        eq(pendingImports.id, input.id),
        eq(pendingImports.createdBy, input.userId),
        gt(pendingImports.createdAt, Date.now() - PENDING_TTL_MS),
      ),
    )
    .get();
  if (!row) throw new ServiceError("This preview has expired or was already imported. Upload the file again.");
  const stored = row.content as Stored;
  const plan = importCases(
    db,
    {
      studyName: row.studyName,
      filename: row.filename,
      bytes: Buffer.from(stored.bytes, "base64"),
      format: stored.format,
      columnMap: stored.columnMap,
      actorId: input.userId,
    },
    // The web server does not wait for another import of the same study: the admin is told at once.
    { waitMs: 0 },
  );
  if (plan.ok) db.delete(pendingImports).where(eq(pendingImports.id, input.id)).run();
  return { plan, studyId: getStudyByName(db, row.studyName)?.id ?? 0 };
}

/** What the import's worker thread is given (app/annotation/pending-import-worker.ts). */
/** What the worker thread is given (with the database file). */
export interface PendingImportWork {
  id: string;
  userId: string;
}

/**
 * confirmPendingImport on a worker thread, for the web server (docs/reliability.md, "Bulk imports"): the import's
 * chunks leave room for this server's own requests, not only for other processes, because its thread only waits for
 * the worker's answer. Errors come back as the one-thread path raises them (a refusal as ServiceError, a held lock as
 * DatabaseBusyError, a full disk with its code). A database without a file (tests) is confirmed on this thread.
 */
export function confirmPendingImportOffThread(
  db: Db,
  input: { id: string; userId: string },
): Promise<ReturnType<typeof confirmPendingImport>> {
  // One worker per confirmation: two admins' imports of different studies run side by side, as before.
  return runDbWorker(
    "pending-import",
    db,
    input satisfies PendingImportWork,
    (here) => confirmPendingImport(here, input),
    { oneOff: true },
  );
}

export function discardPendingImport(db: Db, input: { id: string; userId: string }): void {
  db.delete(pendingImports)
    .where(and(eq(pendingImports.id, input.id), eq(pendingImports.createdBy, input.userId)))
    .run();
}
