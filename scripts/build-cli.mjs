/**
 * Compiles the command line to build/cli/ (docs/architecture.md#the-command-line): one entry, concord.js, and one
 * chunk per command module, loaded only when that command runs, so `npm run concord` needs no TypeScript loader.
 * Packages are bundled into the chunks too: resolving and reading drizzle's, zod's and the others' hundreds of small
 * files at every start cost more than half of a command's start-up. Only the packages with native addons stay in
 * node_modules (NATIVE), and the chunks get a `require` for the CommonJS packages bundled into them.
 * Also the worker threads' scripts (build/workers/NAME.js, app/platform/worker-script.server.ts WORKER_ENTRIES),
 * which the built server and the command line start for long work (docs/architecture.md, "Background jobs").
 */
import { build } from "esbuild";
import { rmSync } from "node:fs";

/** Packages that load a compiled addon (`.node`): resolved from node_modules at run time. */
const NATIVE = ["better-sqlite3", "@resvg/resvg-js"];

rmSync("build/cli", { recursive: true, force: true });
await build({
  entryPoints: { concord: "scripts/concord.ts" },
  outdir: "build/cli",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external: NATIVE,
  banner: {
    js: 'import { createRequire as __concordRequire } from "node:module"; const require = __concordRequire(import.meta.url);',
  },
  chunkNames: "chunks/[name]-[hash]",
  logLevel: "warning",
});

rmSync("build/workers", { recursive: true, force: true });
await build({
  // The same entries as WORKER_ENTRIES in app/platform/worker-script.server.ts.
  entryPoints: {
    "mentat-fit": "app/mentat/fit-worker.ts",
    "pending-import": "app/annotation/pending-import-worker.ts",
    "study-report": "app/study-report/report-worker.ts",
    "screening-round": "app/screening/round-figures-worker.ts",
    "gold-export": "app/gold/export-worker.ts",
    "grading-job": "app/rubric-grading/grading-job-worker.ts",
    "mc-job": "app/mc-evaluation/mc-job-worker.ts",
    "safe-psych-job": "app/evaluation/run-job-worker.ts",
    "prep-translate": "app/preparation/translation-job-worker.ts",
  },
  outdir: "build/workers",
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  logLevel: "warning",
});
