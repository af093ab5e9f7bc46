/**
 * Scheduled tenant deletions (docs/operations.md#tenant-lifecycle): every instance looks for
 * due deletions every `intervalMs` (default 20 s, so a due tenant goes within a minute); a
 * per-tenant advisory lock lets exactly one instance run each (src/domain/tenant-lifecycle.ts).
 */
import type { Logger } from 'pino';
import { runDueDeletions } from '../domain/tenant-lifecycle';
import type { Database } from '../db/tenant-scope';
import { startIntervalWorker, type IntervalWorker } from './interval';

export interface ScheduledDeletionOptions {
  db: Database;
  multiTenantMode: boolean;
  logger: Logger;
  /** Default 20 seconds. */
  intervalMs?: number;
}

export type ScheduledDeletionWorker = IntervalWorker;

/** One pass: deletes what is due, logging each deletion; a failure is logged and retried next pass. */
export async function runScheduledDeletions(opts: Pick<ScheduledDeletionOptions, 'db' | 'multiTenantMode' | 'logger'>): Promise<void> {
  try {
    const r = await runDueDeletions(opts.db, { multiTenantMode: opts.multiTenantMode });
    for (const id of r.deleted) opts.logger.warn({ tenant_id: id }, 'Tenant deleted by its scheduled deletion');
  } catch (err) {
    opts.logger.error({ err }, 'Scheduled tenant deletion failed; next try at the next interval');
  }
}

export function startScheduledDeletionWorker(opts: ScheduledDeletionOptions): ScheduledDeletionWorker {
  const log = opts.logger.child({ worker: 'scheduled-deletion' });
  return startIntervalWorker(() => runScheduledDeletions({ ...opts, logger: log }), opts.intervalMs ?? 20_000);
}
