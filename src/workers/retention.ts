/**
 * The daily retention purge (docs/events.md#events-and-webhooks): events older than
 * SERVICE_EVENT_RETENTION_DAYS, finished webhook deliveries and expired console sign-in codes.
 * Every instance schedules it; an advisory lock lets one run at a time. It needs a connection as
 * the OWNER of the events table (the runtime role can never delete an event): the caller passes a
 * function opening one, used once per run.
 */
import type { Logger } from 'pino';
import { purgeExpired } from '../db/queries/retention';
import type { Database } from '../db/tenant-scope';

export interface RetentionOptions {
  /** Opens an owner connection (closed after each run). */
  openOwner: () => Database;
  retentionDays: number;
  logger: Logger;
  /** Default one day. */
  intervalMs?: number;
  /** First run this long after start (default one minute, out of the boot's way). */
  initialDelayMs?: number;
}

export interface RetentionWorker {
  stop(): Promise<void>;
}

/** Runs one purge with a fresh owner connection. */
export async function runRetentionPurge(opts: Pick<RetentionOptions, 'openOwner' | 'retentionDays' | 'logger'>): Promise<void> {
  const owner = opts.openOwner();
  try {
    const r = await purgeExpired(owner, { retentionDays: opts.retentionDays });
    if (r.ran) opts.logger.info({ events: r.events, deliveries: r.deliveries, sign_in_codes: r.signInCodes, retention_days: opts.retentionDays }, 'Retention purge finished');
  } catch (err) {
    opts.logger.error({ err }, 'Retention purge failed; next try at the next interval');
  } finally {
    await owner.destroy();
  }
}

export function startRetentionWorker(opts: RetentionOptions): RetentionWorker {
  const log = opts.logger.child({ worker: 'retention' });
  let running: Promise<void> | null = null;
  const run = () => {
    if (running) return;
    running = runRetentionPurge({ ...opts, logger: log }).finally(() => (running = null));
  };
  const first = setTimeout(run, opts.initialDelayMs ?? 60_000);
  const every = setInterval(run, opts.intervalMs ?? 86_400_000);
  first.unref();
  every.unref();
  return {
    async stop() {
      clearTimeout(first);
      clearInterval(every);
      await running;
    },
  };
}
