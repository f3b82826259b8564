/**
 * A real OpenID Connect provider on loopback for the tests (the `oidc-provider` package, with its own development
 * login and consent pages): one confidential client registered for Concord's callback, and accounts whose claims a
 * test sets. `signInAt` walks its pages over HTTP as a browser would, carrying its cookies, and returns the callback
 * address the provider sends the browser back to.
 */
import type { AddressInfo } from "node:net";
import { createServer, type Server } from "node:http";
import Provider from "oidc-provider";

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The claims of each account, by its subject (the login typed on the provider's page). */
  accounts: Map<string, Record<string, unknown>>;
  /** The environment that points Concord at this provider. */
  env(redirectUri: string): Record<string, string>;
  stop(): Promise<void>;
}

export async function startProvider(redirectUris: string[]): Promise<TestProvider> {
  const accounts = new Map<string, Record<string, unknown>>();
  const clientId = "concord";
  const clientSecret = "a client secret of the test provider, long enough";
  let server: Server | undefined;
  const listening = await new Promise<Server>((resolve) => {
    const s = (server = createServer());
    s.listen(0, "127.0.0.1", () => resolve(s));
  });
  const issuer = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: redirectUris,
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_basic",
      },
    ],
    cookies: { keys: ["test cookie key for the loopback provider"] },
    claims: {
      openid: ["sub"],
      profile: ["name", "preferred_username", "groups"],
      email: ["email"],
    },
    pkce: { required: () => true },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 3600, AuthorizationCode: 60, IdToken: 3600 },
    async findAccount(_ctx, sub) {
      const claims = accounts.get(sub);
      if (!claims) return undefined;
      return { accountId: sub, claims: () => ({ sub, ...claims }) };
    },
  });
  // Quiet: the provider's own errors are what the tests provoke.
  provider.on("server_error", () => {});
  listening.on("request", provider.callback());
  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    env: (redirectUri) => ({
      CONCORD_OIDC_ISSUER: issuer,
      CONCORD_OIDC_CLIENT_ID: clientId,
      CONCORD_OIDC_CLIENT_SECRET: clientSecret,
      CONCORD_OIDC_REDIRECT_URI: redirectUri,
      CONCORD_OIDC_LABEL: "Test University",
    }),
    stop: () => new Promise<void>((resolve) => server!.close(() => resolve())),
  };
}

/**
 * Goes through the provider's login (as `login`) and consent pages from an authorization address, and returns the
 * address the provider redirects back to (Concord's callback, with its code and state).
 */
export async function signInAt(authorizationUrl: string, login: string, callbackPrefix: string): Promise<URL> {
  const jar = new Map<string, string>();
  const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
  const keep = (res: Response) => {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const at = pair!.indexOf("=");
      jar.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
  };
  let url = authorizationUrl;
  let body: URLSearchParams | undefined;
  for (let step = 0; step < 20; step++) {
    const res = await fetch(url, {
      method: body ? "POST" : "GET",
      body,
      headers: { Cookie: cookieHeader() },
      redirect: "manual",
    });
    keep(res);
    body = undefined;
    const location = res.headers.get("Location");
    if (location) {
      const next = new URL(location, url);
      if (next.href.startsWith(callbackPrefix)) return next;
      url = next.href;
      continue;
    }
    const html = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    const prompt = /name="prompt" value="([a-z]+)"/.exec(html)?.[1];
    if (res.status !== 200 || !action || !prompt)
      throw new Error(`The provider answered ${res.status}: ${html.replace(/<[^>]+>/g, " ").slice(0, 300)}`);
    url = new URL(action.replace(/&amp;/g, "&"), url).href;
    body = new URLSearchParams(prompt === "login" ? { prompt, login, password: "any" } : { prompt });
  }
  throw new Error("The provider's pages did not end in a redirect back.");
}
