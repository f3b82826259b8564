import { getDb } from "../lib/db.server";
import { databasePath } from "../lib/db.server";
import { DEMO_ACCOUNTS, DEMO_PASSWORD, isDemoDatabase, isFreshDatabase, seedDemo } from "./demo.server";

/**
 * Run once when the server starts: opening the database applies pending migrations; a fresh database gets the demo
 * study unless CONCORD_DEMO=0. Prints where to go and, for a demo database, the demo accounts.
 */
export async function startup({ baseUrl, log }: { baseUrl: string; log: (line: string) => void }) {
  const db = getDb();
  log(`Database: ${databasePath()}`);
  if (process.env.CONCORD_DEMO !== "0" && isFreshDatabase(db)) {
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
    log("No users yet. Create the first admin with:");
    log("  npm run concord -- users create --username NAME --role admin");
  }
}
