/**
 * Durability of acknowledged saves (docs/security.md, "Durability"): in WAL mode `synchronous = NORMAL` may lose the
 * last commits on a power cut; Concord runs `FULL`, so the WAL is synced before a commit returns and a submission
 * the page was told about survives. Every connection the app and the command line open gets it.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Db } from "../../app/platform/db.server";
import { openDatabase } from "../../app/platform/db.server";
import { freshDb } from "../support/db";

let db: Db;
let path: string;
let cleanup: () => void;
beforeEach(() => ({ db, path, cleanup } = freshDb()));
afterEach(() => cleanup());

const FULL = 2;

describe("synchronous", () => {
  it("is FULL, in WAL mode, on the shared connection", () => {
    expect(db.$client.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.$client.pragma("synchronous", { simple: true })).toBe(FULL);
  });

  it("is FULL on every further connection to the same file (the command line's)", () => {
    const second = openDatabase(path);
    try {
      expect(second.$client.pragma("synchronous", { simple: true })).toBe(FULL);
    } finally {
      second.$client.close();
    }
  });
});
