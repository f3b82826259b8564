/**
 * The folders of the evaluation jobs started from the browser (docs/evaluation.md, "Running from the browser";
 * docs/deploying.md): the input files a job may read (`CONCORD_EVAL_INPUTS`, default ./data/eval-inputs — samples,
 * gold labels, item files, put there by the operator) and where the jobs' run folders go (`CONCORD_EVAL_RUNS`,
 * default ./data/eval-runs). A page names an input by its file name only, checked against the folder's listing, so no
 * path from a form ever reaches the file system.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
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
