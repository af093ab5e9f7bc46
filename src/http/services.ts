/**
 * What the app is built from, besides its Config: created by server.ts (or a test) and passed
 * to createApp.
 */
import type { RequestHandler } from 'express';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { LocalKeys } from '../auth/local-keys';

/** The rate limits of SPEC.md §8 (src/http/rate-limit.ts). */
export interface RateLimiter {
  /** Counts the request against its operation's limit (reads `res.locals.operation`). */
  readonly middleware: RequestHandler;
  /** `memory` (in-process), `redis`, or `degraded` (Redis configured but unreachable). */
  storeState(): 'memory' | 'redis' | 'degraded';
  close(): Promise<void>;
}

export interface AppServices {
  readonly db: Knex;
  readonly logger: Logger;
  /** The local provider's signing key; null with any other provider. */
  readonly localKeys: LocalKeys | null;
  /** Null when SERVICE_RATE_LIMIT_ENABLED is false. */
  readonly rateLimiter: RateLimiter | null;
  /** True when the service runs the embedded PostgreSQL. */
  readonly embeddedDatabase: boolean;
}
