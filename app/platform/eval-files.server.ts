/**
 * The folders of the evaluation jobs started from the browser (docs/evaluation.md, "Running from the browser";
 * docs/deploying.md): the input files a job may read (`CONCORD_EVAL_INPUTS`, default ./data/eval-inputs — samples,
 * gold labels, item files, put there by the operator) and where the jobs' run folders go (`CONCORD_EVAL_RUNS`,
 * default ./data/eval-runs). A page names an input by its file name only, checked against the folder's listing, so no
 * path from a form ever reaches the file system.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { writeFileAtomic } from "./output-files.server";
import { join, resolve } from "node:path";
import { ServiceError } from "./service-error";

const NAME = /^[\w][\w.-]*\.(json|jsonl|csv)$/;

export function evalInputsRoot(): string {
  return resolve(process.env.CONCORD_EVAL_INPUTS ?? join("data", "eval-inputs"));
}

export function evalRunsRoot(): string {
  return resolve(process.env.CONCORD_EVAL_RUNS ?? join("data", "eval-runs"));
}

/** The input files (.json, .jsonl, .csv) directly in the inputs folder, by name. */
export function listEvalInputs(): string[] {
  const root = evalInputsRoot();
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((name) => NAME.test(name) && statSync(join(root, name)).isFile())
    .sort();
}

/** The path of an input file named on a page; refused (400) unless the folder lists it. */
export function evalInputPath(name: string): string {
  if (!listEvalInputs().includes(name))
    throw new ServiceError(`No input file "${name}" in ${evalInputsRoot()}.`, "file", 400);
  return join(evalInputsRoot(), name);
}

/**
 * Adds an uploaded input file, checked by the caller, to the inputs folder under its own name, complete or absent
 * (the output layer). The same name with the same bytes changes nothing; with other bytes it is refused (409), so a
 * job's input never changes under a run that resumes from it.
 */
export function addEvalInput(name: string, bytes: Uint8Array): { unchanged: boolean } {
  if (!NAME.test(name))
    throw new ServiceError(
      "The file's name takes letters, digits, '.', '_' or '-' and ends in .json, .jsonl or .csv.",
      "file",
      400,
    );
  const root = evalInputsRoot();
  const path = join(root, name);
  if (existsSync(path)) {
    if (Buffer.from(readFileSync(path)).equals(Buffer.from(bytes))) return { unchanged: true };
    throw new ServiceError(`An input file named "${name}" exists with other content: rename the file.`, "file", 409);
  }
  mkdirSync(root, { recursive: true });
  writeFileAtomic(path, Buffer.from(bytes));
  return { unchanged: false };
}
