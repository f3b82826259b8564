// Concord's production server: Express serving the Remix build, with security headers, a cross-origin post check,
// and the start-up work (migrations, demo seeding) that entry.server exports.
import { createRequestHandler } from "@remix-run/express";
import express from "express";
import { randomBytes } from "node:crypto";
import { networkInterfaces } from "node:os";

// Files this process creates (the database, its WAL, backups) are readable by the owner only: they hold clinical text.
process.umask(0o077);

// `npm run dev` is `node server.js --dev`: this same server, with Vite's development middleware in place of the built
// client and the server build loaded from Vite on every request (hot reloading), so development answers as production
// does (busy answers, the host allowlist, the cross-origin check; docs/architecture.md, "Development"). Only the
// Content-Security-Policy is left out there, because Vite injects scripts of its own.
const dev = process.argv.includes("--dev");
if (dev) process.env.NODE_ENV = "development";
const vite = dev ? await (await import("vite")).createServer({ server: { middlewareMode: true } }) : null;
const loadBuild = () => (vite ? vite.ssrLoadModule("virtual:remix/server-build") : import("./build/server/index.js"));
const build = await loadBuild();
const port = Number(process.env.PORT || 3000);
const host = process.env.HOST || "127.0.0.1";
const baseUrl = `http://${host === "0.0.0.0" ? "localhost" : host}:${port}`;

// Only the names Concord is reached by are served (DNS rebinding; docs/security.md). A bad list stops the start.
let allowlist;
try {
  allowlist = build.entry.module.allowedHosts({
    host,
    port,
    env: process.env.CONCORD_ALLOWED_HOSTS,
    interfaces: Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address)),
  });
} catch (e) {
  console.error(e instanceof Error ? e.message : String(e));
  process.exit(2);
}

try {
  await build.entry.module.startup({ baseUrl, log: (line) => console.log(line) });
} catch (e) {
  // A damaged database or a full disk at the first start: one line that says what to do, no stack trace.
  if (!(e instanceof Error)) throw e;
  console.error(e.name === "StartupRefusal" ? e.message : `Concord could not start: ${e.message}`);
  process.exit(2);
}

const app = express();
app.disable("x-powered-by");
// Behind one reverse proxy: trust only its own X-Forwarded-For entry, so clients cannot choose their address.
if (process.env.CONCORD_TRUST_PROXY === "1") app.set("trust proxy", 1);

app.use((req, res, next) => {
  const forwarded = app.get("trust proxy") ? req.get("x-forwarded-host") : undefined;
  if (build.entry.module.hostAllowed(forwarded ?? req.get("host"), allowlist)) return next();
  res.status(400).type("text/plain").send("This server does not answer to that host name (see CONCORD_ALLOWED_HOSTS).");
});

app.use((req, res, next) => {
  const nonce = randomBytes(16).toString("base64");
  res.locals.nonce = nonce;
  if (!dev)
    res.setHeader(
      "Content-Security-Policy",
      [
        "default-src 'self'",
        `script-src 'self' 'nonce-${nonce}'`,
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "connect-src 'self'",
        "font-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
      ].join("; "),
    );
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("X-Frame-Options", "DENY");
  res.setHeader("Referrer-Policy", "same-origin");
  res.setHeader("Cross-Origin-Opener-Policy", "same-origin");
  res.setHeader("Permissions-Policy", "camera=(), microphone=(), geolocation=()");
  if (process.env.NODE_ENV === "production" && process.env.CONCORD_SECURE_COOKIE !== "0")
    res.setHeader("Strict-Transport-Security", "max-age=31536000");
  next();
});

// Cross-site request forgery, first line: a state-changing request must come from this origin (Lucia's advice).
// Forms also carry a per-session token that every action checks.
app.use((req, res, next) => {
  if (req.method === "GET" || req.method === "HEAD" || req.method === "OPTIONS") return next();
  const origin = req.get("origin");
  const hostHeader =
    req.get("x-forwarded-host") && app.get("trust proxy") ? req.get("x-forwarded-host") : req.get("host");
  if (origin) {
    let originHost = null;
    try {
      originHost = new URL(origin).host;
    } catch {
      // An unparsable Origin stays null and so never matches the host.
    }
    if (originHost !== hostHeader) return res.status(403).type("text/plain").send("Cross-origin request refused.");
  }
  next();
});

const here = (p) => new URL(p, import.meta.url).pathname;
// Request bodies are read by Remix as a stream: refuse oversized ones up front. Uploads (admin import pages) get a
// larger limit; everything else is a small form. A body without a declared length is refused (browsers always send it).
const MB = 1024 * 1024;
app.use((req, res, next) => {
  if (req.method === "GET" || req.method === "HEAD" || req.method === "OPTIONS") return next();
  const limit = req.path.startsWith("/admin/") ? 60 * MB : 2 * MB;
  const length = req.get("content-length");
  if (length === undefined && req.get("transfer-encoding"))
    return res.status(411).type("text/plain").send("A Content-Length header is required.");
  if (Number(length ?? 0) > limit)
    return res
      .status(413)
      .type("text/plain")
      .send(`The request is larger than ${limit / MB} MB.`);
  next();
});

if (vite) {
  app.use(vite.middlewares);
} else {
  app.use("/assets", express.static(here("./build/client/assets"), { immutable: true, maxAge: "1y" }));
  app.use(express.static(here("./build/client"), { maxAge: "1h" }));
}

// Every loader and action answers 503 with Retry-After, not 500, when another process holds the database's write lock
// past the busy timeout (docs/reliability.md, "Busy answers"): applied here to the whole build, so no route forgets it.
const answeringBusy = (b) => ({ ...b, routes: b.entry.module.answerBusyOnEveryRoute(b.routes) });
const served = answeringBusy(build);

app.all(
  "*",
  createRequestHandler({
    build: vite ? async () => answeringBusy(await loadBuild()) : served,
    mode: dev ? "development" : undefined,
    getLoadContext: (req, res) => ({ nonce: res.locals.nonce, ip: req.ip }),
  }),
);

const server = app.listen(port, host, () => {
  console.log(`Concord is listening on ${baseUrl}`);
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.close(() => process.exit(0)));
