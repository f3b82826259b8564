/**
 * Compiles the command line to build/cli/ (docs/architecture.md#the-command-line): one entry, concord.js, and one
 * chunk per command module, loaded only when that command runs. Packages stay external (resolved from
 * node_modules at run time), so `npm run concord` needs no TypeScript loader and starts in a fraction of a second.
 * Also the worker threads' scripts (build/workers/NAME.js, app/platform/worker-script.server.ts WORKER_ENTRIES),
 * which the built server and the command line start for long work (docs/architecture.md, "Background jobs").
 */
import { build } from "esbuild";
import { rmSync } from "node:fs";

rmSync("build/cli", { recursive: true, force: true });
await build({
  entryPoints: { concord: "scripts/concord.ts" },
  outdir: "build/cli",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  chunkNames: "chunks/[name]-[hash]",
  logLevel: "warning",
});

rmSync("build/workers", { recursive: true, force: true });
await build({
  entryPoints: { "mentat-fit": "app/mentat/fit-worker.ts" },
  outdir: "build/workers",
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  logLevel: "warning",
});
