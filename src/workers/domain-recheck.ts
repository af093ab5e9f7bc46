/**
 * The daily re-check of verified domains (docs/domains.md#it-stays-true): every instance looks
 * for due checks every `intervalMs` (default 10 minutes); each due check runs on exactly one
 * instance (src/domain/domains/recheck.ts).
 */
import type { Logger } from 'pino';
import { runDomainChecks } from '../domain/domains/recheck';
import type { TxtLookup } from '../domain/domains/dns';
import type { Database } from '../db/tenant-scope';
import { startIntervalWorker, type IntervalWorker } from './interval';

export interface DomainRecheckOptions {
  db: Database;
  lookup: TxtLookup;
  logger: Logger;
  /** Default 10 minutes. */
  intervalMs?: number;
}

export type DomainRecheckWorker = IntervalWorker;

/** One pass; a failure is logged and retried at the next pass. */
export async function runDomainRecheck(opts: Pick<DomainRecheckOptions, 'db' | 'lookup' | 'logger'>): Promise<void> {
  try {
    const r = await runDomainChecks(opts.db, opts.lookup);
    for (const c of r.checked) if (!c.found) opts.logger.warn({ tenant_id: c.tenantId, domain: c.domain, found: c.answer }, 'Verified domain record not found at its re-check');
    for (const l of r.lapsed) opts.logger.warn({ tenant_id: l.tenantId, domain: l.domain }, 'Verified domain lapsed after three missed re-checks');
  } catch (err) {
    opts.logger.error({ err }, 'Domain re-check failed; next try at the next interval');
  }
}

export function startDomainRecheckWorker(opts: DomainRecheckOptions): DomainRecheckWorker {
  const log = opts.logger.child({ worker: 'domain-recheck' });
  return startIntervalWorker(() => runDomainRecheck({ ...opts, logger: log }), opts.intervalMs ?? 600_000);
}
