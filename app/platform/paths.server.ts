import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

let root: string | undefined;

/**
 * The project's root folder, found by walking up from this module to Concord's package.json. Works from the source
 * tree (tsx, vitest) and from the server bundle in build/, whatever the working directory.
 */
export function projectRoot(): string {
  if (root) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, "package.json");
    if (existsSync(pkg) && JSON.parse(readFileSync(pkg, "utf8")).name === "concord") return (root = dir);
    const up = dirname(dir);
    if (up === dir) throw new Error("Concord's package.json was not found above " + fileURLToPath(import.meta.url));
    dir = up;
  }
}

export function fromRoot(...parts: string[]): string {
  return resolve(projectRoot(), ...parts);
}

export function softwareVersion(): string {
  return JSON.parse(readFileSync(fromRoot("package.json"), "utf8")).version as string;
}
