// The layer rules (docs/checks.md): what may import what. Paths are relative to the repository root.
// Domain code is the pure core: every area's domain/ folder, the reference-metric reproduction, and the shared pure
// modules. Its commands (app/stats/cli.ts) are not domain code: commands may open the database.
const DOMAIN = [
  "^app/[^/]+/domain/",
  "^app/evaluation/compat/",
  "^app/stats/(?!cli\\.ts$)",
  "^app/formats/",
  "^app/python-compat/",
  "^app/icd10/icd10\\.ts$",
  "^app/icd10/icd10-search\\.ts$",
  "^app/accounts/roles\\.ts$",
  "^app/accounts/safe-redirect\\.ts$",
];
const SERVICE = "\\.server\\.ts$";
const ROUTE = "^app/routes/";
const UI = ["\\.tsx$", "(^|/)ui/"];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "domain-imports-no-service",
      comment: "Domain code is pure: it takes its data as arguments and never calls a *.server.ts service.",
      severity: "error",
      from: { path: DOMAIN },
      to: { path: SERVICE },
    },
    {
      name: "domain-imports-no-database",
      comment: "Domain code has no database: not the schema in db/, not the drivers.",
      severity: "error",
      from: { path: DOMAIN },
      to: { path: ["^db/", "(^|/)node_modules/(better-sqlite3|drizzle-orm)/"] },
    },
    {
      name: "domain-imports-no-ui",
      comment: "Domain code renders nothing: no components (*.tsx, ui/), no React.",
      severity: "error",
      from: { path: DOMAIN },
      to: { path: [...UI, "(^|/)node_modules/(react|react-dom|@remix-run/react)/"] },
    },
    {
      name: "service-imports-no-ui",
      comment: "Services return data; a type both sides need belongs in the area's domain/, not in a component.",
      severity: "error",
      from: { path: SERVICE },
      to: { path: UI },
    },
    {
      name: "nothing-imports-routes",
      comment:
        "Routes are leaves, so no service imports one either: Remix loads them; shared code lives elsewhere. Tests may call a route's loader or action directly.",
      severity: "error",
      from: { pathNot: "^test/" },
      to: { path: ROUTE },
    },
    {
      name: "no-circular-domain",
      comment:
        "Domain modules form a tree, so each can be read and tested on its own (a cycle through type-only imports is allowed: it runs nothing).",
      severity: "error",
      from: { path: DOMAIN },
      to: { path: DOMAIN, circular: true, viaOnly: { dependencyTypesNot: ["type-only"] } },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(build|public/build|\\.cache)/" },
    // Type-only imports count: a service must not take even a type from a component.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".tsx", ".js", ".cjs", ".mjs", ".json"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
