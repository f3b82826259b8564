/**
 * The ids a case import has read and the line each was first on, kept on disk (docs/reliability.md, "Bulk imports"):
 * a private temporary SQLite database of its own (deleted when closed), with a small page cache, so that what an
 * import holds stays the same from ten thousand notes to a million. About 1 µs per id. Its own connection: the
 * import's transactions on the study database never wait on it, nor it on them.
 */
import Database from "better-sqlite3";
import type { IdLines } from "../formats/id-index";

/** Ids written per transaction of the temporary database (one per id would sync a journal each time). */
const PER_TRANSACTION = 2000;

export class DiskIdLines implements IdLines {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement<[string, number]>;
  private readonly firstLine: Database.Statement<[string], number>;
  private pending = 0;

  constructor() {
    // An empty file name: SQLite's private temporary database, on disk, removed when the connection closes.
    this.db = new Database("");
    this.db.pragma("journal_mode = OFF");
    this.db.pragma("synchronous = OFF");
    this.db.pragma("cache_size = -1024");
    this.db.exec("CREATE TABLE ids (id TEXT PRIMARY KEY, line INTEGER NOT NULL) WITHOUT ROWID");
    this.insert = this.db.prepare("INSERT INTO ids (id, line) VALUES (?, ?) ON CONFLICT (id) DO NOTHING");
    this.firstLine = this.db.prepare<[string], number>("SELECT line FROM ids WHERE id = ?").pluck();
  }

  add(id: string, line: number): number | undefined {
    if (!this.db.inTransaction) this.db.exec("BEGIN");
    const first = this.insert.run(id, line).changes === 1 ? undefined : this.firstLine.get(id);
    if (++this.pending === PER_TRANSACTION) {
      this.pending = 0;
      this.db.exec("COMMIT");
    }
    return first;
  }

  /** Removes the database (what a transaction still open holds goes with it). */
  close(): void {
    this.db.close();
  }
}
