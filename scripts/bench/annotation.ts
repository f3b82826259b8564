/**
 * The target (docs/architecture.md, "Saving under load"): the production build with 10,000 cases and 10 annotators; 20 logged-in sessions on loopback
 * offering a combined 50 requests/s (half case pages, half draft saves): case page p95 ≤ 50 ms, draft save
 * p95 ≤ 100 ms. Then the server's CPU per case page (≤ 5 ms) and per draft save (≤ 2 ms) (docs/architecture.md,
 * "Cheaper pages"); then a realistic open load: 100 sessions, each sending one request every 2 s (a case page, then
 * a draft save, …) for 30 s, case page p95 ≤ 50 ms and no failed request; then the saturation throughput: 20
 * sessions sending as fast as they can.
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { eq } from "drizzle-orm";
import { csrfToken, validateSessionToken } from "../../app/accounts/auth.server";
import { openDatabase } from "../../app/platform/db.server";
import { fromRoot } from "../../app/platform/paths.server";
import { autoAssign } from "../../app/annotation/assignments.server";
import { importCases, requireStudyByName } from "../../app/annotation/studies.server";
import { createUser, login } from "../../app/accounts/users.server";
import { assignments, users } from "../../db/schema";
import { startApp, tempDbPath } from "../../test/support/server";
import type { Benchmark, Figures } from "./types";

const CASES = 10_000;
const ANNOTATORS = 10;
const SESSIONS = 20;
const OFFERED_RATE = 50;
const OPEN_LOOP_SECONDS = 20;
const SATURATION_SECONDS = 10;
/** The realistic open load: this many sessions (ten tabs per annotator), each one request per PERIOD_MS. */
const OPEN_SESSIONS = 100;
const OPEN_PERIOD_MS = 2000;
const OPEN_SECONDS = 30;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, i)]!;
}

const round = (x: number) => Math.round(x * 10) / 10;

function syntheticNotes(): Uint8Array {
  const filler =
    "The patient described low mood, poor sleep and loss of interest over several weeks, with reduced appetite and " +
    "difficulty concentrating at work. Family reported withdrawal from friends. ";
  const lines: string[] = [];
  for (let i = 0; i < CASES; i++) {
    lines.push(
      JSON.stringify({
        id: `bench-${i}`,
        age_group: "38-47",
        sex: i % 2 ? "F" : "M",
        presenting_symptoms: filler.repeat(3) + ` Case ${i}.`,
        psychiatric_history: filler.repeat(2),
        psychiatric_exam: filler.repeat(2),
        psychological_exam: i % 3 ? "MADRS 28, BDI-II 31." : "",
        secondary_diagnoses: "Hypertension.",
      }),
    );
  }
  return new TextEncoder().encode(lines.join("\n"));
}

interface Session {
  cookie: string;
  csrf: string;
  cases: number[];
  versions: Map<number, number>;
  next: number;
  saves: number;
}

async function prepare(log: (l: string) => void) {
  const { dir, dbPath } = tempDbPath();
  const db = openDatabase(dbPath);
  const started = performance.now();
  const ids: string[] = [];
  for (let a = 0; a < ANNOTATORS; a++)
    ids.push(
      (
        await createUser(db, {
          username: `bench${a}`,
          password: "bench-password-1",
          roles: ["annotator"],
          actorId: null,
        })
      ).id,
    );
  const imported = importCases(db, {
    studyName: "Bench",
    bytes: syntheticNotes(),
    filename: "bench.jsonl",
    actorId: null,
  });
  if (!imported.written) throw new Error("bench import failed: " + JSON.stringify(imported.parse.errors.slice(0, 3)));
  const study = requireStudyByName(db, "Bench");
  autoAssign(db, { studyId: study.id, annotatorIds: ids, seed: 1, actorId: null });
  log(
    `seeded ${CASES} cases, ${ANNOTATORS} annotators, ${CASES * 2} assignments in ${Math.round(performance.now() - started)} ms`,
  );
  const sessions: Session[] = [];
  const tabs = OPEN_SESSIONS / ANNOTATORS;
  for (let s = 0; s < OPEN_SESSIONS; s++) {
    const a = s % ANNOTATORS;
    const r = await login(db, { username: `bench${a}`, password: "bench-password-1", ip: `127.0.0.${s + 1}` });
    if (!r.ok) throw new Error(r.error);
    const cookie = r.sessionCookie.split(";")[0]!;
    // CSRF tokens are made from the stored session id, the SHA-256 of the cookie's token.
    const sessionId = validateSessionToken(db, cookie.split("=")[1]!)!.session.id;
    const own = db
      .select({ caseId: assignments.caseId })
      .from(assignments)
      .innerJoin(users, eq(users.id, assignments.annotatorId))
      .where(eq(users.username, `bench${a}`))
      .all()
      .map((x) => x.caseId);
    // Ten sessions per annotator (ten tabs) work on disjoint tenths of that annotator's cases.
    const slice = own.filter((_, i) => i % tabs === Math.floor(s / ANNOTATORS));
    sessions.push({ cookie, csrf: csrfToken(db, sessionId), cases: slice, versions: new Map(), next: 0, saves: 0 });
  }
  db.$client.close();
  return { dir, dbPath, sessions };
}

type Kind = "page" | "save";

/** The server process's user and system CPU in ms, from /proc (Linux; null elsewhere). Clock ticks are 10 ms. */
function serverCpuMs(pid: number | undefined): { user: number; system: number } | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 };
  } catch {
    return null;
  }
}

/**
 * Server CPU per request: `count` requests of one kind, one at a time (so nothing else runs in the server), CPU of
 * the server process before and after. This is the cost the targets name, independent of client latency.
 * Also split into user time (JavaScript, SQLite's own work) and system time (the kernel: sockets, and the WAL
 * writes and fsync of every committed save).
 */
async function cpuPerRequest(base: string, pid: number | undefined, sessions: Session[], kind: Kind, count: number) {
  const before = serverCpuMs(pid);
  for (let i = 0; i < count; i++) await request(base, sessions[i % sessions.length]!, kind);
  const after = serverCpuMs(pid);
  if (before === null || after === null) return null;
  const user = (after.user - before.user) / count;
  const system = (after.system - before.system) / count;
  return { total: user + system, user, system };
}

/** One request; one that gets no answer at all (refused, timed out) counts as failed instead of stopping the bench. */
async function request(base: string, s: Session, kind: Kind): Promise<{ kind: Kind; ms: number; ok: boolean }> {
  const t0 = performance.now();
  try {
    return await send(base, s, kind, t0);
  } catch {
    if (kind === "save") s.next++;
    return { kind, ms: performance.now() - t0, ok: false };
  }
}

async function send(
  base: string,
  s: Session,
  kind: Kind,
  t0: number,
): Promise<{ kind: Kind; ms: number; ok: boolean }> {
  const caseId = s.cases[s.next % s.cases.length]!;
  let ok: boolean;
  if (kind === "page") {
    const res = await fetch(`${base}/annotate/${caseId}`, { headers: { cookie: s.cookie } });
    await res.arrayBuffer();
    ok = res.status === 200;
  } else {
    const version = s.versions.get(caseId) ?? 0;
    const values = {
      sufficiency: "sufficient",
      icd10: "F32.1",
      earliestSection: 2,
      missingInfo: [],
      missingOther: "",
      notes: `save ${++s.saves}`,
    };
    const body = new URLSearchParams({
      intent: "draft",
      version: String(version),
      values: JSON.stringify(values),
      csrf: s.csrf,
    });
    // A fetcher submission under single fetch: POST to the route's .data URL.
    const res = await fetch(`${base}/annotate/${caseId}.data`, {
      method: "POST",
      headers: { cookie: s.cookie, "content-type": "application/x-www-form-urlencoded", origin: base },
      body,
    });
    await res.arrayBuffer();
    ok = res.status === 200;
    if (ok) s.versions.set(caseId, version + 1);
    s.next++;
  }
  return { kind, ms: performance.now() - t0, ok };
}

/** Offers a fixed combined rate (open loop): request i starts at i / rate seconds, whatever earlier ones are doing. */
async function openLoop(base: string, sessions: Session[]) {
  const total = OFFERED_RATE * OPEN_LOOP_SECONDS;
  const results: Promise<{ kind: Kind; ms: number; ok: boolean }>[] = [];
  const start = performance.now();
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / OFFERED_RATE;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const s = sessions[i % sessions.length]!;
    // Each session alternates: open the case page, then save a draft on it.
    results.push(request(base, s, Math.floor(i / sessions.length) % 2 === 0 ? "page" : "save"));
  }
  const done = await Promise.all(results);
  return { done, seconds: (performance.now() - start) / 1000 };
}

/**
 * The realistic open load: every session sends one request every OPEN_PERIOD_MS, alternating case page and draft
 * save, the sessions' clocks spread evenly over the period; each request starts on time whatever earlier ones do.
 */
async function sessionsLoad(base: string, sessions: Session[]) {
  const start = performance.now();
  const perSession = Math.floor((OPEN_SECONDS * 1000) / OPEN_PERIOD_MS);
  const done = await Promise.all(
    sessions.map(async (s, k) => {
      const results: Promise<{ kind: Kind; ms: number; ok: boolean }>[] = [];
      for (let i = 0; i < perSession; i++) {
        const wait = start + (k * OPEN_PERIOD_MS) / sessions.length + i * OPEN_PERIOD_MS - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        results.push(request(base, s, i % 2 === 0 ? "page" : "save"));
      }
      return Promise.all(results);
    }),
  );
  return { done: done.flat(), seconds: (performance.now() - start) / 1000 };
}

async function saturation(base: string, sessions: Session[]) {
  const deadline = performance.now() + SATURATION_SECONDS * 1000;
  let count = 0;
  let failed = 0;
  const start = performance.now();
  await Promise.all(
    sessions.map(async (s) => {
      let k = 0;
      while (performance.now() < deadline) {
        const r = await request(base, s, k++ % 2 === 0 ? "page" : "save");
        count++;
        if (!r.ok) failed++;
      }
    }),
  );
  return { rate: count / ((performance.now() - start) / 1000), failed };
}

export const benchmarks: Benchmark[] = [
  {
    name: "annotation",
    async run({ log }) {
      if (!existsSync(fromRoot("build", "server", "index.js")))
        throw new Error("run `npm run build` first (npm run bench does)");
      const { dir, dbPath, sessions: all } = await prepare(log);
      const sessions = all.slice(0, SESSIONS);
      const app = await startApp({ dbPath });
      try {
        // Warm up: one page and one save per session, not measured.
        await Promise.all(
          sessions.map(async (s) => (await request(app.url, s, "page"), await request(app.url, s, "save"))),
        );
        const { done, seconds } = await openLoop(app.url, sessions);
        const failures = done.filter((d) => !d.ok).length;
        const pages = done
          .filter((d) => d.kind === "page")
          .map((d) => d.ms)
          .sort((a, b) => a - b);
        const saves = done
          .filter((d) => d.kind === "save")
          .map((d) => d.ms)
          .sort((a, b) => a - b);
        log(
          `open loop: ${done.length} requests in ${seconds.toFixed(1)} s (${(done.length / seconds).toFixed(1)}/s offered by ${SESSIONS} sessions), ${failures} failed`,
        );
        log(
          `  case page  p50 ${round(percentile(pages, 50))} ms  p95 ${round(percentile(pages, 95))} ms  p99 ${round(percentile(pages, 99))} ms  (n=${pages.length})`,
        );
        log(
          `  draft save p50 ${round(percentile(saves, 50))} ms  p95 ${round(percentile(saves, 95))} ms  p99 ${round(percentile(saves, 99))} ms  (n=${saves.length})`,
        );
        // The median of three rounds of 400: a round's figure moves with what else the machine did meanwhile (the
        // kernel's share of a save is its WAL write and fsync).
        const medianRound = async (kind: Kind) => {
          const rounds: NonNullable<Awaited<ReturnType<typeof cpuPerRequest>>>[] = [];
          for (let i = 0; i < 3; i++) {
            const r = await cpuPerRequest(app.url, app.pid, sessions, kind, 400);
            if (r === null) return null;
            rounds.push(r);
          }
          return rounds.sort((a, b) => a.total - b.total)[1]!;
        };
        const pageSplit = await medianRound("page");
        const saveSplit = await medianRound("save");
        const pageCpu = pageSplit?.total ?? null;
        const saveCpu = saveSplit?.total ?? null;
        const split = (c: typeof pageSplit) => (c ? ` (user ${c.user.toFixed(2)}, system ${c.system.toFixed(2)})` : "");
        log(
          `server CPU per request (median of 3 rounds of 400 sequential): case page ${pageCpu?.toFixed(2)} ms${split(pageSplit)}, draft save ${saveCpu?.toFixed(2)} ms${split(saveSplit)}`,
        );
        const open = await sessionsLoad(app.url, all);
        const openFailed = open.done.filter((d) => !d.ok).length;
        const openPages = open.done
          .filter((d) => d.kind === "page")
          .map((d) => d.ms)
          .sort((a, b) => a - b);
        const openSaves = open.done
          .filter((d) => d.kind === "save")
          .map((d) => d.ms)
          .sort((a, b) => a - b);
        log(
          `${OPEN_SESSIONS} sessions, one request each per ${OPEN_PERIOD_MS / 1000} s: ${open.done.length} requests in ${open.seconds.toFixed(1)} s, ${openFailed} failed`,
        );
        log(
          `  case page  p50 ${round(percentile(openPages, 50))} ms  p95 ${round(percentile(openPages, 95))} ms  p99 ${round(percentile(openPages, 99))} ms  (n=${openPages.length})`,
        );
        log(
          `  draft save p50 ${round(percentile(openSaves, 50))} ms  p95 ${round(percentile(openSaves, 95))} ms  p99 ${round(percentile(openSaves, 99))} ms  (n=${openSaves.length})`,
        );
        const sat = await saturation(app.url, sessions);
        log(
          `saturation: ${sat.rate.toFixed(0)} requests/s with ${SESSIONS} sessions sending as fast as they can (${sat.failed} failed)`,
        );
        const figures: Figures = {
          annotation_case_page_p50_ms: { value: round(percentile(pages, 50)), unit: "ms", target: null, pass: null },
          annotation_case_page_p95_ms: {
            value: round(percentile(pages, 95)),
            unit: "ms",
            target: "<= 50",
            pass: percentile(pages, 95) <= 50,
          },
          annotation_case_page_p99_ms: { value: round(percentile(pages, 99)), unit: "ms", target: null, pass: null },
          annotation_draft_save_p50_ms: { value: round(percentile(saves, 50)), unit: "ms", target: null, pass: null },
          annotation_draft_save_p95_ms: {
            value: round(percentile(saves, 95)),
            unit: "ms",
            target: "<= 100",
            pass: percentile(saves, 95) <= 100,
          },
          annotation_draft_save_p99_ms: { value: round(percentile(saves, 99)), unit: "ms", target: null, pass: null },
          annotation_failed_requests: {
            value: failures + sat.failed,
            unit: "requests",
            target: "0",
            pass: failures + sat.failed === 0,
          },
          annotation_case_page_server_cpu_ms: {
            value: round(pageCpu ?? NaN),
            unit: "ms",
            target: "<= 5",
            pass: pageCpu === null ? null : pageCpu <= 5,
          },
          annotation_draft_save_server_cpu_ms: {
            value: round(saveCpu ?? NaN),
            unit: "ms",
            target: "<= 2",
            pass: saveCpu === null ? null : saveCpu <= 2,
          },
          annotation_100_sessions_case_page_p95_ms: {
            value: round(percentile(openPages, 95)),
            unit: "ms",
            target: "<= 50",
            pass: percentile(openPages, 95) <= 50,
          },
          annotation_100_sessions_draft_save_p95_ms: {
            value: round(percentile(openSaves, 95)),
            unit: "ms",
            target: null,
            pass: null,
          },
          annotation_100_sessions_failed_requests: {
            value: openFailed,
            unit: "requests",
            target: "0",
            pass: openFailed === 0,
          },
          annotation_saturation_throughput: {
            value: Math.round(sat.rate),
            unit: "requests/s",
            target: null,
            pass: null,
          },
        };
        return figures;
      } finally {
        await app.stop();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  },
];
