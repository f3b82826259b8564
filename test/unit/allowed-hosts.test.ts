/**
 * The Host allowlist (docs/security.md, "DNS rebinding"): a page on another name that resolves to this server sends
 * its own name as Host (and as Origin, so the origin check alone passes); only the names Concord is reached by are
 * served.
 */
import { describe, expect, it } from "vitest";
import { allowedHosts, hostAllowed } from "../../app/platform/allowed-hosts";

describe("allowedHosts", () => {
  it("defaults to the listen address and localhost, with the port", () => {
    const allowed = allowedHosts({ host: "127.0.0.1", port: 3000, env: undefined });
    expect(hostAllowed("127.0.0.1:3000", allowed)).toBe(true);
    expect(hostAllowed("localhost:3000", allowed)).toBe(true);
    expect(hostAllowed("LOCALHOST:3000", allowed)).toBe(true);
    expect(hostAllowed("[::1]:3000", allowed)).toBe(true);
    expect(hostAllowed("evil.example:3000", allowed)).toBe(false);
    expect(hostAllowed("evil.example", allowed)).toBe(false);
    expect(hostAllowed("127.0.0.1:3001", allowed)).toBe(false);
    expect(hostAllowed("127.0.0.1.evil.example:3000", allowed)).toBe(false);
    expect(hostAllowed(undefined, allowed)).toBe(false);
    expect(hostAllowed("", allowed)).toBe(false);
  });

  it("serves the machine's own name and addresses when listening on every interface", () => {
    const allowed = allowedHosts({ host: "0.0.0.0", port: 8080, env: undefined, interfaces: ["10.1.2.3", "fe80::1"] });
    expect(hostAllowed("localhost:8080", allowed)).toBe(true);
    expect(hostAllowed("10.1.2.3:8080", allowed)).toBe(true);
    expect(hostAllowed("[fe80::1]:8080", allowed)).toBe(true);
    expect(hostAllowed("rebind.evil.example:8080", allowed)).toBe(false);
  });

  it("CONCORD_ALLOWED_HOSTS replaces the default: names with any port, or name:port exactly", () => {
    const allowed = allowedHosts({
      host: "127.0.0.1",
      port: 3000,
      env: "concord.example.org, Staging.example.org:8443",
    });
    expect(hostAllowed("concord.example.org", allowed)).toBe(true);
    expect(hostAllowed("concord.example.org:443", allowed)).toBe(true);
    expect(hostAllowed("staging.example.org:8443", allowed)).toBe(true);
    expect(hostAllowed("staging.example.org", allowed)).toBe(false);
    expect(hostAllowed("localhost:3000", allowed)).toBe(false);
    expect(hostAllowed("evil.concord.example.org", allowed)).toBe(false);
  });

  it("refuses a malformed allowlist entry at start rather than serving every host", () => {
    expect(() => allowedHosts({ host: "127.0.0.1", port: 3000, env: "*" })).toThrow(/CONCORD_ALLOWED_HOSTS/);
    expect(() => allowedHosts({ host: "127.0.0.1", port: 3000, env: "http://x.example/" })).toThrow(
      /CONCORD_ALLOWED_HOSTS/,
    );
  });
});
