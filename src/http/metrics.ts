/**
 * Prometheus metrics (docs/operations.md#metrics-and-logs), on a registry of their own (never
 * prom-client's global one, so several apps in one process — tests — do not collide). Labels are
 * low-cardinality by construction: operationId, method, status class, resolution source and
 * outcome, rate-limit counter name, delivery outcome. Never a tenant, user, path or id.
 *
 *   tenant_service_http_request_duration_seconds{operation,method,status_class}   histogram
 *   tenant_service_tenant_resolutions_total{source,outcome}                        counter
 *   tenant_service_rate_limit_refusals_total{counter}                              counter
 *   tenant_service_tenant_decisions_total{outcome}   (GET /api/tenant/decision)    counter
 *   tenant_service_db_pool_connections{state}  (used | free | pending_acquire | pending_create)
 *   tenant_service_db_pool_max                                                      gauge
 *   tenant_service_webhook_deliveries_total{outcome}                               counter
 *   tenant_service_sign_in_requests{state}  (working | waiting | elsewhere)          gauge
 *   tenant_service_decision_facts_*: memory decisions (./facts-memory-metrics.ts)
 *   process_* and nodejs_*: prom-client's default process metrics
 */
import type { Database } from '../db/tenant-scope';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { ApiError } from '../errors';
import { loadOpenApiDocument } from '../openapi-document';
import { requestedTenant, type TenantSource } from '../tenancy/resolve';
import type { Caller } from '../context/claims';
import type { Config } from '../config';
import { DECISION_OUTCOMES, type DecisionOutcome } from './decision';
import { registerFactsMemoryMetrics } from './facts-memory-metrics';
import type { FactsMemoryObserver } from '../tenancy/facts-memory';

/** One finished HTTP request, as the access line sees it (the pipeline's `observeRequest` seam). */
export interface RequestSample {
  /** The matched operationId; null for paths outside the contract (docs, unknown paths). */
  readonly operation: string | null;
  readonly method: string;
  readonly status: number;
  readonly durationMs: number;
  /** A refusal of an unread body answered late (./refusal-delay.ts). */
  readonly held?: boolean;
}

/** What the instance's sign-in requests are doing now (./sign-in-work.ts; the `tenant_service_sign_in_requests` gauge). */
export interface SignInLoad {
  /** Doing their work, each holding a slot. */
  readonly working: number;
  /** Waiting for a slot (first, or again after another server answered). */
  readonly waiting: number;
  /** Waiting for another server (the tenant's identity provider, the mail server), holding none. */
  readonly elsewhere: number;
}

/** Outcome of a delivery attempt: `delivered` (2xx), `retry` (will be retried), `failed` (given up). */
export type WebhookDeliveryOutcome = 'delivered' | 'retry' | 'failed';

export interface Metrics {
  readonly registry: Registry;
  /** Content-Type of `render()`'s output. */
  readonly contentType: string;
  /** Once per finished request; a 429 also counts a refusal of the operation's rate-limit counter. */
  observeRequest(sample: RequestSample): void;
  tenantResolution(source: TenantSource | 'none', outcome: string): void;
  /** Once per answer of an operation declaring x-gateway-auth, the gateway decision (src/http/decision.ts's outcomes). */
  tenantDecision(outcome: DecisionOutcome): void;
  /** For the webhook worker: one call per delivery attempt. */
  webhookDelivery(outcome: WebhookDeliveryOutcome): void;
  /** One tenant token minted (POST /api/tenant/token). */
  tenantTokenIssued(): void;
  /** Reads the instance's sign-in requests at scrape time (./sign-in-work.ts); one app calls it once. */
  watchSignInWork(read: () => SignInLoad): void;
  /** What the decision facts memory reports (./facts-memory-metrics.ts). */
  readonly factsMemoryObserver: FactsMemoryObserver;
  /** The exposition text. */
  render(): Promise<string>;
}

/** Buckets (seconds) from 2.5 ms to 10 s: the service's p50 is ~20 ms, its timeouts 10–30 s. */
const DURATION_BUCKETS = [0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const OPERATION_ID = /^[A-Za-z][A-Za-z0-9]{0,63}$/;

interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  numPendingCreates(): number;
  max?: number;
}

/** Creates the metrics of one app. `db` feeds the pool gauges (read at scrape time). */
export function createMetrics(opts: { db?: Database; collectProcessMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  const counters = rateLimitCounters();
  if (opts.collectProcessMetrics ?? true) collectDefaultMetrics({ register: registry });

  const duration = new Histogram({
    name: 'tenant_service_http_request_duration_seconds',
    help: 'HTTP request duration by operationId (or "none" outside the contract), method and status class.',
    labelNames: ['operation', 'method', 'status_class'] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const { resolutions, refusals, deliveries, tenantTokens, decisions, heldRefusals } = createCounters(registry);
  registerPoolGauges(registry, opts.db);
  for (const outcome of DECISION_OUTCOMES) decisions.inc({ outcome }, 0);
  // Known labels start at zero, so rate() works from the first scrape.
  for (const outcome of ['delivered', 'retry', 'failed'] as const) deliveries.inc({ outcome }, 0);

  const factsMemoryObserver = registerFactsMemoryMetrics(registry);
  let signIns: () => SignInLoad = () => ({ working: 0, waiting: 0, elsewhere: 0 });
  new Gauge({
    name: 'tenant_service_sign_in_requests',
    help: 'Sign-in requests (/oidc, /sso) by state: working (holding a slot), waiting (for a slot), elsewhere (waiting for the identity provider or the mail server).',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const load = signIns();
      for (const state of ['working', 'waiting', 'elsewhere'] as const) this.set({ state }, load[state]);
    },
  });

  return {
    registry,
    contentType: registry.contentType,
    factsMemoryObserver,
    observeRequest(s) {
      const method = METHODS.has(s.method.toUpperCase()) ? s.method.toUpperCase() : 'OTHER';
      const operation = s.operation && OPERATION_ID.test(s.operation) ? s.operation : 'none';
      const statusClass = s.status >= 100 && s.status < 600 ? `${Math.floor(s.status / 100)}xx` : 'other';
      duration.observe({ operation, method, status_class: statusClass }, Math.max(0, s.durationMs) / 1000);
      // Every /api operation declares its counter (x-rate-limit); an /api path matching no
      // operation counts against `api`. Nothing else is ever refused with 429.
      if (s.status === 429) refusals.inc({ counter: (s.operation && counters.get(s.operation)) ?? 'api' });
      if (s.held) heldRefusals.inc();
    },
    tenantResolution(source, outcome) {
      resolutions.inc({ source, outcome });
    },
    webhookDelivery(outcome) {
      deliveries.inc({ outcome });
    },
    tenantTokenIssued() {
      tenantTokens.inc();
    },
    tenantDecision(outcome) {
      decisions.inc({ outcome });
    },
    watchSignInWork(read) {
      signIns = read;
    },
    render: () => registry.metrics(),
  };
}

/** The service's counters, registered in `registry`. */
function createCounters(registry: Registry) {
  const resolutions = new Counter({
    name: 'tenant_service_tenant_resolutions_total',
    help: 'Tenant resolutions of tenant-scoped requests by source (claim kind, header, email domain, single_tenant, none) and outcome.',
    labelNames: ['source', 'outcome'] as const,
    registers: [registry],
  });
  const refusals = new Counter({
    name: 'tenant_service_rate_limit_refusals_total',
    help: 'Requests refused with 429 by rate-limit counter.',
    labelNames: ['counter'] as const,
    registers: [registry],
  });
  const deliveries = new Counter({
    name: 'tenant_service_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome (delivered, retry, failed).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const tenantTokens = new Counter({
    name: 'tenant_service_tenant_tokens_issued_total',
    help: 'Tenant tokens issued.',
    registers: [registry],
  });
  const decisions = new Counter({
    name: 'tenant_service_tenant_decisions_total',
    help: 'Answers of the gateway decision (GET /api/tenant/decision) by outcome: allowed, unauthorized, forbidden, rate_limited, unavailable, error.',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const heldRefusals = new Counter({
    name: 'tenant_service_refusals_held_total',
    help: 'Refusals of unread bodies answered late because their client address was past its budget (docs/operations.md#refused-uploads).',
    registers: [registry],
  });
  return { resolutions, refusals, deliveries, tenantTokens, decisions, heldRefusals };
}

/** Gauges read from knex's pool (tarn) at scrape time. */
function registerPoolGauges(registry: Registry, db: Database | undefined): void {
  const pool = (): TarnPool | null => {
    const p = (db?.client as { pool?: TarnPool } | undefined)?.pool;
    return p && typeof p.numUsed === 'function' ? p : null;
  };
  new Gauge({
    name: 'tenant_service_db_pool_connections',
    help: 'Database pool connections by state: used, free, pending_acquire (requests waiting), pending_create.',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const p = pool();
      this.set({ state: 'used' }, p ? p.numUsed() : 0);
      this.set({ state: 'free' }, p ? p.numFree() : 0);
      this.set({ state: 'pending_acquire' }, p ? p.numPendingAcquires() : 0);
      this.set({ state: 'pending_create' }, p ? p.numPendingCreates() : 0);
    },
  });
  new Gauge({
    name: 'tenant_service_db_pool_max',
    help: 'Maximum size of the database pool.',
    registers: [registry],
    collect() {
      const max = (db?.client as { config?: { pool?: { max?: number } } } | undefined)?.config?.pool?.max;
      this.set(typeof max === 'number' ? max : 0);
    },
  });
}

/** operationId → its x-rate-limit counter, from the contract. */
function rateLimitCounters(): Map<string, string> {
  const out = new Map<string, string>();
  const paths = (loadOpenApiDocument().paths ?? {}) as Record<string, Record<string, { operationId?: string; 'x-rate-limit'?: { counter?: string } }>>;
  for (const item of Object.values(paths)) {
    for (const op of Object.values(item)) {
      const counter = op?.['x-rate-limit']?.counter;
      if (op?.operationId && typeof counter === 'string') out.set(op.operationId, counter);
    }
  }
  return out;
}

/** The `outcome` label of a failed resolution: the error kind (missingTenant, tenantNotFound…). */
export function resolutionOutcome(err: unknown): string {
  return err instanceof ApiError ? err.kind : 'error';
}

/**
 * What counting a resolution reads of the request (a RequestContext of src/context/request.ts is
 * one). Named here rather than imported: the request context holds the app's services, which name
 * this module's Metrics, and the import would close a cycle (docs/architecture.md#import-cycles).
 */
interface ResolutionRequest {
  readonly caller: Caller | null;
  readonly config: Config;
  readonly services: { readonly metrics?: Partial<Pick<Metrics, 'tenantResolution'>> };
}

/**
 * Counts one tenant resolution of a tenant-scoped request. `run` enters the tenant and calls
 * `entered(source)` once it has (before the handler runs), so a handler's own error is not
 * counted as a failed resolution. A failure before that is counted with the error's kind and the
 * source the request asked through (the same pure resolution enterTenant uses).
 */
export async function observeTenantResolution<T>(
  ctx: ResolutionRequest,
  header: string | null,
  run: (entered: (source: TenantSource) => void) => Promise<T>,
): Promise<T> {
  const metrics = ctx.services.metrics;
  let resolved = false;
  try {
    return await run((source) => {
      resolved = true;
      metrics?.tenantResolution?.(source, 'resolved');
    });
  } catch (err) {
    if (!resolved && metrics?.tenantResolution) {
      let source: TenantSource | 'none' = 'single_tenant';
      if (ctx.config.multiTenantMode && ctx.caller) {
        const wanted = requestedTenant({ claims: ctx.caller.claims, header, customClaim: ctx.config.jwtTenantClaim, idClaim: ctx.config.jwtTenantIdClaim });
        source = wanted.kind === 'tenant' ? wanted.source : wanted.kind === 'linked' ? 'organization_id_claim' : wanted.kind === 'mismatch' || wanted.kind === 'unlisted' ? 'header' : 'none';
      }
      metrics.tenantResolution(source, resolutionOutcome(err));
    }
    throw err;
  }
}
