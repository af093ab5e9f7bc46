/**
 * Tag `health`: liveness, readiness and the local JWKS. No token needed.
 */
import type {
  GetMetricsData,
  GetHealthResponses,
  GetJwksResponses,
  GetMetricsErrors,
  GetMetricsResponses,
  GetReadinessErrors,
  GetReadinessResponses,
} from '../../generated/types.gen';
import { ApiError } from '../errors';
import { metricsTokenMatches } from '../auth/metrics-token';
import { pingDatabase } from '../db/tenant-scope';
import { publicOperation, type HandlerInput, type Reply } from './types';

/** /readyz answers within 2 s: the database check gives up after this (load balancers time out too). */
const READINESS_DB_TIMEOUT_MS = 1_500;

export const getHealth = publicOperation(async (): Promise<Reply<GetHealthResponses>> => ({ status: 200, body: { status: 'ok' } }));

export const getReadiness = publicOperation(async (ctx): Promise<Reply<GetReadinessResponses & GetReadinessErrors>> => {
  const limiter = ctx.services.rateLimiter;
  const rateLimitStore = limiter ? limiter.storeState() : 'memory';
  let database: 'ok' | 'unavailable' = 'ok';
  try {
    await pingDatabase(ctx.services.db, READINESS_DB_TIMEOUT_MS);
  } catch (err) {
    ctx.log.warn({ err }, 'Readiness check: database unavailable');
    database = 'unavailable';
  }
  const body = { status: database === 'ok' ? ('ready' as const) : ('unavailable' as const), database, rate_limit_store: rateLimitStore };
  return database === 'ok' ? { status: 200, body } : { status: 503, body };
});

export const getJwks = publicOperation(async (ctx): Promise<Reply<GetJwksResponses>> => ({
  status: 200,
  body: { keys: ctx.services.localKeys ? [ctx.services.localKeys.jwk] : [] },
  headers: { 'Cache-Control': 'public, max-age=300' },
}));

/** GET /metrics: Prometheus text; with SERVICE_METRICS_TOKEN set, only for that bearer token. */
export const getMetrics = publicOperation(async (ctx, input: HandlerInput<GetMetricsData>): Promise<Reply<GetMetricsResponses & GetMetricsErrors>> => {
  const token = ctx.config.metricsToken;
  if (token !== null && !metricsTokenMatches(token, input.headers.authorization)) {
    throw new ApiError('unauthorized', 'GET /metrics requires Authorization: Bearer <SERVICE_METRICS_TOKEN>.', {}, { 'WWW-Authenticate': 'Bearer realm="tenant-service metrics"' });
  }
  const metrics = ctx.services.metrics;
  const body = metrics?.render ? await metrics.render() : '';
  return { status: 200, body, headers: { 'Content-Type': metrics?.contentType ?? 'text/plain; version=0.0.4; charset=utf-8', 'Cache-Control': 'no-store' } };
});
