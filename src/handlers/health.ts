/**
 * Tag `health`: liveness, readiness and the local JWKS. No token needed.
 */
import type { GetHealthResponses, GetJwksResponses, GetReadinessErrors, GetReadinessResponses } from '../../generated/types.gen';
import { publicOperation, type Reply } from './types';

export const getHealth = publicOperation(async (): Promise<Reply<GetHealthResponses>> => ({ status: 200, body: { status: 'ok' } }));

export const getReadiness = publicOperation(async (ctx): Promise<Reply<GetReadinessResponses & GetReadinessErrors>> => {
  const limiter = ctx.services.rateLimiter;
  const rateLimitStore = limiter ? limiter.storeState() : 'memory';
  let database: 'ok' | 'unavailable' = 'ok';
  try {
    await ctx.services.db.raw('select 1');
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
