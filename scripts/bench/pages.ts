/**
 * Pages are windows (docs/architecture.md, "Pages are windows"): the study page, the progress page, the statistics
 * page, the rater-quality page, the annotator's list and the case page, requested from the production build for a study of 1,000, 10,000 and 100,000 cases (ten
 * annotators, two per case, 30 % annotated: test/support/big-study.ts). Per page and size: the HTML's bytes and the
 * server's CPU per request (the mean of up to 200 sequential requests within 10 s, from /proc); the targets: at 100,000
 * cases within 1.5× of the page at 1,000, in bytes and in CPU (the case page within 1.1× in CPU: its annotator has
 * 200, 2,000 and 20,000 assignments), and no render over 100 ms of CPU.
 *
 * Each study is written once into a file under the system's temporary folder, named by its size and a hash of what
 * makes it (this file, test/support/big-study.ts and the migrations), and copied for each run: the 100,000-case
 * study takes minutes to write on a loaded machine, its copy seconds. `CONCORD_BENCH_FRESH=1` writes it again.
 */
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { openDatabase } from "../../app/platform/db.server";
import { createUser, login } from "../../app/accounts/users.server";
import { startApp, tempDbPath } from "../../test/support/server";
import { writeBigStudy } from "../../test/support/big-study";
import type { Benchmark, Figures } from "./types";

const SIZES = [1_000, 10_000, 100_000];
const ROUNDS = 200;
export const PASSWORD = "bench-password-1";

function cpuMs(pid: number | undefined): number | null {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return null;
  }
}

export async function cookieOf(db: ReturnType<typeof openDatabase>, username: string, ip: string) {
  const r = await login(db, { username, password: PASSWORD, ip });
  if (!r.ok) throw new Error(r.error);
  return r.sessionCookie.split(";")[0]!;
}

export interface PageFigure {
  bytes: number;
  /** Of which in inline scripts: the loaders' data sent for hydration (Remix's context). */
  scriptBytes: number;
  cpuMs: number | null;
  status: number;
}

/**
 * Bytes of the page and the server CPU per request: the CPU of up to ROUNDS sequential requests (fewer when they
 * take over 10 s in all) over their number, after one warm-up request. /proc counts in ticks of 10 ms.
 */
export async function measure(url: string, cookie: string, pid: number | undefined): Promise<PageFigure> {
  const get = async () => {
    const res = await fetch(url, { headers: { cookie } });
    const body = await res.arrayBuffer();
    const text = new TextDecoder().decode(body);
    let scriptBytes = 0;
    for (const m of text.matchAll(/<script[^>]*>([\s\S]*?)<\/script>/g)) scriptBytes += Buffer.byteLength(m[1]!);
    return { status: res.status, bytes: body.byteLength, scriptBytes };
  };
  let last = await get();
  const before = cpuMs(pid);
  const started = performance.now();
  let n = 0;
  while (n < ROUNDS && (n === 0 || performance.now() - started < 10_000)) {
    last = await get();
    n++;
  }
  const after = cpuMs(pid);
  return {
    bytes: last.bytes,
    scriptBytes: last.scriptBytes,
    cpuMs: before === null || after === null ? null : Math.round(((after - before) / n) * 10) / 10,
    status: last.status,
  };
}

const PAGES = ["study", "progress", "stats", "quality", "annotate", "case_page"] as const;
type Page = (typeof PAGES)[number];

/** What the kept studies are made from: a change to any of it makes new ones. */
function studyRecipeHash(): string {
  const h = createHash("sha256");
  const root = fileURLToPath(new URL("../..", import.meta.url));
  for (const f of ["scripts/bench/pages.ts", "test/support/big-study.ts"]) h.update(readFileSync(join(root, f)));
  const migrations = join(root, "db", "migrations");
  for (const f of readdirSync(migrations).sort()) if (f.endsWith(".sql")) h.update(readFileSync(join(migrations, f)));
  return h.digest("hex").slice(0, 16);
}

/**
 * The database of a study of `cases` cases with its admin and ten annotators, copied to `dbPath` from the one kept
 * for this recipe (written first when there is none). Returns the study's id and how it was made.
 */
async function studyDatabase(dbPath: string, cases: number, log: (l: string) => void): Promise<number> {
  const keptDir = join(tmpdir(), "concord-bench-pages");
  const kept = join(keptDir, `study-${cases}-${studyRecipeHash()}.db`);
  if (process.env.CONCORD_BENCH_FRESH === "1" || !existsSync(kept)) {
    mkdirSync(keptDir, { recursive: true });
    const making = `${kept}.${process.pid}.tmp`;
    const db = openDatabase(making);
    await createUser(db, { username: "benchadmin", password: PASSWORD, roles: ["admin"], actorId: null });
    const ids: string[] = [];
    for (let a = 0; a < 10; a++)
      ids.push(
        (await createUser(db, { username: `ann${a}`, password: PASSWORD, roles: ["annotator"], actorId: null })).id,
      );
    const t0 = performance.now();
    writeBigStudy(db, { name: "Pages", cases, annotatorIds: ids });
    log(`${cases} cases written in ${Math.round(performance.now() - t0)} ms (kept in ${kept})`);
    // One file, complete: the log folded in, then renamed into place.
    db.$client.pragma("wal_checkpoint(TRUNCATE)");
    db.$client.pragma("journal_mode = DELETE");
    db.$client.close();
    renameSync(making, kept);
  } else log(`${cases} cases copied from ${kept}`);
  copyFileSync(kept, dbPath);
  const db = openDatabase(dbPath);
  try {
    return db.$client.prepare(`SELECT id FROM studies WHERE name = 'Pages'`).pluck().get() as number;
  } finally {
    db.$client.close();
  }
}

async function measureSize(cases: number, log: (l: string) => void): Promise<Record<Page, PageFigure>> {
  const { dir, dbPath } = tempDbPath();
  const studyId = await studyDatabase(dbPath, cases, log);
  const db = openDatabase(dbPath);
  try {
    const ids = db.$client
      .prepare(`SELECT id FROM users WHERE username LIKE 'ann%' ORDER BY username`)
      .pluck()
      .all() as string[];
    const admin = await cookieOf(db, "benchadmin", "127.0.0.1");
    const annotator = await cookieOf(db, "ann0", "127.0.0.2");
    // A case of ann0's in the middle of the study, not yet annotated.
    const caseId = db.$client
      .prepare(
        `SELECT c.id FROM cases c JOIN assignments a ON a.case_id = c.id AND a.annotator_id = ?
         WHERE c.study_id = ? AND c.position >= ? ORDER BY c.position LIMIT 1`,
      )
      .pluck()
      .get(ids[0], studyId, Math.floor(cases / 2)) as number;
    db.$client.close();
    const app = await startApp({ dbPath });
    try {
      const out = {} as Record<Page, PageFigure>;
      out.study = await measure(`${app.url}/admin/studies/${studyId}`, admin, app.pid);
      out.progress = await measure(`${app.url}/admin/studies/${studyId}/progress`, admin, app.pid);
      // The statistics page: its first request (the warm-up) has the worker build it; the rest are answered from
      // what was kept with the study's summary version, as every request between two submissions is.
      out.stats = await measure(`${app.url}/admin/studies/${studyId}/stats`, admin, app.pid);
      out.quality = await measure(`${app.url}/admin/studies/${studyId}/quality`, admin, app.pid);
      out.annotate = await measure(`${app.url}/annotate`, annotator, app.pid);
      out.case_page = await measure(`${app.url}/annotate/${caseId}`, annotator, app.pid);
      for (const p of PAGES)
        log(
          `  ${cases} cases  ${p.padEnd(9)} ${String(out[p].status)}  ${(out[p].bytes / 1024).toFixed(1)} KB (${(out[p].scriptBytes / 1024).toFixed(1)} KB inline data)  ${out[p].cpuMs} ms CPU`,
        );
      return out;
    } finally {
      await app.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const benchmarks: Benchmark[] = [
  {
    name: "pages",
    async run({ log }) {
      const bySize = new Map<number, Record<Page, PageFigure>>();
      for (const n of SIZES) bySize.set(n, await measureSize(n, log));
      const small = bySize.get(SIZES[0]!)!;
      const figures: Figures = {};
      const k = (n: number) => `${n / 1000}k`;
      for (const p of PAGES) {
        for (const n of SIZES) {
          const f = bySize.get(n)!;
          figures[`pages_${p}_${k(n)}_kb`] = {
            value: Math.round(f[p].bytes / 102.4) / 10,
            unit: "KB",
            target: null,
            pass: f[p].status === 200 ? null : false,
          };
          figures[`pages_${p}_${k(n)}_cpu_ms`] = {
            value: f[p].cpuMs ?? NaN,
            unit: "ms",
            target: "<= 100",
            pass: f[p].cpuMs === null ? null : f[p].cpuMs <= 100,
          };
        }
        const large = bySize.get(SIZES[SIZES.length - 1]!)!;
        const bytesRatio = large[p].bytes / small[p].bytes;
        figures[`pages_${p}_bytes_ratio_100k_to_1k`] = {
          value: Math.round(bytesRatio * 100) / 100,
          unit: "x",
          target: "<= 1.5",
          pass: bytesRatio <= 1.5,
        };
        const cs = small[p].cpuMs;
        const cl = large[p].cpuMs;
        const cpuRatio = cs === null || cl === null ? null : cl / Math.max(cs, 0.5);
        const limit = p === "case_page" ? 1.1 : 1.5;
        figures[`pages_${p}_cpu_ratio_100k_to_1k`] = {
          value: cpuRatio === null ? NaN : Math.round(cpuRatio * 100) / 100,
          unit: "x",
          target: `<= ${limit}`,
          pass: cpuRatio === null ? null : cpuRatio <= limit,
        };
      }
      return figures;
    },
  },
];
