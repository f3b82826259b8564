import type { KnipConfig } from "knip";

// Unused files, exports and dependencies (docs/checks.md). The entry points come from knip's plugins: Remix (root,
// entry.server and every route), Vitest (the test files and vitest.config.ts), Vite, drizzle-kit, and the npm
// scripts (scripts/concord.ts, scripts/bench.ts, server.js). An export used only inside its own file is not reported:
// the check is for dead code, not for what a module chooses to expose.
const config: KnipConfig = {
  project: ["app/**/*.{ts,tsx}", "db/**/*.ts", "scripts/**/*.ts", "test/**/*.ts", "*.{js,ts}"],
  // Started by file name, never imported: worker threads (app/platform/worker-script.server.ts), the child processes
  // of the bulk-import and hidden-parent import tests and of the bench's memory probe, and the script that writes
  // test/fixtures/case-import/expected.json.
  entry: [
    "app/mentat/fit-worker.ts",
    "app/annotation/pending-import-worker.ts",
    "app/study-report/report-worker.ts",
    "app/screening/round-figures-worker.ts",
    "app/gold/export-worker.ts",
    "app/rubric-grading/grading-job-worker.ts",
    "app/mc-evaluation/mc-job-worker.ts",
    "app/evaluation/run-job-worker.ts",
    "app/preparation/translation-job-worker.ts",
    "test/support/import-child.ts",
    "test/support/hidden-import-child.ts",
    "test/fixtures/case-import/generate.ts",
    "scripts/bench/import-held.ts",
  ],
  ignoreExportsUsedInFile: true,
};

export default config;
