/**
 * Runs before every test file (vitest.config.ts, setupFiles): new password hashes use scrypt's lowest cost we accept,
 * so that a test user costs microseconds instead of 128 MiB and a quarter of a second. The server started by a browser
 * test still verifies them (a hash names its own parameters) and rehashes them at production cost at their first
 * login; the production cost has its own test, which sets it back (docs/checks.md, "Test fixtures").
 */
import { setNewHashCost } from "../../app/accounts/password.server";

setNewHashCost(2 ** 10);

// Pairs lock at their second submission, as without a grace period, unless a test sets one (docs/checks.md, "Test
// fixtures"); the servers the browser tests start inherit it. The grace period has its own tests.
process.env.CONCORD_SUBMIT_GRACE_SECONDS ??= "0";
