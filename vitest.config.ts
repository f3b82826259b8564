import { defineConfig } from "vitest/config";
import tsconfigPaths from "vite-tsconfig-paths";

// Three tiers (STYLE.md): unit (pure core), integration (services on a temporary SQLite database),
// e2e (the built app driven by Playwright in Debian's Chromium). e2e files run one at a time: each starts a server.
export default defineConfig({
  plugins: [tsconfigPaths()],
  test: {
    setupFiles: ["test/support/setup.ts"],
    projects: [
      { extends: true, test: { name: "unit", include: ["test/unit/**/*.test.ts"] } },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          testTimeout: 30_000,
          // The protocols' registration, as the server's start makes it (docs/architecture.md, "Registration").
          setupFiles: ["test/support/protocols.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          pool: "forks",
          poolOptions: { forks: { singleFork: true } },
        },
      },
    ],
  },
});
