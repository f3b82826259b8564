import { applyWebBusyTimeout, getDb } from "./db.server";
import { databasePath } from "./db.server";
import { DEMO_ACCOUNTS, DEMO_PASSWORD, isDemoDatabase, isFreshDatabase, seedDemo } from "../demo/demo.server";

/**
 * Run once when the server starts: opening the database applies pending migrations; a fresh database gets the demo
 * study unless CONCORD_DEMO=0. Prints where to go and, for a demo database, the demo accounts.
 */
export async function startup({ baseUrl, log }: { baseUrl: string; log: (line: string) => void }) {
  // A save waits at most a moment for another process's write lock; then the page retries (docs/architecture.md).
  applyWebBusyTimeout();
  const db = getDb();
  log(`Database: ${databasePath()}`);
  // A fresh database gets the demo, except in production, where a mistyped CONCORD_DB must not quietly create
  // accounts with the published demo password: there it takes CONCORD_DEMO=1.
  const demoWanted = process.env.NODE_ENV === "production" ? process.env.CONCORD_DEMO === "1" : process.env.CONCORD_DEMO !== "0";
  if (demoWanted && isFreshDatabase(db)) {
    await seedDemo(db);
    log("Seeded the demo study into this fresh database.");
  }
  if (isDemoDatabase(db)) {
    log("");
    log(`Concord demo: open ${baseUrl} and log in with one of these accounts (password for all: ${DEMO_PASSWORD})`);
    const width = Math.max(...DEMO_ACCOUNTS.map((a) => a.username.length));
    for (const a of DEMO_ACCOUNTS) log(`  ${a.username.padEnd(width)}  ${a.roles.join(", ")}`);
    log("This is a demo database with fictional notes. Never put real data into it.");
    log("");
  } else if (isFreshDatabase(db)) {
    if (process.env.NODE_ENV === "production" && process.env.CONCORD_DEMO !== "0")
      log("Production mode: no demo seeded into this fresh database (set CONCORD_DEMO=1 to seed one).");
    log("No users yet. Create the first admin with:");
    log("  npm run concord -- users create --username NAME --role admin");
  }
}
