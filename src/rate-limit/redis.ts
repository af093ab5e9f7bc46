/**
 * The rate-limit counters in Redis (docs/operations.md#rate-limits): rate-limit-redis's store on
 * a node-redis client that never queues a command while disconnected, a breaker that lets
 * requests pass uncounted while Redis is slow, and an error log throttled to a line a minute.
 * Every instance sharing the Redis shares the counts.
 */
import type { ClientRateLimitInfo, Options } from 'express-rate-limit';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import { createClient } from '@redis/client';
import type { Logger } from 'pino';
import type { Config } from '../config';
import type { RateLimitBackend } from './backend';

/** The client as `redisBackend` makes it (no modules, RESP2). */
type RedisClient = ReturnType<typeof makeClient>;

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
export const ERROR_LOG_INTERVAL_MS = 60_000;
const RECONNECT_MAX_DELAY_MS = 3_000;

/**
 * Logs "store unavailable" at most once per interval, with how many were suppressed, so an
 * outage under load writes a line a minute rather than one per request.
 */
export class ThrottledErrorLog {
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

/**
 * Slow-Redis circuit breaker (docs/operations.md#rate-limits). node-redis sees a paused
 * Redis as connected (the socket is open), so slowness is judged by the command timeout: after one,
 * requests skip Redis for SLOW_REDIS_BACKOFF_MS, then a single trial command decides.
 */
function slowRedisBreaker(client: Pick<RedisClient, 'sendCommand'>, log: Logger, errorLog: ThrottledErrorLog) {
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
async function connectAtBoot(client: Pick<RedisClient, 'connect'>, log: Logger, errorLog: ThrottledErrorLog): Promise<void> {
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

/** The client: commands fail at once while disconnected, and it never stops reconnecting. */
function makeClient(config: Config) {
  return createClient({
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
}

export async function redisBackend(config: Config, logger: Logger, errorLog: ThrottledErrorLog): Promise<RateLimitBackend> {
  const log = logger.child({ component: 'rate-limit-store' });
  const client = makeClient(config);
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
    makeStore(counter) {
      const store = new ReloadingRedisStore({ sendCommand, prefix: `${config.redisKeyPrefix}rate-limit:${counter}:` });
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
