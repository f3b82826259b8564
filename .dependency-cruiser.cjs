// The layer rules (docs/checks.md): what may import what. Paths are relative to the repository root.
// Domain code is the pure core: every area's domain/ folder, the reference-metric reproduction, and the shared pure
// modules. Its commands (app/stats/cli.ts) are not domain code: commands may open the database.
const DOMAIN = [
  "^app/[^/]+/domain/",
  "^app/labels/",
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
const UI = ["\\.tsx$", "(^|/)ui/", "/public-ui\\.ts$"];

// Folders (docs/architecture.md, "Areas"). A protocol folder holds one protocol's rules, services, pages' parts and
// commands; a shared folder holds what several protocols use and knows none of them. What shared code needs from the
// protocols (start-up cleanup, guidelines scopes, nav entries, readable audit values) the protocols register in
// app/platform/registry.ts, filled by the composition root app/protocols.server.ts.
const PROTOCOLS = [
  "annotation",
  "adjudication",
  "gold",
  "study-report",
  "screening",
  "judge-validation",
  "evaluation",
  "mentat",
  "case-review",
  "rubric-grading",
  "mc-evaluation",
  "preparation",
].join("|");
const SHARED = [
  "platform",
  "accounts",
  "audit",
  "ui",
  "work-items",
  "formats",
  "labels",
  "stats",
  "model-calls",
  "charts",
  "python-compat",
  "icd10",
  "guidelines",
  "expert-panel",
  "help",
  "data",
].join("|");
// A protocol's public modules: what other protocols may import of it. public.ts is pure (domain functions, types,
// constants: safe in a page, a command and another protocol's domain code); public.server.ts holds its services;
// public-ui.ts the page parts another protocol's page may show (the case label's fields).
const PUBLIC_MODULE = `^app/(${PROTOCOLS})/public(\\.server|-ui)?\\.ts$`;
// The composition roots, which may know every protocol: the command registry, the demo seeding, the pages, the
// protocols' registration (app/protocols.server.ts) and the Remix root and entry.
const COMPOSITION = [
  "^app/routes/",
  "^app/cli/registry\\.ts$",
  "^app/demo/",
  "^app/protocols\\.server\\.ts$",
  "^app/root\\.tsx$",
  "^app/entry\\.server\\.tsx$",
];

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
      comment:
        "Domain code has no database: not the schema in db/, not the drivers. db/vocabulary.ts (what the columns hold, importing nothing) is not the database.",
      severity: "error",
      from: { path: DOMAIN },
      to: { path: ["^db/", "(^|/)node_modules/(better-sqlite3|drizzle-orm)/"], pathNot: "^db/vocabulary\\.ts$" },
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
    {
      name: "shared-imports-no-protocol",
      comment:
        "Shared folders know no protocol: what they need from one, the protocol registers (app/platform/registry.ts). Commands' shared plumbing (app/cli/ less the registry) counts as shared.",
      severity: "error",
      from: { path: [`^app/(${SHARED})/`, "^app/cli/"], pathNot: COMPOSITION },
      to: { path: [`^app/(${PROTOCOLS})/`, "^app/demo/", "^app/protocols\\.server\\.ts$"] },
    },
    {
      name: "db-imports-no-app",
      comment:
        "The schema is the bottom layer: db/ imports nothing from app/, not even a type. What both need (stored value sets, the stored label's shape) lives in db/vocabulary.ts.",
      severity: "error",
      from: { path: "^db/" },
      to: { path: "^app/" },
    },
    {
      name: "db-vocabulary-imports-nothing",
      comment: "db/vocabulary.ts is shared by the schema, the domain code and the pages, so it imports nothing.",
      severity: "error",
      from: { path: "^db/vocabulary\\.ts$" },
      to: {},
    },
    {
      name: "protocol-imports-protocol-through-public-module",
      comment:
        "A protocol uses another only through that protocol's public module: app/<protocol>/public.ts (pure) or public.server.ts (services).",
      severity: "error",
      from: { path: `^app/(${PROTOCOLS})/` },
      to: { path: `^app/(${PROTOCOLS})/`, pathNot: ["^app/$1/", PUBLIC_MODULE] },
    },
    {
      name: "only-session-module-imports-session-library",
      comment:
        "Sessions are owned by one module, app/accounts/auth.server.ts (docs/decisions/0013-sessions-owned-by-the-project.md): no other file imports a session or auth library.",
      severity: "error",
      from: { pathNot: "^app/accounts/auth\\.server\\.ts$" },
      to: { path: "(^|/)(lucia|@lucia-auth/[^/]+|oslo|@oslojs/[^/]+|remix-auth|@remix-run/node/dist/sessions)(/|$)" },
    },
    {
      name: "nothing-imports-root",
      comment: "app/root.tsx is the layout Remix loads; a component every page needs (Csrf) lives in app/ui/.",
      severity: "error",
      from: { pathNot: "^test/" },
      to: { path: "^app/root\\.tsx$" },
    },
    {
      name: "no-circular",
      comment:
        "Modules form a tree (a cycle through type-only imports is allowed: it runs nothing), so each can be loaded and tested on its own.",
      severity: "error",
      from: { path: "^(app|db)/" },
      to: { circular: true, viaOnly: { dependencyTypesNot: ["type-only"] } },
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
