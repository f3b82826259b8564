/**
 * Which Host headers the server answers (docs/security.md, "DNS rebinding"). A page on a name the attacker controls
 * can be made to resolve to a local Concord; the browser then sends that name as Host and as Origin, which passes an
 * origin check that compares the two. Serving only the names Concord is really reached by closes that door.
 *
 * CONCORD_ALLOWED_HOSTS is a comma-separated list of `name` (any port) or `name:port` (that port only). Without it:
 * the listen address and localhost (127.0.0.1, [::1]) on the listen port; listening on every interface adds the
 * machine's own addresses.
 */

export interface HostAllowlist {
  /** hostname → allowed ports (null: any port). */
  readonly entries: ReadonlyMap<string, ReadonlySet<string> | null>;
}

const NAME = /^(\[[0-9a-f:.]+\]|[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*)$/;

/** Splits `name[:port]` (IPv6 in brackets); null when it is not one. */
function splitHost(value: string): { name: string; port: string | null } | null {
  const m = /^(\[[^\]]*\]|[^:]*)(?::(\d{1,5}))?$/.exec(value.trim().toLowerCase());
  if (!m || !NAME.test(m[1]!)) return null;
  return { name: m[1]!, port: m[2] ?? null };
}

function bracketed(address: string): string {
  return address.includes(":") && !address.startsWith("[") ? `[${address.toLowerCase()}]` : address.toLowerCase();
}

export function allowedHosts(opts: {
  host: string;
  port: number;
  env: string | undefined;
  interfaces?: string[];
}): HostAllowlist {
  const entries = new Map<string, Set<string> | null>();
  const add = (name: string, port: string | null) => {
    const current = entries.get(name);
    if (current === null) return;
    if (port === null) entries.set(name, null);
    else entries.set(name, new Set([...(current ?? []), port]));
  };
  if (opts.env !== undefined && opts.env.trim() !== "") {
    for (const item of opts.env
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean)) {
      const parsed = splitHost(item);
      if (!parsed)
        throw new Error(
          `CONCORD_ALLOWED_HOSTS: "${item}" is not a host name or name:port (example: concord.example.org,localhost:3000).`,
        );
      add(parsed.name, parsed.port);
    }
    return { entries };
  }
  const port = String(opts.port);
  const everywhere = opts.host === "0.0.0.0" || opts.host === "::" || opts.host === "";
  const names = ["localhost", "127.0.0.1", "[::1]", ...(everywhere ? (opts.interfaces ?? []) : [opts.host])];
  for (const name of names) add(bracketed(name), port);
  return { entries };
}

export function hostAllowed(hostHeader: string | undefined, allowlist: HostAllowlist): boolean {
  if (!hostHeader) return false;
  const parsed = splitHost(hostHeader);
  if (!parsed) return false;
  if (!allowlist.entries.has(parsed.name)) return false;
  const ports = allowlist.entries.get(parsed.name);
  return ports === null || (ports !== undefined && ports.has(parsed.port ?? "80"));
}
