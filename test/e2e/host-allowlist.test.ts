/**
 * DNS rebinding against a local instance (docs/security.md): a request whose Host (and matching Origin) is a name
 * the server was not configured for is refused before any page or login runs; the names in CONCORD_ALLOWED_HOSTS
 * (default: the listen address and localhost) are served.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, type RunningApp } from "../support/server";

/** A request with a Host header of our choosing (fetch does not allow setting Host). */
function send(
  url: string,
  opts: { host: string; method?: string; body?: string; origin?: string },
): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: opts.method ?? "GET",
        headers: {
          Host: opts.host,
          ...(opts.origin ? { Origin: opts.origin } : {}),
          ...(opts.body !== undefined
            ? { "Content-Type": "application/x-www-form-urlencoded", "Content-Length": Buffer.byteLength(opts.body) }
            : {}),
        },
      },
      (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode!, body }));
      },
    );
    req.on("error", reject);
    req.end(opts.body);
  });
}

describe("Host allowlist, default", () => {
  let app: RunningApp;
  beforeAll(async () => {
    app = await startApp({ demo: false });
  });
  afterAll(() => app.stop());

  it("serves the listen address and localhost", async () => {
    const port = new URL(app.url).port;
    expect((await send(`${app.url}/login`, { host: `127.0.0.1:${port}` })).status).toBe(200);
    expect((await send(`${app.url}/login`, { host: `localhost:${port}` })).status).toBe(200);
  });

  it("refuses a rebinding name, for pages and for a login whose Origin matches the forged Host", async () => {
    const port = new URL(app.url).port;
    const evil = `rebind.evil.example:${port}`;
    const page = await send(`${app.url}/login`, { host: evil });
    expect(page.status).toBe(400);
    expect(page.body).toMatch(/CONCORD_ALLOWED_HOSTS/);
    const post = await send(`${app.url}/login`, {
      host: evil,
      origin: `http://${evil}`,
      method: "POST",
      body: "username=admin&password=concord-demo",
    });
    expect(post.status).toBe(400);
  });
});

describe("Host allowlist, CONCORD_ALLOWED_HOSTS", () => {
  let app: RunningApp;
  beforeAll(async () => {
    app = await startApp({ demo: false, env: { CONCORD_ALLOWED_HOSTS: "concord.example.org" } });
  });
  afterAll(() => app.stop());

  it("serves the configured name and refuses the others, localhost included", async () => {
    const port = new URL(app.url).port;
    expect((await send(`${app.url}/login`, { host: "concord.example.org" })).status).toBe(200);
    expect((await send(`${app.url}/login`, { host: `127.0.0.1:${port}` })).status).toBe(400);
  });
});
