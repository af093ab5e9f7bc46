/**
 * The webhook delivery worker, started by every instance (src/server.ts).
 *
 * Each slot loops: in one transaction, lock the oldest due delivery (FOR UPDATE SKIP LOCKED, so
 * instances sharing the database never take the same row), POST it, store the attempt and the
 * delivery's new state, commit. The row lock lasts the whole attempt, so:
 * - two instances never send one delivery at the same time;
 * - an instance killed mid-attempt leaves the row pending, unlocked the moment its database
 *   connection drops: another instance (or the restarted one) sends it again (at least once).
 *
 * Delivery follows Standard Webhooks: `webhook-id` (the event id, the receiver's idempotency
 * key), `webhook-timestamp` (seconds, the time of this attempt) and `webhook-signature`
 * (`v1,<base64 HMAC-SHA256>` made by the `standardwebhooks` package). A 2xx answer is delivered;
 * anything else, a redirect (never followed) or no answer within the timeout is retried after
 * the next backoff step, and after the last one the delivery is `failed`.
 */
import type { Logger } from 'pino';
import { Webhook } from 'standardwebhooks';
import { claimDueDelivery, recordDeliveryAttempt, type ClaimedDelivery } from '../db/queries/webhooks';
import { withService, type Database, type Transaction } from '../db/tenant-scope';

/** PRODUCT.md §11: 5 s, 30 s, 2 min, 10 min, 30 min, 2 h, 6 h, 12 h, then failed. */
export const DEFAULT_BACKOFF_MS: readonly number[] = [5_000, 30_000, 120_000, 600_000, 1_800_000, 7_200_000, 21_600_000, 43_200_000];
export const DEFAULT_TIMEOUT_MS = 10_000;

export interface WebhookWorkerOptions {
  db: Database;
  logger: Logger;
  /** Deliveries sent at once by this instance (default 2). */
  concurrency?: number;
  /** How long an idle slot waits before looking for due deliveries again (default 1 s). */
  pollIntervalMs?: number;
  /** How long a receiver has to answer (default 10 s). */
  timeoutMs?: number;
  /** Wait before retry n (default DEFAULT_BACKOFF_MS); one attempt more than its length. */
  backoffMs?: readonly number[];
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

/** The error text stored for an attempt without a 2xx (no receiver body: it is never stored). */
function describeFailure(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return 'timeout: no answer in time';
  const cause = e?.cause?.code ?? e?.cause?.message;
  return (cause ? `${e?.message ?? 'request failed'}: ${cause}` : (e?.message ?? String(err))).slice(0, 500);
}

/** Sends one delivery; returns the status code (null without an answer), duration and error. */
export async function sendDelivery(
  d: Pick<ClaimedDelivery, 'event_id' | 'payload' | 'url' | 'secret'>,
  timeoutMs: number,
): Promise<{ statusCode: number | null; durationMs: number; error: string | null; ok: boolean }> {
  const body = JSON.stringify(d.payload);
  const now = new Date();
  const signature = new Webhook(d.secret).sign(d.event_id, now, body);
  const started = process.hrtime.bigint();
  const elapsed = () => Math.round(Number(process.hrtime.bigint() - started) / 1e6);
  try {
    const res = await fetch(d.url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': 'tenant-service-webhooks',
        'webhook-id': d.event_id,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': signature,
      },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    // The receiver's body is never stored or shown (it could be anything the URL points at).
    await res.body?.cancel().catch(() => undefined);
    const ok = res.status >= 200 && res.status < 300;
    const error = ok ? null : res.status >= 300 && res.status < 400 ? `HTTP ${res.status}: redirects are not followed` : `HTTP ${res.status}`;
    return { statusCode: res.status, durationMs: elapsed(), error, ok };
  } catch (err) {
    return { statusCode: null, durationMs: elapsed(), error: describeFailure(err), ok: false };
  }
}

/** Starts the worker's slots. */
export function startWebhookWorker(opts: WebhookWorkerOptions): WebhookWorker {
  const concurrency = opts.concurrency ?? 2;
  const pollMs = opts.pollIntervalMs ?? 1_000;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const backoff = opts.backoffMs ?? DEFAULT_BACKOFF_MS;
  const log = opts.logger.child({ worker: 'webhook-delivery' });
  let stopping = false;
  const wakers = new Set<() => void>();

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
      const d = await claimDueDelivery(trx);
      if (!d) return false;
      const attempt = d.attempts + 1;
      const attemptedAt = new Date();
      const result = await sendDelivery(d, timeoutMs);
      const retryIn = result.ok ? undefined : backoff[attempt - 1];
      const outcome = result.ok ? 'delivered' : retryIn === undefined ? 'failed' : 'retry';
      const nextRetryAt = outcome === 'retry' ? new Date(Date.now() + retryIn!) : null;
      await recordDeliveryAttempt(trx, { deliveryId: d.id, attempt, attemptedAt, statusCode: result.statusCode, durationMs: result.durationMs, error: result.error, outcome, nextRetryAt });
      opts.onAttempt?.(outcome);
      const fields = { delivery_id: d.id, event_id: d.event_id, attempt, status_code: result.statusCode, duration_ms: result.durationMs, outcome };
      if (outcome === 'delivered') log.debug(fields, 'Webhook delivered');
      else if (outcome === 'failed') log.warn({ ...fields, error: result.error }, 'Webhook delivery failed for good');
      else log.info({ ...fields, error: result.error, next_retry_at: nextRetryAt!.toISOString() }, 'Webhook delivery failed; will retry');
      return true;
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

  const slots = Array.from({ length: concurrency }, () => slot());
  log.info({ concurrency, timeout_ms: timeoutMs }, 'Webhook delivery worker started');
  return {
    async stop() {
      stopping = true;
      for (const wake of [...wakers]) wake();
      await Promise.all(slots);
      log.info('Webhook delivery worker stopped');
    },
  };
}
