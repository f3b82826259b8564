/**
 * Report folders for the admin pages (docs/mc-evaluation.md, "Browsing reports"): `mc-report --out` folders under
 * one root, CONCORD_MC_REPORTS (default ./data/mc-reports). Only names the manifest lists are ever served, so a
 * request cannot reach any other file.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { z } from "zod";
import { reportTables, type McReport, type Table } from "./report";
import { cutWindow, prefixRange, readWindow, type ListWindow, type WindowSpec } from "../platform/list-window";

export function mcReportsRoot(): string {
  return resolve(process.env.CONCORD_MC_REPORTS ?? join("data", "mc-reports"));
}

const ManifestSchema = z.object({
  format: z.literal("concord-mc-report/1"),
  created_at: z.string(),
  runs: z.array(z.object({ model: z.object({ key: z.string() }), items_format: z.string(), seed: z.number() })),
  files: z.record(z.string(), z.string()),
});

const NAME = /^[\w][\w.-]*$/;
const MANIFEST = "manifest.json";

export interface McReportSummary {
  name: string;
  createdAt: string;
  runs: string[];
}

function readManifest(dir: string): z.infer<typeof ManifestSchema> | null {
  const path = join(dir, MANIFEST);
  if (!existsSync(path)) return null;
  try {
    const parsed = ManifestSchema.safeParse(JSON.parse(readFileSync(path, "utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export function listMcReports(root = mcReportsRoot()): McReportSummary[] {
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((name) => NAME.test(name) && statSync(join(root, name)).isDirectory())
    .flatMap((name) => {
      const m = readManifest(join(root, name));
      if (!m) return [];
      return [
        {
          name,
          createdAt: m.created_at,
          runs: m.runs.map((r) => `${r.model.key} · ${r.items_format} · seed ${r.seed}`),
        },
      ];
    })
    .sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
}

export const MC_REPORTS_WINDOW = {
  prefix: "",
  sorts: ["modified"],
  defaultSort: "modified",
  defaultDir: "desc",
  filters: ["q"],
} as const satisfies WindowSpec<string, string>;

/** A report folder as listed: its name and its time on disk. */
interface ReportFolder {
  name: string;
  at: number;
}

/** The listing of each root, with the root's state when it was listed. */
const listings = new Map<string, { key: string; folders: ReportFolder[] }>();

/**
 * The report folders of `root` (those with a manifest), oldest first (time on disk, then name). The listing is kept
 * per root and read again only when the root itself changes: its inode, modification and change times (ns) and
 * link count. mc-report publishes a folder by renaming it into the root whole (`writeFolderAtomic`), and a folder is
 * added, replaced or removed only by a change of the root, so a request between two reports stats the root alone.
 */
function reportFolders(root: string): ReportFolder[] {
  let st;
  try {
    st = statSync(root, { bigint: true });
  } catch {
    listings.delete(root);
    return [];
  }
  const key = `${st.ino}:${st.mtimeNs}:${st.ctimeNs}:${st.nlink}`;
  const kept = listings.get(root);
  if (kept?.key === key) return kept.folders;
  const folders = readdirSync(root)
    .filter((name) => NAME.test(name))
    .flatMap((name) => {
      const at = statSync(join(root, name));
      return at.isDirectory() && existsSync(join(root, name, MANIFEST)) ? [{ name, at: at.mtimeMs }] : [];
    })
    .sort((a, b) => a.at - b.at || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  listings.set(root, { key, folders });
  return folders;
}

/**
 * A window of the report folders (docs/architecture.md, "Pages are windows"), the newest folder first (its time on
 * disk, then its name), with a name-prefix filter: the folders' listing is kept until the root changes
 * (`reportFolders`), and only the window's manifests are read. A folder whose manifest is not a report's is left out
 * of its window.
 */
export function mcReportsWindow(
  params: URLSearchParams,
  root = mcReportsRoot(),
): ListWindow<McReportSummary, "modified", "q"> {
  const w = readWindow(params, MC_REPORTS_WINDOW, 2);
  const [lo, hi] = prefixRange(w.filters.q);
  const all = reportFolders(root);
  const folders = w.filters.q ? all.filter((f) => f.name >= lo && f.name < hi) : all;
  const cut = cutWindow(w, folders, (f) => [f.at, f.name]);
  const rows = cut.rows.flatMap((f): McReportSummary[] => {
    const m = readManifest(join(root, f.name));
    return m
      ? [
          {
            name: f.name,
            createdAt: m.created_at,
            runs: m.runs.map((r) => `${r.model.key} · ${r.items_format} · seed ${r.seed}`),
          },
        ]
      : [];
  });
  return { ...cut, rows };
}

export interface McReportView {
  name: string;
  createdAt: string;
  scoring: string;
  /** Whose reading of the answers the scores use (reports made before it was recorded: Concord's). */
  reading: string;
  tables: Table[];
  figures: string[];
  /** Every file the manifest lists (runs/… included) and the manifest itself. */
  downloads: string[];
}

export function getMcReport(name: string, root = mcReportsRoot()): McReportView | null {
  if (!NAME.test(name)) return null;
  const dir = join(root, name);
  const manifest = readManifest(dir);
  if (!manifest || !manifest.files["scores.json"]) return null;
  const report = JSON.parse(readFileSync(join(dir, "scores.json"), "utf8")) as McReport;
  const files = Object.keys(manifest.files).sort();
  return {
    name,
    createdAt: manifest.created_at,
    scoring: report.scoring,
    reading: (report as Partial<McReport>).reading ?? "concord",
    tables: reportTables(report),
    figures: files.filter((f) => f.endsWith(".svg")),
    downloads: [...files, MANIFEST].sort(),
  };
}

const TYPES: Record<string, string> = {
  svg: "image/svg+xml; charset=utf-8",
  png: "image/png",
  csv: "text/csv; charset=utf-8",
  json: "application/json; charset=utf-8",
  md: "text/markdown; charset=utf-8",
};

/**
 * A file of a report by the name its manifest lists — at the top level or under `runs/` — or the manifest itself;
 * null for anything else (docs/mc-evaluation.md, "Browsing reports").
 */
export function getMcReportFile(
  name: string,
  file: string,
  root = mcReportsRoot(),
): { body: Buffer; contentType: string } | null {
  const parts = file.split("/");
  const shape = parts.length === 1 || (parts.length === 2 && parts[0] === "runs");
  if (!NAME.test(name) || !shape || !parts.every((p) => NAME.test(p))) return null;
  const manifest = readManifest(join(root, name));
  const type = TYPES[file.split(".").pop() ?? ""];
  if (!manifest || !type || (file !== MANIFEST && !(file in manifest.files))) return null;
  return { body: readFileSync(join(root, name, ...parts)), contentType: type };
}
