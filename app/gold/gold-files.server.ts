/**
 * The gold export's folder on disk checked against its manifest (docs/reliability.md, "Atomic files"); the folder is
 * written whole or not at all by the output layer (app/platform/output-files.server.ts:writeFolderStreaming).
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

const ManifestFiles = z.record(
  z.string(),
  z.object({ sha256: z.string().regex(/^[0-9a-f]{64}$/), records: z.number().int().min(0) }),
);
const Manifest = z.object({ files: ManifestFiles });

/** What is wrong with an export folder against its manifest.json (each file present, its sha256); empty when it matches. */
export function verifyGoldFolder(dir: string): string[] {
  const manifestPath = join(dir, "manifest.json");
  if (!existsSync(manifestPath)) return ["no manifest.json: not an export folder, or an export that did not finish."];
  let manifest: z.infer<typeof Manifest>;
  try {
    const parsed = Manifest.safeParse(JSON.parse(readFileSync(manifestPath, "utf8")));
    if (!parsed.success) return [`manifest.json does not list the files with their sha256 and record counts.`];
    manifest = parsed.data;
  } catch (e) {
    return [`manifest.json is not valid JSON (${(e as Error).message}).`];
  }
  const problems: string[] = [];
  for (const [file, want] of Object.entries(manifest.files)) {
    if (file.includes("/") || file.includes("\\") || file.startsWith(".")) {
      problems.push(`manifest.json names "${file}", which is not a file of the folder.`);
      continue;
    }
    const path = join(dir, file);
    if (!existsSync(path)) {
      problems.push(`${file} is missing.`);
      continue;
    }
    const sha = createHash("sha256").update(readFileSync(path)).digest("hex");
    if (sha !== want.sha256)
      problems.push(`${file} does not match the manifest (sha256 ${sha}, expected ${want.sha256}).`);
  }
  return problems;
}
