/** Rate limits and the Redis that counts them across instances. */
import type { EnvReader } from './env-reader';

export interface RateLimitConfig {
  readonly rateLimitEnabled: boolean;
  /** SERVICE_RATE_LIMIT_DECISION_PER_MINUTE: the `decision` counter's limit; null: the contract's (6 000). */
  readonly rateLimitDecisionPerMinute: number | null;
  /** SERVICE_RATE_LIMIT_SIGN_IN_PER_MINUTE: the `oidc-sign-in` and `sso` counters' limit per address; null: 300. */
  readonly rateLimitSignInPerMinute: number | null;
  /** SERVICE_RATE_LIMIT_OIDC_TOKEN_PER_MINUTE: the `oidc-token` counter's limit per address; null: 600. */
  readonly rateLimitOidcTokenPerMinute: number | null;
  readonly redisUrl: string | null;
  readonly redisKeyPrefix: string;
}

export function readRateLimitConfig(env: EnvReader): RateLimitConfig {
  const redisUrl = env.url('SERVICE_REDIS_URL', ['redis:', 'rediss:']);
  const rateLimitEnabled = env.bool('SERVICE_RATE_LIMIT_ENABLED', true);
  const rateLimitDecisionPerMinute = env.int('SERVICE_RATE_LIMIT_DECISION_PER_MINUTE', 1, 10_000_000);
  const rateLimitSignInPerMinute = env.int('SERVICE_RATE_LIMIT_SIGN_IN_PER_MINUTE', 1, 10_000_000);
  const rateLimitOidcTokenPerMinute = env.int('SERVICE_RATE_LIMIT_OIDC_TOKEN_PER_MINUTE', 1, 10_000_000);
  const redisKeyPrefix = env.exact('SERVICE_REDIS_KEY_PREFIX') ?? 'tenant-service:';
  return { rateLimitEnabled, rateLimitDecisionPerMinute, rateLimitSignInPerMinute, rateLimitOidcTokenPerMinute, redisUrl, redisKeyPrefix };
}
