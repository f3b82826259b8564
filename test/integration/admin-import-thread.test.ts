/**
 * A case import confirmed on the admin page runs on a worker thread (docs/reliability.md, "Bulk imports"): the web
 * server's own thread keeps running while the import writes — here, a timer on this thread reads the study list
 * through the services while a 20,000-note import is confirmed, and sees nothing of it until the end — and errors
 * come back as the one-thread path raises them.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SECTION_KINDS } from "../../app/annotation/domain/sections";
import { getStudyByName, listStudyCases } from "../../app/annotation/studies.server";
import Database from "better-sqlite3";
import { DatabaseBusyError, type Db } from "../../app/platform/db.server";
import { confirmPendingImportOffThread, stagePendingImport } from "../../app/annotation/pending-imports.server";
import { ServiceError } from "../../app/platform/service-error";
import { freshDb, makeUser } from "../support/db";

let db: Db;
let path: string;
let cleanup: () => void;
beforeEach(() => ({ db, path, cleanup } = freshDb()));
afterEach(() => cleanup());

const N = 20_000;
function notes(n: number): Uint8Array {
  const header = ["id", "age_group", "sex", ...SECTION_KINDS].join(",");
  const rows = Array.from(
    { length: n },
    (_, i) =>
      `n${i},38-47,F,Low mood for ${i % 50} weeks.,No admissions.,Tearful.${",".repeat(SECTION_KINDS.length - 3)}`,
  );
  return new TextEncoder().encode([header, ...rows].join("\n") + "\n");
}

describe("an import confirmed on the admin page", () => {
  it("writes on a worker thread: this thread keeps answering and sees nothing of the import until it ends", async () => {
    const admin = await makeUser(db, "admin1", ["admin"]);
    const { plan, pendingId } = stagePendingImport(db, {
      userId: admin.id,
      studyName: "Big",
      filename: "big.csv",
      bytes: notes(N),
    });
    expect(plan.ok).toBe(true);
    const seen: (number | null)[] = [];
    const timer = setInterval(() => {
      const study = getStudyByName(db, "Big");
      seen.push(study ? listStudyCases(db, study.id).length : null);
    }, 5);
    let confirmed: Awaited<ReturnType<typeof confirmPendingImportOffThread>>;
    try {
      confirmed = await confirmPendingImportOffThread(db, { id: pendingId!, userId: admin.id });
    } finally {
      clearInterval(timer);
    }
    expect(confirmed.plan).toMatchObject({ ok: true, create: N });
    expect(listStudyCases(db, confirmed.studyId)).toHaveLength(N);
    // On this thread, the timer ran while the import wrote (a one-thread import would have blocked it), and every
    // read saw no study or all of it.
    expect(seen.length).toBeGreaterThan(0);
    for (const count of seen) expect([null, N]).toContain(count);
  }, 60_000);

  it("refuses as the one-thread path does: another admin's preview is not theirs to confirm", async () => {
    const admin = await makeUser(db, "admin1", ["admin"]);
    const other = await makeUser(db, "admin2", ["admin"]);
    const { pendingId } = stagePendingImport(db, {
      userId: admin.id,
      studyName: "Small",
      filename: "small.csv",
      bytes: notes(3),
    });
    const refused = confirmPendingImportOffThread(db, { id: pendingId!, userId: other.id });
    await expect(refused).rejects.toBeInstanceOf(ServiceError);
    await expect(refused).rejects.toThrow("This preview has expired or was already imported. Upload the file again.");
    expect(getStudyByName(db, "Small")).toBeNull();
  }, 60_000);

  it("answers a write lock held elsewhere as the one-thread path does (the page's 503), and imports once it is free", async () => {
    const admin = await makeUser(db, "admin1", ["admin"]);
    const { pendingId } = stagePendingImport(db, {
      userId: admin.id,
      studyName: "Locked",
      filename: "locked.csv",
      bytes: notes(3),
    });
    const holder = new Database(path);
    holder.exec("BEGIN IMMEDIATE");
    try {
      await expect(confirmPendingImportOffThread(db, { id: pendingId!, userId: admin.id })).rejects.toBeInstanceOf(
        DatabaseBusyError,
      );
    } finally {
      holder.exec("ROLLBACK");
      holder.close();
    }
    expect(getStudyByName(db, "Locked")).toBeNull();
    const confirmed = await confirmPendingImportOffThread(db, { id: pendingId!, userId: admin.id });
    expect(confirmed.plan).toMatchObject({ ok: true, create: 3 });
  }, 60_000);
});
