import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from "node:crypto";

// scrypt (RFC 7914) with N = 2^17, r = 8, p = 1: OWASP's first recommended scrypt setting, ~250 ms and 128 MiB per
// hash here. Older hashes (N = 2^15) still verify and are replaced at the next login (docs/security.md, "Stored
// passwords").
const PRODUCTION_N = 2 ** 17;
const R = 8;
const P = 1;
// The cost of new hashes: always PRODUCTION_N in the app and the command line. Only the test suite lowers it, in its
// setup file, so that its thousands of test users are not each 128 MiB and a quarter of a second of scrypt; the
// production cost keeps its own test (docs/checks.md, "Test fixtures").
let N = PRODUCTION_N;

/** Sets the scrypt cost N of new hashes (a power of two from 2^10 to 2^17), for the test suite's setup only. */
export function setNewHashCost(n: number = PRODUCTION_N): void {
  if (!Number.isSafeInteger(Math.log2(n)) || n < 2 ** 10 || n > PRODUCTION_N)
    throw new Error(`scrypt cost must be a power of two from 2^10 to 2^17, not ${n}`);
  N = n;
}
const KEY_LENGTH = 32;
// Node refuses scrypt above `maxmem` (32 MiB by default); scrypt needs 128·N·r bytes, so allow twice that.
const maxmemFor = (n: number, r: number) => 128 * n * r * 2;
// A stored hash names its own parameters: refuse ones that would take more than 1 GiB rather than try them.
const MAX_MEMORY = 1024 * 1024 * 1024;
// Each check holds 128 MiB for ~250 ms: at most this many run at once, the rest wait their turn, so that a burst of
// logins cannot exhaust the server's memory.
const MAX_PARALLEL = 2;

let running = 0;
const waiting: (() => void)[] = [];

async function inTurn<T>(work: () => Promise<T>): Promise<T> {
  while (running >= MAX_PARALLEL) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await work();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

function scrypt(password: string, salt: Buffer, opts: ScryptOptions): Promise<Buffer> {
  return inTurn(
    () =>
      new Promise((resolve, reject) =>
        scryptCb(password.normalize("NFKC"), salt, KEY_LENGTH, opts, (err, key) => (err ? reject(err) : resolve(key))),
      ),
  );
}

/** `scrypt$N$r$p$salt$hash` (base64): the parameters travel with the hash so they can be raised later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, { N, r: R, p: P, maxmem: maxmemFor(N, R) });
  return ["scrypt", N, R, P, salt.toString("base64"), key.toString("base64")].join("$");
}

function parseHash(hash: string) {
  const [scheme, n, r, p, salt, expected] = hash.split("$");
  if (scheme !== "scrypt" || !salt || !expected) return null;
  const params = { N: Number(n), r: Number(r), p: Number(p) };
  if (![params.N, params.r, params.p].every((x) => Number.isSafeInteger(x) && x > 0)) return null;
  if (128 * params.N * params.r > MAX_MEMORY || params.p > 16) return null;
  return { params, salt, expected };
}

/** The stored hash of a user who has no password (signs in only through the provider): no password matches it. */
export const NO_PASSWORD = "!sso";

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  const parsed = parseHash(hash);
  if (!parsed) return false;
  const { params, salt, expected } = parsed;
  const key = await scrypt(password, Buffer.from(salt, "base64"), { ...params, maxmem: maxmemFor(params.N, params.r) });
  const want = Buffer.from(expected, "base64");
  return key.length === want.length && timingSafeEqual(key, want);
}

/** True when a stored hash was made with weaker parameters than new hashes get: the next login replaces it. */
export function needsRehash(hash: string): boolean {
  const parsed = parseHash(hash);
  if (!parsed) return true;
  return parsed.params.N < N || parsed.params.r < R || parsed.params.p < P;
}

export { PASSWORD_MIN_LENGTH } from "./password-rules";
