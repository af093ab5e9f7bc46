/**
 * The identity provider's signing keys (a JWKS over HTTP), cached by key id. jwks-rsa fetches
 * and parses the key set (`getSigningKeys`); when to fetch is decided here.
 *
 * Why not jwks-rsa's own cache and limiter: its limiter allows N fetches per minute for the
 * whole process, and anyone spends them (a token with a random `kid` costs a fetch), so a flood
 * of made-up key ids left no fetch for the identity provider's real key rotation. Here:
 * - a known kid never fetches;
 * - an unknown kid triggers at most ONE fetch per cooldown (default 30 s) whoever sends it, and
 *   concurrent unknown kids share the fetch in flight: however many random kids arrive, a key
 *   the provider publishes is seen at the next fetch, at most one cooldown later;
 * - the whole set is refreshed periodically (default every 10 minutes, in the background on the
 *   first use after that age) so removed keys stop being accepted and new ones are known early;
 * - when the JWKS cannot be fetched and the key is not cached, the caller gets a
 *   `JwksUnavailableError` (503 with Retry-After), not "unknown key" (a client told its token
 *   is bad logs its user out).
 */
import crypto from 'node:crypto';
import { JwksClient, JwksError, type SigningKey } from 'jwks-rsa';

export interface JwksCacheOptions {
  /** Minimum time between two fetches triggered by unknown kids (default 30 s; at most 30 s). */
  cooldownMs?: number;
  /** Age after which the key set is refreshed (default 10 minutes). */
  refreshMs?: number;
  /** Timeout of one fetch (default 5 s). */
  fetchTimeoutMs?: number;
}

/** The token names a key the JWKS does not have (after the allowed refetch): a 401. */
export class UnknownKeyError extends Error {
  override name = 'UnknownKeyError';
}

/** The JWKS could not be fetched and the key is not cached: a 503 with Retry-After. */
export class JwksUnavailableError extends Error {
  override name = 'JwksUnavailableError';
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
    override readonly cause?: unknown,
  ) {
    super(message);
  }
}

export const DEFAULT_JWKS_COOLDOWN_MS = 30_000;
const DEFAULT_REFRESH_MS = 10 * 60_000;
const MAX_KEYS = 64;

export interface JwksCache {
  /** The verification key of `kid` (or the only key when the token has no kid). */
  getKey(kid: string | undefined): Promise<crypto.KeyObject>;
  /** Counts the successful fetches: a token verified under another generation must be checked again. */
  generation(): number;
  /** Starts the periodic refresh when it is due (what getKey does first), for callers that skip getKey. */
  maintain(): void;
}

export function createJwksCache(jwksUri: string | (() => Promise<string>), opts: JwksCacheOptions = {}): JwksCache {
  const cooldownMs = Math.min(opts.cooldownMs ?? DEFAULT_JWKS_COOLDOWN_MS, DEFAULT_JWKS_COOLDOWN_MS);
  const refreshMs = opts.refreshMs ?? DEFAULT_REFRESH_MS;
  const fetchTimeoutMs = opts.fetchTimeoutMs ?? 5_000;

  let keys = new Map<string, crypto.KeyObject>();
  let loadedAt = 0; // last successful fetch (0: never)
  let attemptedAt = Number.NEGATIVE_INFINITY; // start of the last fetch, successful or not
  let lastError: unknown = null; // the last fetch's failure, null after a success
  let inFlight: Promise<void> | null = null;
  let generation = 0;

  // One client per URI (an OIDC provider's jwks_uri is discovered), without its cache and limiter.
  const clients = new Map<string, JwksClient>();
  const clientFor = (uri: string): JwksClient => {
    let client = clients.get(uri);
    if (!client) {
      client = new JwksClient({ jwksUri: uri, cache: false, rateLimit: false, timeout: fetchTimeoutMs, requestHeaders: { accept: 'application/json' } });
      clients.set(uri, client);
    }
    return client;
  };

  const fetchKeys = async (): Promise<void> => {
    const uri = typeof jwksUri === 'string' ? jwksUri : await jwksUri();
    const next = new Map<string, crypto.KeyObject>();
    for (const key of (await signingKeysOf(clientFor(uri), fetchTimeoutMs)).slice(0, MAX_KEYS)) {
      next.set(typeof key.kid === 'string' ? key.kid : '', crypto.createPublicKey(key.getPublicKey()));
    }
    keys = next;
    generation++;
    loadedAt = Date.now();
  };

  /** One fetch at a time; callers arriving meanwhile share it. */
  const refresh = (): Promise<void> => {
    inFlight ??= (async () => {
      attemptedAt = Date.now();
      try {
        await fetchKeys();
        lastError = null;
      } catch (err) {
        lastError = err;
      } finally {
        inFlight = null;
      }
    })();
    return inFlight;
  };

  const lookup = (kid: string | undefined): crypto.KeyObject | undefined => {
    if (kid !== undefined) return keys.get(kid);
    return keys.size === 1 ? keys.values().next().value : undefined;
  };

  const unavailable = () => {
    const wait = Math.max(1, Math.ceil((attemptedAt + cooldownMs - Date.now()) / 1000));
    return new JwksUnavailableError('The identity provider\u2019s keys could not be fetched.', Number.isFinite(wait) ? wait : 1, lastError);
  };

  const maintain = () => {
    // Periodic refresh: in the background while the cache answers.
    if (loadedAt !== 0 && Date.now() - loadedAt > refreshMs && !inFlight) void refresh();
  };

  return {
    generation: () => generation,
    maintain,
    async getKey(kid) {
      maintain();
      const cached = lookup(kid);
      if (cached) return cached;
      if (inFlight) {
        await inFlight;
      } else if (Date.now() - attemptedAt >= cooldownMs) {
        await refresh();
      }
      const found = lookup(kid);
      if (found) return found;
      if (lastError !== null) throw unavailable();
      if (loadedAt === 0) throw unavailable(); // never fetched and still cooling down: cannot tell
      throw new UnknownKeyError(`No key with kid ${JSON.stringify(kid ?? null)} in the JWKS.`);
    },
  };
}

/**
 * The key set's signing keys, fetched and parsed by jwks-rsa. A set without signing keys is an
 * empty set (every kid unknown: 401), not an outage. jwks-rsa's timeout is the socket's idle
 * time; `timeoutMs` also bounds the whole fetch.
 */
async function signingKeysOf(client: JwksClient, timeoutMs: number): Promise<SigningKey[]> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`JWKS request timed out after ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([client.getSigningKeys(), deadline]);
  } catch (err) {
    if (err instanceof JwksError && /did not contain any (signing )?keys/.test(err.message)) return [];
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
