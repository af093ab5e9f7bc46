/**
 * The daily re-check of verified domains (docs/domains.md#it-stays-true): every instance looks
 * for due domains; taking one moves its next check a day on in a committed UPDATE that only one
 * instance's statement can match, so each due check runs on exactly one instance. A record
 * missing at three checks in a row makes the domain `lapsed` (event `domain.lapsed`); a DNS
 * error or timeout counts as no answer, not as a miss.
 */
import { claimDueCheck, dueDomains, recordCheck } from '../../db/queries/domains';
import { withService, withTenant, type Database } from '../../db/tenant-scope';
import { SYSTEM_ORIGIN, recordEvent } from '../events';
import { describeAnswer, isDefiniteMiss, type TxtLookup } from './dns';
import { domainData, verificationOf } from './domains';

/** Misses in a row that lapse a domain. */
export const LAPSE_AFTER_MISSES = 3;

export interface DomainCheckResult {
  /** `tenant_id domain` of each check this call ran, with what it found. */
  readonly checked: Array<{ tenantId: string; domain: string; found: boolean; answer: string }>;
  readonly lapsed: Array<{ tenantId: string; domain: string }>;
}

/** One pass over due domains (at most `limit`). */
export async function runDomainChecks(db: Database, lookup: TxtLookup, opts: { limit?: number } = {}): Promise<DomainCheckResult> {
  const due = await withService(db, (trx) => dueDomains(trx, opts.limit ?? 100), { readOnly: true });
  const result: DomainCheckResult = { checked: [], lapsed: [] };
  for (const { tenantId, domain } of due) {
    const taken = await withTenant(db, tenantId, (trx) => claimDueCheck(trx, tenantId, domain));
    if (!taken) continue; // another instance took it, or it changed meanwhile
    const record = verificationOf(taken);
    const answer = await lookup(record.name);
    const found = answer.kind === 'records' && answer.values.includes(record.value);
    result.checked.push({ tenantId, domain, found, answer: found ? 'the record' : describeAnswer(answer) });
    if (!found && !isDefiniteMiss(answer, record.value)) continue;
    const after = await withTenant(db, tenantId, async (trx) => {
      const row = await recordCheck(trx, tenantId, domain, found, LAPSE_AFTER_MISSES);
      if (row && row.status === 'lapsed') {
        await recordEvent(trx, SYSTEM_ORIGIN, {
          action: 'domain.lapsed',
          tenantId,
          target: { type: 'domain', id: domain },
          data: { domain: domainData(row), misses: row.misses, found: describeAnswer(answer), before: { status: 'verified' }, after: { status: 'lapsed' } },
        });
      }
      return row;
    });
    if (after?.status === 'lapsed') result.lapsed.push({ tenantId, domain });
  }
  return result;
}
