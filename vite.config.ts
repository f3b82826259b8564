import { vitePlugin as remix } from "@remix-run/dev";
import { defineConfig } from "vite";
import tsconfigPaths from "vite-tsconfig-paths";

declare module "@remix-run/node" {
  interface Future {
    v3_singleFetch: true;
  }
}

export default defineConfig({
  plugins: [
    remix({
      future: {
        v3_fetcherPersist: true,
        v3_relativeSplatPath: true,
        v3_throwAbortReason: true,
        v3_singleFetch: true,
        // Off: with lazy discovery the first save or link from a freshly loaded page first fetches the route
        // manifest, and when the network is down that fetch fails before the save can be kept and retried, replacing
        // the workspace with an error page (docs/architecture.md, "Saving under load"); and the server matched every
        // parent path of each page again to inline a partial manifest (docs/architecture.md, "Cheaper pages"). The
        // whole manifest is one small cached asset.
        v3_lazyRouteDiscovery: false,
      },
    }),
    tsconfigPaths(),
  ],
  build: { sourcemap: false },
});
