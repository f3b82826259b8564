/**
 * Pages are windows (docs/architecture.md, "Pages are windows"): the study page, the progress page, the statistics
 * page, the annotator's list and the case page, requested from the production build for a study of 1,000, 10,000 and 100,000 cases (ten
 * annotators, two per case, 30 % annotated: test/support/big-study.ts). Per page and size: the HTML's bytes and the
 * server's CPU per request (the mean of up to 200 sequential requests within 10 s, from /proc); the targets: at 100,000
 * cases within 1.5× of the page at 1,000, in bytes and in CPU (the case page within 1.1× in CPU: its annotator has
 * 200, 2,000 and 20,000 assignments), and no render over 100 ms of CPU.
 */
import { readFileSync, rmSync } from "node:fs";
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
    return { status: res.status, bytes: body.byteLength };
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
    cpuMs: before === null || after === null ? null : Math.round(((after - before) / n) * 10) / 10,
    status: last.status,
  };
}

const PAGES = ["study", "progress", "stats", "annotate", "case_page"] as const;
type Page = (typeof PAGES)[number];

async function measureSize(cases: number, log: (l: string) => void): Promise<Record<Page, PageFigure>> {
  const { dir, dbPath } = tempDbPath();
  const db = openDatabase(dbPath);
  try {
    await createUser(db, { username: "benchadmin", password: PASSWORD, roles: ["admin"], actorId: null });
    const ids: string[] = [];
    for (let a = 0; a < 10; a++)
      ids.push(
        (await createUser(db, { username: `ann${a}`, password: PASSWORD, roles: ["annotator"], actorId: null })).id,
      );
    const t0 = performance.now();
    const { studyId } = writeBigStudy(db, { name: "Pages", cases, annotatorIds: ids });
    log(`${cases} cases written in ${Math.round(performance.now() - t0)} ms`);
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
      out.annotate = await measure(`${app.url}/annotate`, annotator, app.pid);
      out.case_page = await measure(`${app.url}/annotate/${caseId}`, annotator, app.pid);
      for (const p of PAGES)
        log(
          `  ${cases} cases  ${p.padEnd(9)} ${String(out[p].status)}  ${(out[p].bytes / 1024).toFixed(1)} KB  ${out[p].cpuMs} ms CPU`,
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
