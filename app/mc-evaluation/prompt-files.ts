/**
 * The prompt texts of the multiple-choice evaluation, read from app/data/mc-evaluation (provenance in
 * app/data/README.md; sha256 pinned in its hashes.json and checked by test/unit/mc-evaluation-items.test.ts).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fromRoot } from "../platform/paths.server";
import { PROMPT_FILES, type McPromptTexts, type MentalBenchStyle } from "./domain/prompts";

export interface LoadedMcPrompts {
  texts: McPromptTexts;
  /** sha256 of each file's bytes, by file name. */
  hashes: Record<string, string>;
}

export function loadMcPrompts(dir = fromRoot("app", "data", "mc-evaluation")): LoadedMcPrompts {
  const hashes: Record<string, string> = {};
  const texts = Object.fromEntries(
    Object.entries(PROMPT_FILES).map(([key, file]) => {
      const bytes = readFileSync(`${dir}/${file}`);
      hashes[file] = createHash("sha256").update(bytes).digest("hex");
      return [key, bytes.toString("utf8")];
    }),
  ) as unknown as McPromptTexts;
  return { texts, hashes };
}

/** The files a run of this format and style sends, with their hashes, for run.json. */
export function mcPromptHashesOf(
  loaded: LoadedMcPrompts,
  format: "mentat" | "mentalbench",
  style: MentalBenchStyle,
): Record<string, string> {
  const files =
    format === "mentat"
      ? [PROMPT_FILES.mentatSystem]
      : style === "single"
        ? [PROMPT_FILES.mentalbenchSingle]
        : style === "clear"
          ? [PROMPT_FILES.mentalbenchClear]
          : [PROMPT_FILES.mentalbenchSingle, PROMPT_FILES.mentalbenchMultiple];
  return Object.fromEntries(files.map((f) => [f, loaded.hashes[f]!]));
}
