/**
 * The rate limits (docs/operations.md#rate-limits), built on express-rate-limit.
 *
 * The counters come from openapi.yaml: each operation's `x-rate-limit {counter, limit, window}`.
 * Each counter has its own store and key namespace and is counted per
 * caller (issuer + subject) or, for a request without a verified caller, per client address
 * (`req.ip`, which follows SERVICE_TRUST_PROXY through express's `trust proxy`). With
 * SERVICE_REDIS_URL the counters live in Redis, so every instance sharing that Redis shares
 * them; without it each process counts on its own (MemoryStore). The stores: src/rate-limit/.
 *
 * Only `/api` (in any spelling: `/API/tenant` is counted, then routed nowhere) is limited: /healthz, /readyz and the JWKS are polled by load balancers and token
 * verifiers, which must never be refused, and the contract documents no 429 for them.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { rateLimit, type AugmentedRequest, type Logger as RateLimitLogger, type Store } from 'express-rate-limit';
import { rateLimitHeaders } from './rate-limit-headers';
import { addressKey, signInRateLimitStage, signInRules } from './sign-in-rate-limit';
import type { Logger } from 'pino';
import type { Config } from '../config';
import { ApiError } from '../errors';
import { FALLBACK_COUNTER, rateLimitCounters, reachesApi, readContractOperations, type ContractOperation } from './contract';
import { stateOf } from './request-state';
import type { RateLimiter } from '../context/app-services';
import { memoryBackend } from '../rate-limit/backend';
import { ERROR_LOG_INTERVAL_MS, redisBackend, ThrottledErrorLog } from '../rate-limit/redis';

/** One counter of the contract (`x-rate-limit`): every operation naming it shares its count per caller. */
export interface RateLimitRule {
  /** Counter name: the IETF RateLimit policy name and the Redis key namespace. */
  readonly name: string;
  readonly limit: number;
  readonly window: 'minute' | 'hour';
  /** Whom it counts: the verified caller (else the address), or always the client address. */
  readonly per: 'caller' | 'address' | 'scimToken';
  /** What the 429's detail says the counter covers, e.g. `GET /api/setup/*`. */
  readonly scope: string;
}

/**
 * The counters of openapi.yaml's `x-rate-limit`, by name. The `api` counter also counts every
 * /api path that matches no operation (in any spelling), so probing unknown paths is limited too.
 */
export function rulesFromContract(operations: readonly ContractOperation[] = readContractOperations()): ReadonlyMap<string, RateLimitRule> {
  const rules = new Map<string, RateLimitRule>();
  for (const [name, { rule, operations: ops }] of rateLimitCounters(operations)) {
    rules.set(name, Object.freeze({ name, limit: rule.limit, window: rule.window, per: rule.per, scope: describeScope(name, ops) }));
  }
  return rules;
}

/** `POST /api/setup/tenant`; several paths or a templated one end in `*` at their common prefix. */
function describeScope(name: string, ops: readonly ContractOperation[]): string {
  if (name === FALLBACK_COUNTER) return 'any other /api endpoint';
  const methods = [...new Set(ops.flatMap((o) => [o.method, ...o.forwardedMethods]))].join('/');
  let prefix = ops[0]!.path;
  for (const op of ops) {
    let i = 0;
    while (i < prefix.length && i < op.path.length && prefix[i] === op.path[i]) i++;
    prefix = prefix.slice(0, i);
  }
  // One path and the paths below it (POST /api/tenant/invitations and …/{id}/resend).
  const below = !prefix.includes('{') && ops.some((o) => o.path === prefix) && ops.every((o) => o.path === prefix || o.path[prefix.length] === '/');
  if (below && ops.length > 1) return `${methods} ${prefix} and ${prefix}/*`;
  const wildcard = ops.length > 1 || prefix.includes('{');
  if (!wildcard) return `${methods} ${prefix}`;
  const cut = prefix.includes('{') ? prefix.indexOf('{') : prefix.lastIndexOf('/') + 1;
  return `${methods} ${prefix.slice(0, cut)}*`;
}

/**
 * The counter a request counts against: its operation's, or the `api` counter for a path that
 * reaches /api in any spelling without matching an operation. Null means it is not limited.
 */
export function ruleFor(operation: ContractOperation | null, requestPath: string, rules: ReadonlyMap<string, RateLimitRule>): RateLimitRule | null {
  if (operation) return operation.rateLimit ? (rules.get(operation.rateLimit.counter) ?? null) : null;
  return reachesApi(requestPath) ? (rules.get(FALLBACK_COUNTER) ?? null) : null;
}

const WINDOW_MS = { minute: 60_000, hour: 3_600_000 } as const;

/** The counter key: the verified caller (issuer + subject), else (or for `per: address` counters) the client address. */
function keyFor(req: Request, per: RateLimitRule['per'] = 'caller'): string {
  const state = stateOf(req);
  if (per === 'scimToken' && state.scim) return `scim:${state.scim.tokenId}`;
  if (state.caller && per === 'caller') return `caller:${JSON.stringify([state.caller.issuer, state.caller.subject])}`;
  return addressKey(req);
}


/** The counters whose limit a variable may change: the gateway decision's, asked on every product request. */
function withConfiguredLimits(rules: ReadonlyMap<string, RateLimitRule>, config: Config): ReadonlyMap<string, RateLimitRule> {
  const decision = rules.get('decision');
  if (!decision || config.rateLimitDecisionPerMinute === null || decision.window !== 'minute') return rules;
  const out = new Map(rules);
  out.set('decision', Object.freeze({ ...decision, limit: config.rateLimitDecisionPerMinute }));
  return out;
}

/**
 * One counter's limiter: express-rate-limit counts and refuses; the headers are written by
 * ./rate-limit-headers.ts from its `req.rateLimit` (the same X-RateLimit-* and draft-8
 * RateLimit/RateLimit-Policy values as its own writer, at a fraction of the cost; see
 * docs/operations.md#rate-limits).
 */
function limiterFor(rule: RateLimitRule, store: Store, logger: RateLimitLogger): RequestHandler {
  const windowMs = WINDOW_MS[rule.window];
  const headers = rateLimitHeaders(rule.name, rule.limit, windowMs);
  const limiter = rateLimit({
    windowMs,
    limit: rule.limit,
    identifier: rule.name,
    standardHeaders: false,
    legacyHeaders: false,
    keyGenerator: (req: Request) => keyFor(req, rule.per),
    store,
    passOnStoreError: true,
    logger,
    // The 429 goes through the one error middleware, so it is the documented Error body, with
    // the rate-limit headers and Retry-After.
    handler: (req: Request, res: Response, next: NextFunction) => {
      const retryAfter = headers.set(res, (req as AugmentedRequest).rateLimit);
      const st = stateOf(req);
      const per = st.caller && rule.per === 'caller' ? 'per caller' : st.scim && rule.per === 'scimToken' ? 'per SCIM token' : 'per client address';
      next(
        new ApiError(
          'rateLimited',
          `At most ${rule.limit} requests per ${rule.window} to ${rule.scope} (counted ${per}); retry in ${retryAfter} seconds.`,
          {},
          { 'Retry-After': String(retryAfter) },
        ),
      );
    },
  });
  return (req, res, next) =>
    limiter(req, res, (err?: unknown) => {
      // A counted request carries its count; one that passed uncounted (store error) none.
      const info = (req as AugmentedRequest).rateLimit;
      if (err === undefined && info !== undefined) headers.set(res, info);
      next(err);
    });
}

/**
 * Builds the rate limiter: one express-rate-limit instance per counter of the contract, all on
 * Redis when SERVICE_REDIS_URL is set (connecting first; degraded if it is unreachable), else in
 * memory. The middleware reads the request state (operation, caller) to pick the counter and key.
 */
export async function createRateLimiter(
  config: Config,
  logger: Logger,
  operations: readonly ContractOperation[] = readContractOperations(),
): Promise<RateLimiter> {
  const rules = withConfiguredLimits(rulesFromContract(operations), config);
  const errorLog = new ThrottledErrorLog(logger.child({ component: 'rate-limit-store' }), ERROR_LOG_INTERVAL_MS);
  const backend = config.redisUrl ? await redisBackend(config, logger, errorLog) : memoryBackend();
  const limiterLogger: RateLimitLogger = {
    warn: (err, msg) => logger.warn({ err }, msg ?? 'express-rate-limit warning'),
    // Store errors (Redis down) arrive once per request; the throttle keeps the log readable.
    error: (err, msg) => errorLog.error(err, msg ?? 'Rate limit store error'),
  };

  const limiters = new Map<RateLimitRule, RequestHandler>();
  for (const rule of rules.values()) limiters.set(rule, limiterFor(rule, backend.makeStore(rule.name), limiterLogger));
  // The sign-in browser routes' counters (./sign-in-rate-limit.ts), on the same stores: a
  // contract counter of the same name would share their keys, so it stops the boot.
  const signInCounters = signInRules(config);
  for (const r of signInCounters) if (rules.has(r.name)) throw new Error(`Rate-limit counter ${r.name} is declared by openapi.yaml and by the sign-in routes.`);
  const signIn = signInRateLimitStage(signInCounters, (name) => backend.makeStore(name), limiterLogger);

  // Load the Redis scripts now, before the caller goes on to build the app: that is CPU-bound
  // work which would otherwise delay the replies past the command timeout.
  await backend.initialized();

  const middleware: RequestHandler = (req, res, next) => {
    const rule = ruleFor(stateOf(req).operation, req.path, rules);
    if (!rule) return next();
    return limiters.get(rule)!(req, res, next);
  };

  return {
    middleware,
    signIn,
    storeState: () => backend.storeState(),
    close: () => backend.close(),
  };
}
