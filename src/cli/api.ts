/**
 * tenantctl's connection to the service: the generated hey-api client (no hand-written HTTP),
 * the bearer token (given, or minted from the local signing key), and one way of turning every
 * failure into a CliError with a clear sentence and an exit status.
 */
import path from 'node:path';
import { createClient, createConfig, type Client } from '../../generated/client';
import { readLocalKeys, signLocalToken } from '../auth/local-keys';
import { CliError, EXIT_REFUSED } from './errors';

export interface GlobalOptions {
  url: string;
  token?: string;
  dataDir: string;
  adminRole: string;
  adminRoleClaim: string;
  audience?: string;
}

/** Lifetime of the admin token minted for one command. */
const MINTED_TOKEN_TTL_SECONDS = 300;
/** How long one request may take before tenantctl gives up. */
export const REQUEST_TIMEOUT_MS = 120_000;

export interface Connection {
  readonly client: Client;
  readonly baseUrl: string;
  /** Where the token came from, for hints when the server refuses it. */
  readonly tokenSource: 'given' | 'minted' | 'none';
}

/**
 * The service's URL when neither --url nor SERVICE_URL is given: where the service itself would
 * listen with the same environment (SERVICE_HOST, default 127.0.0.1; SERVICE_PORT, default 8080).
 * A wildcard bind address (0.0.0.0, ::) is reached on the loopback address.
 */
export function defaultServiceUrl(env: NodeJS.ProcessEnv): string {
  let host = env.SERVICE_HOST?.trim() || '127.0.0.1';
  if (host === '0.0.0.0') host = '127.0.0.1';
  else if (host === '::' || host === '[::]') host = '[::1]';
  else if (host.includes(':') && !host.startsWith('[')) host = `[${host}]`;
  const port = env.SERVICE_PORT?.trim() || '8080';
  return `http://${host}:${port}`;
}

/** Validates --url and builds the client with the caller's token. */
export function connect(opts: GlobalOptions): Connection {
  const baseUrl = parseServiceUrl(opts.url);
  let token = opts.token?.trim() || undefined;
  let tokenSource: Connection['tokenSource'] = token ? 'given' : 'none';
  if (!token) {
    // Local mode: a platform admin's token from the key the service made on first start, so
    // `tenantctl tenant list` works on a fresh machine with nothing configured.
    const keys = readLocalKeys(path.resolve(opts.dataDir));
    if (keys) {
      token = signLocalToken(keys, {
        sub: 'tenantctl',
        name: 'tenantctl',
        admin: true,
        adminRole: opts.adminRole,
        roleClaim: opts.adminRoleClaim,
        ttlSeconds: MINTED_TOKEN_TTL_SECONDS,
        extraClaims: opts.audience ? { aud: opts.audience } : undefined,
      });
      tokenSource = 'minted';
    }
  }
  const client = createClient(
    createConfig({
      baseUrl,
      headers: { 'User-Agent': 'tenantctl', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    }),
  );
  return { client, baseUrl, tokenSource };
}

/** `http(s)://host[:port][/prefix]`, without a trailing slash. */
export function parseServiceUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CliError(`--url must be an http(s) URL such as http://127.0.0.1:8080, got '${raw}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliError(`--url must be an http(s) URL such as http://127.0.0.1:8080, got '${raw}'`);
  }
  return url.toString().replace(/\/+$/, '');
}

/** What every generated sdk function resolves to (with throwOnError false). */
interface SdkResult<T> {
  data?: T;
  error?: unknown;
  response?: Response;
}

/**
 * Unwraps an sdk call: the data on success, else a CliError naming the server's `error` and
 * `detail`, or saying the server could not be reached.
 */
export async function call<T>(
  conn: Connection,
  what: string,
  result: Promise<SdkResult<T>>,
  // forbidden: the text added to a 403 (with its leading space); null for none, as tenant-scoped
  // commands pass, where a 403 is about the tenant role and the server's detail says which.
  hints: { forbidden?: string | null } = {},
): Promise<T> {
  let r: SdkResult<T>;
  try {
    r = await result;
  } catch (err) {
    throw unreachable(conn, err);
  }
  if (!r.response) throw unreachable(conn, r.error);
  if (r.response.ok && r.data !== undefined) return r.data;
  const body = r.error as { error?: unknown; detail?: unknown } | string | undefined;
  if (body && typeof body === 'object' && typeof body.error === 'string') {
    const detail = typeof body.detail === 'string' ? body.detail : '';
    let hint = '';
    if (r.response.status === 401) {
      hint =
        conn.tokenSource === 'none'
          ? ' (no token: pass --token or SERVICE_TOKEN, or start the service once in local mode so tenantctl can mint one from SERVICE_DATA_DIR)'
          : conn.tokenSource === 'minted'
            ? ' (the token was minted from the local signing key; is the service using another SERVICE_DATA_DIR or auth provider? pass --token)'
            : '';
    } else if (r.response.status === 403 && hints.forbidden !== undefined) {
      hint = hints.forbidden ?? '';
    } else if (r.response.status === 403 && conn.tokenSource === 'given') {
      hint = ' (the token must carry the platform admin role)';
    }
    throw new CliError(`${body.error}: ${detail}${hint}`, EXIT_REFUSED);
  }
  const text = typeof body === 'string' ? body.trim().slice(0, 200) : '';
  throw new CliError(`${what} failed: the server at ${conn.baseUrl} answered HTTP ${r.response.status}${text ? `: ${text}` : ''}`, EXIT_REFUSED);
}

function unreachable(conn: Connection, err: unknown): CliError {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } } | undefined;
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') {
    return new CliError(`the service at ${conn.baseUrl} did not answer within ${REQUEST_TIMEOUT_MS / 1000} s`);
  }
  const reason = e?.cause?.code ?? e?.cause?.message ?? e?.message ?? 'unknown error';
  return new CliError(`cannot reach the service at ${conn.baseUrl} (${reason}); is it running? Set --url or SERVICE_URL.`);
}
