/**
 * The HealthBench grader template and system message, read from app/data/rubric-grading/ and checked against
 * hashes.json before any judge call (docs/rubric-grading.md, "Grading"): a changed byte would change every score.
 */
import { readFileSync } from "node:fs";
import { fromRoot } from "../platform/paths.server";
import { sha256 } from "./domain/eval-set";
import type { GraderText } from "./domain/grader";

export interface GraderTextWithHashes extends GraderText {
  templateSha256: string;
  systemMessageSha256: string;
}

let cached: GraderTextWithHashes | undefined;

export function loadGraderText(): GraderTextWithHashes {
  if (cached) return cached;
  const dir = fromRoot("app", "data", "rubric-grading");
  const hashes = JSON.parse(readFileSync(`${dir}/hashes.json`, "utf8")) as Record<string, { sha256: string }>;
  const read = (name: string) => {
    const text = readFileSync(`${dir}/${name}`, "utf8");
    if (sha256(text) !== hashes[name]?.sha256) {
      throw new Error(`app/data/rubric-grading/${name} does not match its hash in hashes.json; restore the file`);
    }
    return text;
  };
  const template = read("grader-template.txt");
  const systemMessage = read("grader-system-message.txt");
  cached = { template, systemMessage, templateSha256: sha256(template), systemMessageSha256: sha256(systemMessage) };
  return cached;
}
