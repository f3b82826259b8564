/**
 * A responses import (judge-import) in its own process, for the judge bulk-import tests: `node --import tsx
 * test/support/judge-import-child.ts DB FILE SET BUDGET_MS [kill-after-chunk]`. Prints "chunk N" after each committed
 * chunk and "done" at the end; with `kill-after-chunk` it kills itself with SIGKILL after the second chunk, as a
 * `kill -9` half way through would.
 */
import { readFileSync } from "node:fs";
import { importResponses } from "../../app/judge-validation/judge-responses.server";
import { openDatabase } from "../../app/platform/db.server";

const [dbPath, file, setName, budget, mode] = process.argv.slice(2) as [string, string, string, string, string?];
const db = openDatabase(dbPath);
let chunks = 0;
const result = importResponses(
  db,
  { setName, files: [{ bytes: readFileSync(file), filename: file }], actorId: null },
  {
    chunkBudgetMs: Number(budget),
    onChunk: (done) => {
      process.stdout.write(`chunk ${done}\n`);
      if (mode === "kill-after-chunk" && ++chunks === 2) process.kill(process.pid, "SIGKILL");
    },
  },
);
process.stdout.write(result.written ? "done\n" : `refused ${result.refusal ?? "with errors"}\n`);
