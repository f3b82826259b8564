/**
 * The multiple-choice reports list reads only its window (docs/architecture.md, "What still grows in the lists"):
 * counted here by the files listed and stat-ed per request, not by time.
 */
import * as fs from "node:fs";
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { writeFolderAtomic } from "../../app/platform/output-files.server";

vi.mock("node:fs", async (original) => {
  const real = await original<typeof import("node:fs")>();
  return {
    ...real,
    statSync: vi.fn(real.statSync),
    existsSync: vi.fn(real.existsSync),
    readdirSync: vi.fn(real.readdirSync),
  };
});

// The setup file loads the app's modules before this file's mock: load the list's module again, with the mock.
let mcReportsWindow: typeof import("../../app/mc-evaluation/reports.server").mcReportsWindow;
beforeAll(async () => {
  vi.resetModules();
  ({ mcReportsWindow } = await import("../../app/mc-evaluation/reports.server"));
});

const manifest = (seed: number) =>
  JSON.stringify({
    format: "concord-mc-report/1",
    created_at: "2030-01-01T00:00:00Z",
    runs: [{ model: { key: "m" }, items_format: "csv", seed }],
    files: {},
  });

/** Calls of `statSync`, `existsSync` and `readdirSync` while `read` runs. */
function fsCalls<T>(read: () => T): { calls: number; value: T } {
  const spies = [fs.statSync, fs.existsSync, fs.readdirSync] as unknown as ReturnType<typeof vi.fn>[];
  for (const s of spies) s.mockClear();
  const value = read();
  return { calls: spies.reduce((n, s) => n + s.mock.calls.length, 0), value };
}

describe("the multiple-choice reports list", () => {
  it("stats the root and the window's manifests only, until a report is written into the root", () => {
    const root = mkdtempSync(join(tmpdir(), "concord-mc-files-"));
    try {
      for (let i = 0; i < 300; i++) {
        mkdirSync(join(root, `r-${String(i).padStart(4, "0")}`));
        writeFileSync(join(root, `r-${String(i).padStart(4, "0")}`, "manifest.json"), manifest(i));
        utimesSync(join(root, `r-${String(i).padStart(4, "0")}`), 1_000_000 + i, 1_000_000 + i);
      }
      const first = fsCalls(() => mcReportsWindow(new URLSearchParams(), root));
      expect(first.value.total).toBe(300);
      const again = fsCalls(() => mcReportsWindow(new URLSearchParams(), root));
      expect(again.value).toEqual(first.value);
      // The root, then each of the 50 rows' manifest (exists, read): not the 300 folders.
      expect(again.calls).toBeLessThanOrEqual(1 + 50);
      const next = fsCalls(() => mcReportsWindow(new URLSearchParams({ after: first.value.next! }), root));
      expect(next.calls).toBeLessThanOrEqual(1 + 50);
      expect(next.value.rows[0]!.name).toBe("r-0249");

      // A report written the way mc-report writes one is listed on the next request, first (the newest).
      writeFolderAtomic(join(root, "r-new"), { "manifest.json": manifest(999) });
      const after = mcReportsWindow(new URLSearchParams(), root);
      expect(after.total).toBe(301);
      expect(after.rows[0]!.name).toBe("r-new");
      rmSync(join(root, "r-0299"), { recursive: true });
      expect(mcReportsWindow(new URLSearchParams(), root).total).toBe(300);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
