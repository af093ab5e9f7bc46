/**
 * The webhook delivery worker, started by every instance (src/server.ts).
 *
 * Each slot loops: in one transaction, claim a due delivery (FOR UPDATE SKIP LOCKED, so
 * instances sharing the database never take the same row), POST it, store the attempt and the
 * delivery's new state, commit. The row lock lasts the whole attempt, so:
 * - two instances never send one delivery at the same time;
 * - an instance killed mid-attempt leaves the row pending, unlocked the moment its database
 *   connection drops: another instance (or the restarted one) sends it again (at least once).
 *
 * Endpoints are independent (docs/events.md#webhooks): `concurrency` slots in all (the global cap),
 * and at most `perEndpointConcurrency` deliveries of one endpoint in flight across every instance
 * (an advisory lock per endpoint slot, see claimDueDelivery), so an endpoint that never answers
 * holds only its own slot while the others are delivered on time. The worker uses its own pool
 * (server.ts), so attempts in flight never take connections from requests.
 *
 * Delivery follows Standard Webhooks: `webhook-id` (the event id, the receiver's idempotency
 * key), `webhook-timestamp` (seconds, the time of this attempt) and `webhook-signature`
 * (`v1,<base64 HMAC-SHA256>` made by the `standardwebhooks` package). A 2xx answer is delivered;
 * anything else, a redirect (never followed) or no answer within the timeout is retried after
 * the next backoff step, and after the last one the delivery is `failed`.
 *
 * The connection goes only to addresses the network rule allows (./domain/webhook-network.ts),
 * checked on the addresses actually resolved for this connection; an attempt's recorded error
 * is a category ("connection failed", "timed out", "HTTP <status>"), never a socket message,
 * so the deliveries log cannot tell an open port from a closed one.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Logger } from 'pino';
import { Webhook } from 'standardwebhooks';
import { claimDueDelivery, recordDeliveryAttempt, type ClaimedDelivery } from '../db/queries/webhooks';
import { withService, type Database, type Transaction } from '../db/tenant-scope';
import { openWebhookSecret, SecretDecryptionError } from '../domain/key-encryption';
import { forbiddenAddressKind, ForbiddenNetworkError, guardedLookup, bareHost } from '../domain/webhook-network';
import { sweepDeletedEndpointDeliveries } from '../domain/webhooks';

/** docs/events.md#webhooks: 5 s, 30 s, 2 min, 10 min, 30 min, 2 h, 6 h, 12 h, then failed. */
export const DEFAULT_BACKOFF_MS: readonly number[] = [5_000, 30_000, 120_000, 600_000, 1_800_000, 7_200_000, 21_600_000, 43_200_000];
export const DEFAULT_TIMEOUT_MS = 10_000;
/** Deliveries in flight at once per instance (the global cap). */
export const DEFAULT_CONCURRENCY = 4;

export interface WebhookWorkerOptions {
  db: Database;
  logger: Logger;
  /** Deliveries sent at once by this instance, all endpoints together (default 4). */
  concurrency?: number;
  /** Deliveries of one endpoint in flight at once, across instances (default 1). */
  perEndpointConcurrency?: number;
  /** How long an idle slot waits before looking for due deliveries again (default 1 s). */
  pollIntervalMs?: number;
  /** How long a receiver has to answer (default 10 s). */
  timeoutMs?: number;
  /** Wait before retry n (default DEFAULT_BACKOFF_MS); one attempt more than its length. */
  backoffMs?: readonly number[];
  /** SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS (default false: loopback/private/link-local refused). */
  allowPrivateNetworks?: boolean;
  /** How often deliveries of deleted endpoints are swept (default 1 min). */
  sweepIntervalMs?: number;
  /** SERVICE_KEY_ENCRYPTION_SECRET: opens the endpoints' encrypted signing secrets (null: only plain ones can be signed). */
  encryptionSecret?: string | null;
  /** Called after each recorded attempt (e.g. a metrics counter of deliveries by outcome). */
  onAttempt?: (outcome: 'delivered' | 'retry' | 'failed') => void;
}

export interface WebhookWorker {
  /**
   * Stops claiming; attempts in flight finish (each bounded by the timeout) and are recorded.
   * Resolves when every slot has stopped.
   */
  stop(): Promise<void>;
}

/** What one attempt came to. `reason` is for the operator's log only, never stored. */
export interface AttemptResult {
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  ok: boolean;
  reason?: string;
}

/** The recorded error of an attempt that got no answer: a category, whatever the socket said. */
function failureCategory(err: unknown): { error: string; reason: string } {
  const e = err as { name?: string; code?: string };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return { error: 'timed out', reason: 'timeout' };
  if (err instanceof ForbiddenNetworkError) return { error: 'connection failed', reason: err.message };
  return { error: 'connection failed', reason: typeof e?.code === 'string' ? e.code : (e?.name ?? 'error') };
}

/**
 * Sends one delivery; returns the status code (null without an answer), duration and error.
 * Only the status line is waited for: the receiver's body is never read. `d.secret` is the
 * endpoint's `whsec_…` signing secret itself (decrypted by the caller when stored encrypted).
 */
export async function sendDelivery(
  d: Pick<ClaimedDelivery, 'event_id' | 'payload' | 'url' | 'secret'>,
  timeoutMs: number,
  opts: { allowPrivateNetworks?: boolean } = {},
): Promise<AttemptResult> {
  const body = JSON.stringify(d.payload);
  const now = new Date();
  const signature = new Webhook(d.secret).sign(d.event_id, now, body);
  const started = process.hrtime.bigint();
  const elapsed = () => Math.round(Number(process.hrtime.bigint() - started) / 1e6);
  const failed = (err: unknown): AttemptResult => ({ statusCode: null, durationMs: elapsed(), ok: false, ...failureCategory(err) });
  let url: URL;
  try {
    url = new URL(d.url);
  } catch (err) {
    return failed(err);
  }
  const host = bareHost(url.hostname);
  if (!opts.allowPrivateNetworks && net.isIP(host)) {
    // An address in the URL is connected to without a lookup: judge it here.
    const kind = forbiddenAddressKind(host);
    if (kind) return failed(new ForbiddenNetworkError(kind));
  }
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const status = await new Promise<number>((resolve, reject) => {
      const req = (url.protocol === 'https:' ? https : http).request(
        url,
        {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            'Content-Length': Buffer.byteLength(body),
            'User-Agent': 'tenant-service-webhooks',
            'webhook-id': d.event_id,
            'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
            'webhook-signature': signature,
          },
          // A fresh connection per attempt, resolved (and checked) again: DNS answers can change.
          agent: false,
          lookup: opts.allowPrivateNetworks ? undefined : guardedLookup,
          signal,
        },
        (res) => {
          // The receiver's body is never read (it could be anything the URL points at).
          res.destroy();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', (err) => reject(signal.aborted ? (signal.reason ?? err) : err));
      req.end(body);
    });
    const ok = status >= 200 && status < 300;
    const error = ok ? null : status >= 300 && status < 400 ? `HTTP ${status}: redirects are not followed` : `HTTP ${status}`;
    return { statusCode: status, durationMs: elapsed(), error, ok };
  } catch (err) {
    return failed(err);
  }
}

/** Starts the worker's slots and its sweep of deleted endpoints' deliveries. */
export function startWebhookWorker(opts: WebhookWorkerOptions): WebhookWorker {
  const concurrency = opts.concurrency ?? DEFAULT_CONCURRENCY;
  const perEndpoint = opts.perEndpointConcurrency ?? 1;
  const pollMs = opts.pollIntervalMs ?? 1_000;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const backoff = opts.backoffMs ?? DEFAULT_BACKOFF_MS;
  const allowPrivateNetworks = opts.allowPrivateNetworks ?? false;
  const log = opts.logger.child({ worker: 'webhook-delivery' });
  let stopping = false;
  const wakers = new Set<() => void>();
  // Endpoint id → attempts of this instance in flight: a full endpoint is not even a candidate.
  const busy = new Map<string, number>();
  // Endpoints whose encrypted secret this instance cannot open (no or another secret): left to
  // instances that can, their deliveries untouched rather than failed.
  const cannotSign = new Set<string>();
  const encryptionSecret = opts.encryptionSecret ?? null;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      wakers.add(done);
    });

  /** One claim-send-record round; false when nothing was due. */
  const deliverOne = (): Promise<boolean> =>
    withService(opts.db, async (trx: Transaction) => {
      const skip = [...[...busy].filter(([, n]) => n >= perEndpoint).map(([id]) => id), ...cannotSign];
      const d = await claimDueDelivery(trx, { perEndpoint, skip });
      if (!d) return false;
      let signingSecret: string;
      try {
        // Decrypted only here, for this attempt's signature; never stored or logged.
        signingSecret = openWebhookSecret(encryptionSecret, d.webhook_id, d.secret);
      } catch (err) {
        if (!(err instanceof SecretDecryptionError)) throw err;
        cannotSign.add(d.webhook_id);
        log.error({ webhook_id: d.webhook_id, reason: err.message }, 'Webhook signing secret unusable; its deliveries are left to instances with SERVICE_KEY_ENCRYPTION_SECRET');
        return true;
      }
      busy.set(d.webhook_id, (busy.get(d.webhook_id) ?? 0) + 1);
      try {
        const attempt = d.attempts + 1;
        const attemptedAt = new Date();
        const result = await sendDelivery({ ...d, secret: signingSecret }, timeoutMs, { allowPrivateNetworks });
        const retryIn = result.ok ? undefined : backoff[attempt - 1];
        const outcome = result.ok ? 'delivered' : retryIn === undefined ? 'failed' : 'retry';
        const nextRetryAt = outcome === 'retry' ? new Date(Date.now() + retryIn!) : null;
        await recordDeliveryAttempt(trx, { deliveryId: d.id, attempt, attemptedAt, statusCode: result.statusCode, durationMs: result.durationMs, error: result.error, outcome, nextRetryAt });
        opts.onAttempt?.(outcome);
        const fields = { webhook_id: d.webhook_id, delivery_id: d.id, event_id: d.event_id, attempt, status_code: result.statusCode, duration_ms: result.durationMs, outcome };
        // `reason` (a socket error code, a refused network) is for the operator's log only.
        const failure = { error: result.error, reason: result.reason };
        if (outcome === 'delivered') log.debug(fields, 'Webhook delivered');
        else if (outcome === 'failed') log.warn({ ...fields, ...failure }, 'Webhook delivery failed for good');
        else log.info({ ...fields, ...failure, next_retry_at: nextRetryAt!.toISOString() }, 'Webhook delivery failed; will retry');
        return true;
      } finally {
        const n = (busy.get(d.webhook_id) ?? 1) - 1;
        if (n > 0) busy.set(d.webhook_id, n);
        else busy.delete(d.webhook_id);
      }
    });

  const slot = async () => {
    while (!stopping) {
      let worked = false;
      let failed = false;
      try {
        worked = await deliverOne();
      } catch (err) {
        // The database is down or the row vanished: the delivery stays pending; try later.
        log.error({ err }, 'Webhook delivery round failed');
        failed = true;
      }
      if (!worked && !stopping) await sleep(failed ? Math.max(pollMs, 5_000) : pollMs);
    }
  };

  const sweeper = async () => {
    const every = opts.sweepIntervalMs ?? 60_000;
    while (!stopping) {
      try {
        const removed = await sweepDeletedEndpointDeliveries(opts.db);
        if (removed) log.info({ removed }, 'Removed deliveries of deleted webhook endpoints');
      } catch (err) {
        log.error({ err }, 'Sweeping deliveries of deleted webhook endpoints failed; next try at the next interval');
      }
      if (!stopping) await sleep(every);
    }
  };

  const loops = [...Array.from({ length: concurrency }, () => slot()), sweeper()];
  log.info({ concurrency, per_endpoint_concurrency: perEndpoint, timeout_ms: timeoutMs, allow_private_networks: allowPrivateNetworks }, 'Webhook delivery worker started');
  return {
    async stop() {
      stopping = true;
      for (const wake of [...wakers]) wake();
      await Promise.all(loops);
      log.info('Webhook delivery worker stopped');
    },
  };
}
