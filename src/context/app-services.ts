/**
 * What the app is built from, besides its Config: created by src/build-services.ts (or a test)
 * and passed to createApp; handlers read it as `ctx.services`. Part of the neutral module
 * (src/context): it names other layers' types, never imports their code (`import type` only).
 */
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { LocalKeys } from '../auth/local-keys';
import type { TenantTokenKeys } from '../domain/tenant-tokens';
import type { AuthenticatorOptions } from '../auth/verify';
import type { Database } from '../db/tenant-scope';
import type { Mailer } from '../mail/invitation-mail';
import type { Metrics } from '../http/metrics';
import type { DecisionMemory } from '../tenancy/decision-memory';
import type { RefusalDelay } from '../http/refusal-delay';
import type { InteractionRouterFactory, SignInCompleter } from './sign-in';

/** The rate limits (docs/operations.md#rate-limits), read from openapi.yaml's x-rate-limit (src/http/rate-limit.ts). */
export interface RateLimiter {
  /** Counts the request against its operation's counter (reads the request state: operation, caller). */
  readonly middleware: RequestHandler;
  /** Counts the sign-in browser routes (`/oidc/auth`, `/oidc/interaction`, `/oidc/token`, `/sso`) per client address; runs before their stages. */
  readonly signIn?: RequestHandler;
  /** `memory` (in-process), `redis`, or `degraded` (Redis configured but unreachable). */
  storeState(): 'memory' | 'redis' | 'degraded';
  close(): Promise<void>;
}

/** One finished request, as the access-line stage hands it to metrics. */
export interface ObservedRequest {
  /** operationId, or null for a path that matched no operation. */
  readonly operation: string | null;
  readonly method: string;
  readonly status: number;
  readonly durationMs: number;
  /** A refusal of an unread body answered late (src/http/refusal-delay.ts). */
  readonly held?: boolean;
}

/** The seam for /metrics (src/http/metrics.ts): called once per finished request. */
export interface RequestMetrics {
  observeRequest(request: ObservedRequest): void;
}

export interface AppServices {
  readonly db: Database;
  readonly logger: Logger;
  /** The local provider's signing key; null with any other provider. */
  readonly localKeys: LocalKeys | null;
  /** The tenant-token key set (shared through PostgreSQL): signs tenant tokens, published in the JWKS. */
  readonly tenantTokenKeys: TenantTokenKeys;
  /** Null when SERVICE_RATE_LIMIT_ENABLED is false. */
  readonly rateLimiter: RateLimiter | null;
  /** True when the service runs the embedded PostgreSQL. */
  readonly embeddedDatabase: boolean;
  /** Invitation mail; answers `not_configured` without SERVICE_SMTP_URL. */
  readonly mailer: Mailer;
  /** Prometheus metrics (src/http/metrics.ts): the access-line stage calls observeRequest; GET /metrics renders them. */
  readonly metrics?: RequestMetrics & Partial<Metrics>;
  /** Decisions' facts in memory and their change listener (docs/architecture.md "Decisions from memory"); absent: off. */
  readonly decisionMemory?: DecisionMemory;
  /** Internal tuning of token verification (tests shorten the JWKS cooldown); defaults otherwise. */
  readonly authOptions?: AuthenticatorOptions;
  /** The budgets of refusals of unread bodies (src/http/refusal-delay.ts); a fresh one per app by default (tests pass one with their own clock). */
  readonly refusalDelay?: RefusalDelay;
  /** In place of the provider's sign-in pages (src/oidc/pages): a test's harness; absent in production. */
  readonly oidcInteractions?: InteractionRouterFactory;
  /** In place of the sign-in pages' completer, where SSO callbacks hand what an identity provider vouched for: a test's harness; absent in production. */
  readonly signInCompleter?: SignInCompleter;
}
