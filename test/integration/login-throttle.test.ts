/**
 * Login throttling that cannot be turned into a lockout (docs/security.md, "Password guessing"): failures are counted
 * per (account, address), only once their password check has finished, and past a few free attempts they earn a
 * delay that doubles with each further failure — never a lock on the account for everyone, nor on every account
 * behind one address.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loginFailures } from "../../db/schema";
import type { Db } from "../../app/platform/db.server";
import { FREE_FAILURES, login, retryDelayMs } from "../../app/accounts/users.server";
import { freshDb, makeUser, TEST_PASSWORD } from "../support/db";

let db: Db;
let cleanup: () => void;
beforeEach(async () => {
  ({ db, cleanup } = freshDb());
  await makeUser(db, "ann", ["annotator"]);
});
afterEach(() => cleanup());

const ATTACKER = "203.0.113.66";
const CLINIC = "198.51.100.7";
const wrong = (ip: string, now: number, username = "ann") =>
  login(db, { username, password: "wrong-password-x", ip, now });
const right = (ip: string, now: number) => login(db, { username: "ann", password: TEST_PASSWORD, ip, now });

describe("throttling by (account, address)", () => {
  it("an attacker's failures from one address do not keep the owner out from another", async () => {
    const now = Date.now();
    for (let i = 0; i < 12; i++) await wrong(ATTACKER, now + i);
    expect((await right(CLINIC, now + 100)).ok).toBe(true);
  });

  it("many failures from one address (a clinic's NAT) do not lock the other accounts behind it", async () => {
    const now = Date.now();
    db.insert(loginFailures)
      .values(Array.from({ length: 40 }, (_, i) => ({ username: `guess${i % 8}`, ip: CLINIC, at: now - 1000 + i })))
      .run();
    expect((await right(CLINIC, now)).ok).toBe(true);
  });

  it("grows the delay with each failure past the free ones, and the right password works once it has passed", async () => {
    const now = Date.now();
    for (let i = 0; i < FREE_FAILURES; i++)
      expect(await wrong(ATTACKER, now + i)).toEqual({ ok: false, error: "Wrong username or password." });
    const t = now + FREE_FAILURES;
    const first = retryDelayMs(FREE_FAILURES);
    expect(first).toBeGreaterThan(0);
    expect(retryDelayMs(FREE_FAILURES + 1)).toBe(2 * first);
    // Within the delay even the right password is asked to wait; the message says how long.
    const early = await right(ATTACKER, t);
    expect(early).toMatchObject({ ok: false, throttled: true });
    expect((early as { error: string }).error).toMatch(
      /^Too many failed attempts\. Wait \d+ seconds? and try again\.$/,
    );
    // One more failure after the delay doubles it.
    expect(await wrong(ATTACKER, t + first)).toEqual({ ok: false, error: "Wrong username or password." });
    expect(await right(ATTACKER, t + first + first)).toMatchObject({ throttled: true });
    expect((await right(ATTACKER, t + first + 2 * first)).ok).toBe(true);
  });

  it("caps the delay: no failure count makes the account unreachable for long", () => {
    expect(retryDelayMs(1000)).toBeLessThanOrEqual(5 * 60_000);
    expect(retryDelayMs(FREE_FAILURES - 1)).toBe(0);
  });
});

describe("only finished failures count", () => {
  it("25 parallel logins with the right password all succeed", async () => {
    const attempts = await Promise.all(
      Array.from({ length: 25 }, () => login(db, { username: "ann", password: TEST_PASSWORD, ip: CLINIC })),
    );
    expect(attempts.filter((a) => a.ok).length).toBe(25);
  });

  it("a burst of wrong passwords still gets at most the free attempts checked", async () => {
    const attempts = await Promise.all(
      Array.from({ length: 20 }, () => login(db, { username: "ann", password: "wrong-password", ip: ATTACKER })),
    );
    expect(attempts.filter((a) => !a.ok && !a.throttled).length).toBeLessThanOrEqual(FREE_FAILURES);
    expect((await right(CLINIC, Date.now())).ok).toBe(true);
  });
});
