/**
 * The model providers a deployment configures on the server (docs/deploying.md, "Model providers"; docs/security.md,
 * "API keys"): one JSON file, `CONCORD_PROVIDERS` (default ./data/providers.json), names each endpoint the evaluation
 * jobs may call — base URL, model, and where its key is: an environment variable (`apiKeyEnv`) or a file on the
 * server (`apiKeyFile`). The key itself is never in the file, the database, a job's parameters, a page or a log: it
 * is read by `providerConnection` on the worker that makes the calls, when the job starts. Pages see `ProviderView`s.
 */
import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { z } from "zod";
import type { MaxTokensParam } from "./client";

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

const ProviderSchema = z
  .object({
    name: z.string().regex(NAME, "a name of letters, digits, '.', '_' or '-' (at most 64)"),
    baseUrl: z.string().refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), "an http(s) URL"),
    model: z.string().min(1, "the model name the server knows").max(200),
    apiKeyEnv: z
      .string()
      .regex(/^[A-Z_][A-Z0-9_]*$/, "the name of an environment variable")
      .optional(),
    apiKeyFile: z.string().min(1).optional(),
    maxTokensParam: z.enum(["max_tokens", "max_completion_tokens"]).default("max_tokens"),
  })
  .strict()
  .refine((p) => !(p.apiKeyEnv && p.apiKeyFile), "give apiKeyEnv or apiKeyFile, not both");

const ConfigSchema = z.object({ providers: z.array(ProviderSchema) }).strict();

type ProviderConfig = z.infer<typeof ProviderSchema>;

/** What a page may know of a provider: never its key, nor where the key is kept. */
export interface ProviderView {
  name: string;
  model: string;
  /** The base URL without user name or password. */
  baseUrl: string;
  /** Whether its key could be read now (false: the variable is unset or the file unreadable). */
  keyAvailable: boolean;
  needsKey: boolean;
}

/** What the worker needs to call a provider. Server-only: holds the key. */
export interface ProviderConnection {
  name: string;
  model: string;
  baseURL: string;
  apiKey: string;
  maxTokensParam: MaxTokensParam;
}

export class ProviderConfigError extends Error {}

export function providersFile(): string {
  return resolve(process.env.CONCORD_PROVIDERS ?? "./data/providers.json");
}

function withoutCredentials(url: string): string {
  const u = new URL(url);
  u.username = "";
  u.password = "";
  return u.toString().replace(/\/$/, "");
}

/** The configured providers; none when the file does not exist. Bad content: ProviderConfigError, `FILE: reason`. */
function readConfig(): ProviderConfig[] {
  const file = providersFile();
  if (!existsSync(file)) return [];
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    throw new ProviderConfigError(`${file}: not valid JSON (${(e as Error).message})`);
  }
  const parsed = ConfigSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ProviderConfigError(`${file}: ${issue.path.join(".") || "the file"}: ${issue.message}`);
  }
  const seen = new Set<string>();
  for (const p of parsed.data.providers) {
    if (seen.has(p.name)) throw new ProviderConfigError(`${file}: provider "${p.name}" is named twice`);
    seen.add(p.name);
  }
  return parsed.data.providers;
}

function keyOf(p: ProviderConfig): string | null {
  if (p.apiKeyEnv) return process.env[p.apiKeyEnv] || null;
  if (p.apiKeyFile) {
    const path = isAbsolute(p.apiKeyFile) ? p.apiKeyFile : resolve(p.apiKeyFile);
    try {
      return readFileSync(path, "utf8").trim() || null;
    } catch {
      return null;
    }
  }
  return null;
}

export function listProviders(): ProviderView[] {
  return readConfig().map((p) => {
    const needsKey = Boolean(p.apiKeyEnv || p.apiKeyFile);
    return {
      name: p.name,
      model: p.model,
      baseUrl: withoutCredentials(p.baseUrl),
      needsKey,
      keyAvailable: !needsKey || keyOf(p) !== null,
    };
  });
}

/** The provider's view, or null when no provider has that name. */
export function findProvider(name: string): ProviderView | null {
  return listProviders().find((p) => p.name === name) ?? null;
}

/**
 * The connection of a configured provider, key included (read now, from its variable or file). For the worker that
 * makes the calls only; its result must never be stored, logged or sent to a page.
 */
export function providerConnection(name: string): ProviderConnection {
  const p = readConfig().find((x) => x.name === name);
  if (!p) throw new ProviderConfigError(`No provider "${name}" is configured in ${providersFile()}.`);
  const key = keyOf(p);
  if ((p.apiKeyEnv || p.apiKeyFile) && key === null)
    throw new ProviderConfigError(
      p.apiKeyEnv
        ? `Provider "${name}": the environment variable ${p.apiKeyEnv} is not set on the server.`
        : `Provider "${name}": its key file cannot be read on the server.`,
    );
  return {
    name: p.name,
    model: p.model,
    baseURL: p.baseUrl,
    apiKey: key ?? "not-needed",
    maxTokensParam: p.maxTokensParam,
  };
}
