/**
 * The rate limits (docs/operations.md#rate-limits), built on express-rate-limit.
 *
 * The counters come from openapi.yaml: each operation's `x-rate-limit {counter, limit, window}`.
 * Each counter has its own store and key namespace and is counted per
 * caller (issuer + subject) or, for a request without a verified caller, per client address
 * (`req.ip`, which follows SERVICE_TRUST_PROXY through express's `trust proxy`). With
 * SERVICE_REDIS_URL the counters live in Redis, so every instance sharing that Redis shares
 * them; without it each process counts on its own (MemoryStore).
 *
 * Only `/api` (in any spelling: `/API/tenant` is counted, then routed nowhere) is limited: /healthz, /readyz and the JWKS are polled by load balancers and token
 * verifiers, which must never be refused, and the contract documents no 429 for them.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import {
  ipKeyGenerator,
  MemoryStore,
  rateLimit,
  type AugmentedRequest,
  type ClientRateLimitInfo,
  type Logger as RateLimitLogger,
  type Options,
  type Store,
} from 'express-rate-limit';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import { createClient } from 'redis';
import type { Logger } from 'pino';
import type { Config } from '../config';
import { ApiError } from '../errors';
import { FALLBACK_COUNTER, rateLimitCounters, reachesApi, readContractOperations, type ContractOperation } from './contract';
import { stateOf } from './request-state';
import type { RateLimiter } from '../context/app-services';

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

/** How long boot waits for Redis before starting degraded (it keeps retrying afterwards). */
const BOOT_CONNECT_TIMEOUT_MS = 5_000;
/** A Redis command slower than this lets the request pass uncounted instead of stalling it. */
const COMMAND_TIMEOUT_MS = 500;
/**
 * After a command timed out, Redis is skipped (requests pass uncounted at once, /readyz says
 * `degraded`) for this long; then one command at a time tries it again. A paused or overloaded
 * Redis thus costs the requests in flight one timeout, not every request one timeout.
 */
const SLOW_REDIS_BACKOFF_MS = 2_000;
/** A PING this often, so a Redis that stopped answering shows in /readyz without traffic. */
const HEALTH_PING_INTERVAL_MS = 2_000;
/** At most one "store unavailable" error line per this interval, however many requests pass. */
const ERROR_LOG_INTERVAL_MS = 60_000;
const RECONNECT_MAX_DELAY_MS = 3_000;

/** The counter key: the verified caller (issuer + subject), else (or for `per: address` counters) the client address. */
function keyFor(req: Request, per: RateLimitRule['per'] = 'caller'): string {
  const state = stateOf(req);
  if (per === 'scimToken' && state.scim) return `scim:${state.scim.tokenId}`;
  if (state.caller && per === 'caller') return `caller:${JSON.stringify([state.caller.issuer, state.caller.subject])}`;
  // ipKeyGenerator groups an IPv6 client's /56, so rotating addresses in one subnet does not help.
  const ip = state.clientIp(req);
  return ip ? `ip:${ipKeyGenerator(ip)}` : 'ip:unknown';
}

/**
 * Logs "store unavailable" at most once per interval, with how many were suppressed, so an
 * outage under load writes a line a minute rather than one per request.
 */
class ThrottledErrorLog {
  private lastLogged = 0;
  private suppressed = 0;

  constructor(
    private readonly logger: Logger,
    private readonly intervalMs: number,
  ) {}

  error(err: unknown, msg: string): void {
    const now = Date.now();
    if (now - this.lastLogged < this.intervalMs) {
      this.suppressed += 1;
      return;
    }
    this.logger.error({ err, suppressed: this.suppressed }, msg);
    this.lastLogged = now;
    this.suppressed = 0;
  }

  /** The next error is logged at once (after a recovery, a new outage is news). */
  reset(): void {
    this.lastLogged = 0;
    this.suppressed = 0;
  }
}

/**
 * rate-limit-redis caches the promise of its Lua scripts' SHA at init; if Redis was down then
 * (or too slow), that promise stays rejected forever and the store never counts again. This
 * store loads the scripts again on the next use after a failure, and whenever the client
 * becomes ready (a Redis restarted empty is also covered by the library's NOSCRIPT retry).
 */
class ReloadingRedisStore extends RedisStore {
  private scriptsFailed = false;
  private scripts: Promise<unknown> = Promise.resolve();

  override async init(options: Options): Promise<void> {
    this.windowMs = options.windowMs;
    this.reloadScripts();
    await this.scripts;
  }

  reloadScripts(): void {
    this.scriptsFailed = false;
    const increment = this.loadIncrementScript();
    const get = this.loadGetScript();
    this.incrementScriptSha = increment;
    this.getScriptSha = get;
    this.scripts = Promise.all([increment, get]);
    // The failure itself reaches the log through the store's callers (throttled); here it only
    // marks the scripts for reloading, unless a newer load has replaced them meanwhile.
    this.scripts.catch(() => {
      if (this.incrementScriptSha === increment) this.scriptsFailed = true;
    });
  }

  /** Settles when the current script load has finished, whether or not it worked. */
  async scriptsSettled(): Promise<void> {
    await this.scripts.catch(() => undefined);
  }

  override async increment(key: string): Promise<ClientRateLimitInfo> {
    if (this.scriptsFailed) this.reloadScripts();
    return super.increment(key);
  }

  override async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    if (this.scriptsFailed) this.reloadScripts();
    return super.get(key);
  }
}

class RedisTimeoutError extends Error {
  override name = 'RedisTimeoutError';
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RedisTimeoutError(`Redis did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

interface Backend {
  makeStore(rule: RateLimitRule): Store;
  /** Settles when the stores have finished initialising (express-rate-limit does not wait). */
  initialized(): Promise<void>;
  storeState(): 'memory' | 'redis' | 'degraded';
  close(): Promise<void>;
}

function memoryBackend(): Backend {
  const stores: MemoryStore[] = [];
  return {
    makeStore() {
      const store = new MemoryStore();
      stores.push(store);
      return store;
    },
    initialized: async () => undefined,
    storeState: () => 'memory',
    async close() {
      for (const s of stores) s.shutdown();
    },
  };
}

/**
 * Slow-Redis circuit breaker (docs/operations.md#rate-limits). node-redis sees a paused
 * Redis as connected (the socket is open), so slowness is judged by the command timeout: after one,
 * requests skip Redis for SLOW_REDIS_BACKOFF_MS, then a single trial command decides.
 */
function slowRedisBreaker(client: ReturnType<typeof createClient>, log: Logger, errorLog: ThrottledErrorLog) {
  let slow = false;
  let retryAt = 0;
  let trialInFlight = false;
  const sendCommand = async (...args: string[]): Promise<RedisReply> => {
    let trial = false;
    if (slow) {
      if (Date.now() < retryAt || trialInFlight) throw new Error('Rate limit store (Redis) is not answering in time; skipped');
      trial = trialInFlight = true;
    }
    try {
      const reply = await withTimeout(client.sendCommand(args) as Promise<RedisReply>, COMMAND_TIMEOUT_MS);
      if (slow) {
        slow = false;
        log.info('Rate limit store (Redis) answers in time again; counting resumes');
        errorLog.reset();
      }
      return reply;
    } catch (err) {
      if (err instanceof RedisTimeoutError) {
        if (!slow) errorLog.error(err, 'Rate limit store (Redis) is not answering in time; requests pass uncounted until it does');
        slow = true;
        retryAt = Date.now() + SLOW_REDIS_BACKOFF_MS;
      }
      throw err;
    } finally {
      if (trial) trialInFlight = false;
    }
  };
  return { sendCommand, isSlow: () => slow };
}

/**
 * Waits up to BOOT_CONNECT_TIMEOUT_MS for the first connection. Starting degraded keeps the
 * service up when Redis is late or down at boot: requests pass uncounted, /readyz says
 * `degraded`, and the client keeps reconnecting in the background.
 */
async function connectAtBoot(client: ReturnType<typeof createClient>, log: Logger, errorLog: ThrottledErrorLog): Promise<void> {
  const connected = client.connect().then(
    () => true,
    (err: unknown) => {
      errorLog.error(err, 'Rate limit store (Redis) connection failed');
      return false;
    },
  );
  let bootTimer: NodeJS.Timeout | undefined;
  const ready = await Promise.race([
    connected,
    new Promise<boolean>((resolve) => {
      bootTimer = setTimeout(() => resolve(false), BOOT_CONNECT_TIMEOUT_MS);
    }),
  ]);
  clearTimeout(bootTimer);
  if (!ready) {
    log.error({ timeout_ms: BOOT_CONNECT_TIMEOUT_MS }, 'Rate limit store (Redis) unreachable at boot; starting degraded');
  }
}

async function redisBackend(config: Config, logger: Logger, errorLog: ThrottledErrorLog): Promise<Backend> {
  const log = logger.child({ component: 'rate-limit-store' });
  const client = createClient({
    url: config.redisUrl!,
    // Fail commands at once while disconnected instead of queueing them: a queued command
    // would hold its request until Redis returns.
    disableOfflineQueue: true,
    // Notices a silently dropped connection (no RST) between requests.
    pingInterval: 10_000,
    socket: {
      connectTimeout: 2_000,
      // Never give up (a number, also for timeouts): the service uses Redis again when it returns.
      reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, RECONNECT_MAX_DELAY_MS) + Math.floor(Math.random() * 100),
    },
  });
  const stores: ReloadingRedisStore[] = [];
  let everReady = false;
  let down = false;

  // Without an 'error' listener node-redis' errors would crash the process.
  client.on('error', (err: unknown) => {
    down = true;
    errorLog.error(err, 'Rate limit store (Redis) unavailable; requests pass uncounted until it returns');
  });
  client.on('ready', () => {
    if (everReady || down) log.info('Rate limit store (Redis) connected again; counting resumes');
    everReady = true;
    down = false;
    errorLog.reset();
    for (const s of stores) s.reloadScripts();
  });

  await connectAtBoot(client, log, errorLog);
  const breaker = slowRedisBreaker(client, log, errorLog);
  const sendCommand = breaker.sendCommand;
  const healthPing = setInterval(() => {
    if (client.isReady) sendCommand('PING').catch(() => undefined);
  }, HEALTH_PING_INTERVAL_MS);
  healthPing.unref();
  return {
    makeStore(rule) {
      const store = new ReloadingRedisStore({ sendCommand, prefix: `${config.redisKeyPrefix}rate-limit:${rule.name}:` });
      stores.push(store);
      return store;
    },
    async initialized() {
      await Promise.all(stores.map((s) => s.scriptsSettled()));
    },
    storeState: () => (client.isReady && !breaker.isSlow() ? 'redis' : 'degraded'),
    async close() {
      clearInterval(healthPing);
      // destroy(), not close(): close() waits for every pending reply, so a command whose reply
      // never comes (Redis going away at shutdown) would hold the process open. A request still
      // in flight then has its command rejected and passes uncounted.
      if (client.isOpen) client.destroy();
    },
  };
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
  for (const rule of rules.values()) {
    const windowMs = WINDOW_MS[rule.window];
    limiters.set(
      rule,
      rateLimit({
        windowMs,
        limit: rule.limit,
        identifier: rule.name,
        standardHeaders: 'draft-8',
        legacyHeaders: true,
        keyGenerator: (req: Request) => keyFor(req, rule.per),
        store: backend.makeStore(rule),
        passOnStoreError: true,
        logger: limiterLogger,
        // The 429 goes through the one error middleware, so it is the documented Error body;
        // express-rate-limit has already set the X-RateLimit-*, RateLimit* and Retry-After headers.
        handler: (req: Request, res: Response, next: NextFunction) => {
          const info = (req as AugmentedRequest).rateLimit;
          const retryAfter = Number(res.getHeader('Retry-After') ?? Math.ceil(((info.resetTime?.getTime() ?? Date.now() + windowMs) - Date.now()) / 1000));
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
      }),
    );
  }

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
    storeState: () => backend.storeState(),
    close: () => backend.close(),
  };
}
