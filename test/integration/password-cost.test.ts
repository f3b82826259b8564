/**
 * Password hashing cost (docs/security.md, "Stored passwords"): new hashes use scrypt N = 2^17, r = 8, p = 1; a hash
 * made with weaker parameters is replaced at the next successful login, without the user doing anything.
 */
import { eq } from "drizzle-orm";
import { scryptSync, randomBytes } from "node:crypto";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { users } from "../../db/schema";
import type { Db } from "../../app/platform/db.server";
import { hashPassword, needsRehash, setNewHashCost, verifyPassword } from "../../app/accounts/password.server";
import { login } from "../../app/accounts/users.server";
import { freshDb, makeUser, TEST_PASSWORD } from "../support/db";

let db: Db;
let cleanup: () => void;
// The suite's setup lowers the cost of new hashes (test/support/setup.ts); this file tests the production cost.
beforeAll(() => setNewHashCost());
afterAll(() => setNewHashCost(2 ** 10));
beforeEach(() => ({ db, cleanup } = freshDb()));
afterEach(() => cleanup());

/** A hash as Concord wrote it before the cost was raised (N = 2^15). */
function legacyHash(password: string): string {
  const salt = randomBytes(16);
  const key = scryptSync(password.normalize("NFKC"), salt, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
  return ["scrypt", 2 ** 15, 8, 1, salt.toString("base64"), key.toString("base64")].join("$");
}

describe("scrypt cost", () => {
  it("hashes new passwords with N = 2^17, r = 8, p = 1 and verifies them", async () => {
    const hash = await hashPassword("correct horse battery");
    expect(hash).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(await verifyPassword(hash, "correct horse battery")).toBe(true);
    expect(await verifyPassword(hash, "correct horse battery!")).toBe(false);
    expect(needsRehash(hash)).toBe(false);
  });

  it("still verifies a legacy N = 2^15 hash and says it needs rehashing", async () => {
    const hash = legacyHash("correct horse battery");
    expect(await verifyPassword(hash, "correct horse battery")).toBe(true);
    expect(needsRehash(hash)).toBe(true);
  });

  it("rehashes a legacy hash at the next successful login, and not after a failed one", async () => {
    const user = await makeUser(db, "ann", ["annotator"]);
    const old = legacyHash(TEST_PASSWORD);
    db.update(users).set({ passwordHash: old }).where(eq(users.id, user.id)).run();
    const stored = () => db.select().from(users).where(eq(users.id, user.id)).get()!.passwordHash;
    expect((await login(db, { username: "ann", password: "wrong-password-x", ip: "192.0.2.1" })).ok).toBe(false);
    expect(stored()).toBe(old);
    expect((await login(db, { username: "ann", password: TEST_PASSWORD, ip: "192.0.2.1" })).ok).toBe(true);
    expect(stored()).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect((await login(db, { username: "ann", password: TEST_PASSWORD, ip: "192.0.2.1" })).ok).toBe(true);
  });

  it("refuses a stored hash whose parameters would exhaust memory instead of trying it", async () => {
    expect(await verifyPassword("scrypt$1073741824$8$1$AAAA$AAAA", "x")).toBe(false);
  });
});
