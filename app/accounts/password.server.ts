import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from "node:crypto";

// scrypt (RFC 7914) with N = 2^15, r = 8, p = 1: the OWASP-recommended minimum cost for scrypt, ~100 ms here.
const N = 2 ** 15;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;
const MAXMEM = 128 * N * R * 2;

function scrypt(password: string, salt: Buffer, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCb(password.normalize("NFKC"), salt, KEY_LENGTH, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** `scrypt$N$r$p$salt$hash` (base64): the parameters travel with the hash so they can be raised later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, { N, r: R, p: P, maxmem: MAXMEM });
  return ["scrypt", N, R, P, salt.toString("base64"), key.toString("base64")].join("$");
}

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  const [scheme, n, r, p, salt, expected] = hash.split("$");
  if (scheme !== "scrypt" || !salt || !expected) return false;
  const params = { N: Number(n), r: Number(r), p: Number(p) };
  const key = await scrypt(password, Buffer.from(salt, "base64"), { ...params, maxmem: 128 * params.N * params.r * 2 });
  const want = Buffer.from(expected, "base64");
  return key.length === want.length && timingSafeEqual(key, want);
}

export const PASSWORD_MIN_LENGTH = 10;
