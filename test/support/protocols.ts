/**
 * Runs before every integration test file (vitest.config.ts): the protocols register what shared code needs from
 * them, as the server's start does through app/entry.server.tsx (docs/architecture.md, "Registration").
 */
import "../../app/protocols.server";
