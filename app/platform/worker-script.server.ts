/**
 * Where a worker thread's script is (docs/architecture.md, "Background jobs"). The built app and the compiled
 * command line run build/workers/NAME.js, written by `npm run build:cli` (scripts/build-cli.mjs); code running from
 * the TypeScript sources (tests, `npm run concord:dev`, the bench) compiles the worker's entry once per process with
 * esbuild into a temporary file under node_modules/.cache, so a worker never runs an out-of-date build.
 */
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { writeFileAtomic } from "./output-files.server";
import { join } from "node:path";
import { fromRoot } from "./paths.server";

/** The worker entries: name → source file (relative to the project root). */
export const WORKER_ENTRIES = {
  "mentat-fit": "app/mentat/fit-worker.ts",
  "pending-import": "app/annotation/pending-import-worker.ts",
  "study-report": "app/study-report/report-worker.ts",
  "screening-round": "app/screening/round-figures-worker.ts",
  "gold-export": "app/gold/export-worker.ts",
  "grading-job": "app/rubric-grading/grading-job-worker.ts",
  "mc-job": "app/mc-evaluation/mc-job-worker.ts",
  "safe-psych-job": "app/evaluation/run-job-worker.ts",
  "prep-translate": "app/preparation/translation-job-worker.ts",
} as const;
export type WorkerName = keyof typeof WORKER_ENTRIES;

const compiled = new Map<WorkerName, Promise<string>>();

function runningFromSource(): boolean {
  return import.meta.url.endsWith(".ts");
}

/** The path of the worker's script, compiling it first when running from the sources. */
export function workerScript(name: WorkerName): Promise<string> {
  if (!runningFromSource()) {
    const built = fromRoot("build", "workers", `${name}.js`);
    if (!existsSync(built))
      return Promise.reject(new Error(`${built} is missing: run "npm run build" (or "npm run build:cli") first.`));
    return Promise.resolve(built);
  }
  let pending = compiled.get(name);
  if (!pending) {
    pending = (async () => {
      const { build } = await import("esbuild");
      const out = await build({
        entryPoints: [fromRoot(WORKER_ENTRIES[name])],
        bundle: true,
        format: "esm",
        platform: "node",
        target: "node20",
        packages: "external",
        write: false,
        logLevel: "silent",
      });
      // Inside node_modules/.cache, so that the packages the worker imports resolve from the project's node_modules.
      const cache = fromRoot("node_modules", ".cache");
      mkdirSync(cache, { recursive: true });
      const file = join(mkdtempSync(join(cache, "concord-worker-")), `${name}.mjs`);
      writeFileAtomic(file, out.outputFiles[0]!.text, { mode: 0o600 });
      return file;
    })();
    compiled.set(name, pending);
  }
  return pending;
}
