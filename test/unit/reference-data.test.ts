import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import hashes from "../../app/data/prompts/hashes.json";

// hashes.json was written from shared/data/safe-psych-prompts.md (the published length and sha256 of each prompt).
describe("reference prompt files", () => {
  for (const [name, { chars, sha256 }] of Object.entries(hashes as Record<string, { chars: number; sha256: string }>)) {
    it(`${name} is byte-identical to the reference`, () => {
      const bytes = readFileSync(new URL(`../../app/data/prompts/${name}`, import.meta.url));
      expect(createHash("sha256").update(bytes).digest("hex")).toBe(sha256);
      expect([...bytes.toString("utf8")].length).toBe(chars);
    });
  }
  it("covers the ten prompt files", () => expect(Object.keys(hashes)).toHaveLength(10));
});
