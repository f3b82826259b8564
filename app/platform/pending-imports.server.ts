import { and, eq, gt, lt } from "drizzle-orm";
import { randomBytes } from "node:crypto";
import { pendingImports } from "../../db/schema";
import type { CaseColumn } from "../annotation/domain/case-import";
import { Worker } from "node:worker_threads";
import { DatabaseBusyError, type Db } from "./db.server";
import { workerScript } from "./worker-script.server";
import { getStudyByName, importCases, planImport, type ImportPlan } from "../annotation/studies.server";
import { ServiceError } from "./service-error";

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

/** What the import's worker thread is given (app/platform/pending-import-worker.ts). */
export interface PendingImportWork {
  dbPath: string;
  id: string;
  userId: string;
}

/** What it answers: the confirmation's result, or its error as plain fields (an Error does not cross threads). */
export type PendingImportReply =
  | { ok: true; result: ReturnType<typeof confirmPendingImport> }
  | {
      ok: false;
      name: string;
      /** A ServiceError: a refusal with a message for the admin. */
      service: boolean;
      message: string;
      code: string | null;
      status: number | null;
      field: string | null;
    };

/**
 * confirmPendingImport on a worker thread, for the web server (docs/reliability.md, "Bulk imports"): the import's
 * chunks leave room for this server's own requests, not only for other processes, because its thread only waits for
 * the worker's answer. Errors come back as the one-thread path raises them (a refusal as ServiceError, a held lock as
 * DatabaseBusyError, a full disk with its code). A database without a file (tests) is confirmed on this thread.
 */
export async function confirmPendingImportOffThread(
  db: Db,
  input: { id: string; userId: string },
): Promise<ReturnType<typeof confirmPendingImport>> {
  const dbPath = db.$client.name;
  if (db.$client.memory || !dbPath) return confirmPendingImport(db, input);
  const script = await workerScript("pending-import");
  const reply = await new Promise<PendingImportReply>((resolve, reject) => {
    const work: PendingImportWork = { dbPath, ...input };
    const worker = new Worker(script, { workerData: work });
    worker.once("message", resolve);
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`The import's worker thread stopped (exit code ${code}).`)));
  });
  if (reply.ok) return reply.result;
  if (reply.service) throw new ServiceError(reply.message, reply.field ?? undefined, reply.status ?? 400);
  if (reply.code?.startsWith("SQLITE_BUSY")) throw new DatabaseBusyError();
  throw Object.assign(new Error(reply.message), { name: reply.name, code: reply.code ?? undefined });
}

export function discardPendingImport(db: Db, input: { id: string; userId: string }): void {
  db.delete(pendingImports)
    .where(and(eq(pendingImports.id, input.id), eq(pendingImports.createdBy, input.userId)))
    .run();
}
