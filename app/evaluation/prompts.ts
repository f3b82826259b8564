/**
 * The reference's prompt files, read at run time from app/data/prompts (byte-exact copies; their hashes are pinned
 * by test/unit/reference-data.test.ts) and hashed for run.json.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fromRoot } from "../platform/paths.server";
import { buildPromptSet, promptFilesOf, type PromptSet, type Strategy } from "./domain/runner-protocol";

export interface LoadedPrompts {
  prompts: PromptSet;
  /** sha256 of each file's bytes, by path relative to app/data/prompts. */
  hashes: Record<string, string>;
}

export function loadPrompts(dir = fromRoot("app", "data", "prompts")): LoadedPrompts {
  const hashes: Record<string, string> = {};
  const prompts = buildPromptSet((file) => {
    const bytes = readFileSync(`${dir}/${file}`);
    hashes[file] = createHash("sha256").update(bytes).digest("hex");
    return bytes.toString("utf8");
  });
  return { prompts, hashes };
}

/** The hashes of the files one strategy's run uses, in a stable order. */
export function promptHashesOf(loaded: LoadedPrompts, strategy: Strategy): Record<string, string> {
  return Object.fromEntries(promptFilesOf(strategy).map((file) => [file, loaded.hashes[file]]));
}
