/**
 * The little of the `oidc-provider` package (which ships no types) that the tests' loopback provider uses
 * (test/support/oidc-provider.ts).
 */
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  interface Account {
    accountId: string;
    claims(): Record<string, unknown>;
  }

  export default class Provider {
    constructor(
      issuer: string,
      configuration: {
        clients: Record<string, unknown>[];
        cookies?: { keys: string[] };
        claims?: Record<string, string[]>;
        pkce?: { required: () => boolean };
        ttl?: Record<string, number>;
        findAccount(ctx: unknown, sub: string): Promise<Account | undefined>;
      },
    );
    on(event: string, listener: (...args: unknown[]) => void): this;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}
