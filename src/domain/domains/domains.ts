/**
 * A tenant's verified domains (docs/domains.md): claim (free, grants nothing), prove by a DNS
 * TXT record, set the join policy, remove; a platform admin may mark one verified without DNS.
 * Every change records its event in its transaction; the table's trigger notifies the decision
 * facts (a verified row gained or lost notifies every tenant's: resolution may change).
 */
import { randomBytes } from 'node:crypto';
import {
  deleteDomain,
  insertDomain,
  lockTenantDomains,
  markChecked,
  markVerified,
  otherVerifiedOwner,
  selectDomain,
  selectDomains,
  updateJoin,
  type JoinPolicy,
  type TenantDomain,
} from '../../db/queries/domains';
import { selectPlatformRole, selectTenantRole } from '../../db/queries/roles';
import { withTenant, type Database, type Transaction } from '../../db/tenant-scope';
import { notGivenByDomain } from '../../context/permissions';
import { ADMIN_ROLE } from '../../context/roles';
import { ApiError } from '../../errors';
import { recordEvent, type EventOrigin } from '../events';
import { describeAnswer, type TxtLookup } from './dns';
import { claimableDomain, storedDomain, unicodeDomain } from './names';

export type { TenantDomain, JoinPolicy } from '../../db/queries/domains';

/** Domains a tenant may hold (claimed, verified or lapsed). */
export const MAX_DOMAINS = 20;
export const RECORD_PREFIX = '_tenant-service.';
export const VALUE_PREFIX = 'tenant-service-verification=';

/** The TXT record that proves the domain. */
export function verificationOf(d: Pick<TenantDomain, 'domain' | 'token'>): { type: 'TXT'; name: string; value: string } {
  return { type: 'TXT', name: `${RECORD_PREFIX}${d.domain}`, value: `${VALUE_PREFIX}${d.token}` };
}

/** What events say of a domain. */
export function domainData(d: TenantDomain): Record<string, unknown> {
  return { domain: d.domain, display_domain: unicodeDomain(d.domain), status: d.status, join: d.join, join_role: d.joinRole };
}

function notFound(input: string): ApiError {
  return new ApiError('notFound', `The tenant has no domain '${input.slice(0, 300)}'.`);
}

async function existing(trx: Transaction, tenantId: string, input: string, forUpdate = false): Promise<TenantDomain> {
  const domain = storedDomain(input);
  const d = domain === null ? undefined : await selectDomain(trx, tenantId, domain, forUpdate);
  if (!d) throw notFound(input);
  return d;
}

export function listDomains(trx: Transaction, tenantId: string): Promise<TenantDomain[]> {
  return selectDomains(trx, tenantId);
}

export function getDomain(trx: Transaction, tenantId: string, input: string): Promise<TenantDomain> {
  return existing(trx, tenantId, input);
}

/** Claims a domain: pending, with a fresh random token (201); 409 when already claimed by this tenant or at the limit. */
export async function claimDomain(trx: Transaction, origin: EventOrigin, tenantId: string, input: string): Promise<TenantDomain> {
  const domain = claimableDomain(input);
  const held = await lockTenantDomains(trx, tenantId);
  if (await selectDomain(trx, tenantId, domain)) throw new ApiError('conflict', `The tenant already claimed '${unicodeDomain(domain)}'.`);
  if (held >= MAX_DOMAINS) throw new ApiError('conflict', `The tenant already holds ${MAX_DOMAINS} domains, the limit; remove one first.`);
  const d = await insertDomain(trx, { tenantId, domain, token: randomBytes(32).toString('base64url') });
  if (!d) throw new ApiError('conflict', `The tenant already claimed '${unicodeDomain(domain)}'.`);
  await recordEvent(trx, origin, { action: 'domain.claimed', tenantId, target: { type: 'domain', id: domain }, data: { domain: domainData(d) } });
  return d;
}

/** Checks a join role (docs/domains.md#joining-by-domain): a role of the tenant, not `admin`, no administering system permission. */
async function checkJoinRole(trx: Transaction, tenantId: string, key: string): Promise<void> {
  const role = (await selectTenantRole(trx, tenantId, key)) ?? (await selectPlatformRole(trx, key));
  if (!role) throw new ApiError('validation', `body.join_role: '${key}' is not a role of this tenant.`);
  if (key === ADMIN_ROLE) throw new ApiError('validation', "body.join_role: 'admin' is never given by a domain: a DNS record proves control of a domain, not a decision about a person.");
  const system = notGivenByDomain(role.permissions);
  if (system) throw new ApiError('validation', `body.join_role: role '${key}' holds the system permission '${system}'; a role given by a domain may hold no 'tenant:' permission beyond what the built-in member role holds (tenant:members:read).`);
}

/** Sets the join policy and role; event `domain.updated` when something changed. */
export async function updateDomain(trx: Transaction, origin: EventOrigin, tenantId: string, input: string, patch: { join?: JoinPolicy; joinRole?: string }): Promise<TenantDomain> {
  const d = await existing(trx, tenantId, input, true);
  const join = patch.join ?? d.join;
  const joinRole = patch.joinRole ?? d.joinRole;
  if (patch.joinRole !== undefined || join !== 'none') await checkJoinRole(trx, tenantId, joinRole);
  if (join === d.join && joinRole === d.joinRole) return d;
  const after = await updateJoin(trx, tenantId, d.domain, join, joinRole);
  await recordEvent(trx, origin, {
    action: 'domain.updated',
    tenantId,
    target: { type: 'domain', id: d.domain },
    data: { domain: domainData(after), before: { join: d.join, join_role: d.joinRole }, after: { join, join_role: joinRole } },
  });
  return after;
}

/** Removes the domain (whatever its status); event `domain.removed`. Nobody who joined by it is removed. */
export async function removeDomain(trx: Transaction, origin: EventOrigin, tenantId: string, input: string): Promise<void> {
  const d = await existing(trx, tenantId, input, true);
  await deleteDomain(trx, tenantId, d.domain);
  await recordEvent(trx, origin, { action: 'domain.removed', tenantId, target: { type: 'domain', id: d.domain }, data: { domain: domainData(d) } });
}

function taken(domain: string): ApiError {
  return new ApiError('domainTaken', `'${unicodeDomain(domain)}' is verified by another tenant; it must remove it first (a subdomain of it may be verified here).`);
}

/**
 * Proves the domain by DNS (no transaction is open while DNS is asked): 200 verified when the TXT
 * record carries exactly the value; else 409 `Domain not verified` naming the record and what
 * came back; 409 `Domain taken` when another tenant verified it. Restores a lapsed domain.
 */
export async function verifyDomain(db: Database, lookup: TxtLookup, origin: EventOrigin, tenantId: string, input: string): Promise<TenantDomain> {
  const d = await withTenant(db, tenantId, async (trx) => {
    const found = await existing(trx, tenantId, input);
    if (await otherVerifiedOwner(trx, tenantId, found.domain)) throw taken(found.domain);
    return found;
  });
  const record = verificationOf(d);
  const answer = await lookup(record.name);
  const proven = answer.kind === 'records' && answer.values.includes(record.value);
  return withTenant(db, tenantId, async (trx) => {
    const now = await existing(trx, tenantId, input, true);
    if (!proven || now.token !== d.token) {
      await markChecked(trx, tenantId, now.domain);
      return null;
    }
    const after = await markVerified(trx, tenantId, now.domain, 'dns');
    if (now.status !== 'verified') {
      await recordEvent(trx, origin, {
        action: 'domain.verified',
        tenantId,
        target: { type: 'domain', id: now.domain },
        data: { domain: domainData(after), by: 'dns', before: { status: now.status }, after: { status: 'verified' } },
      });
    }
    return after;
  }).then((after) => {
    if (after) return after;
    throw new ApiError('domainNotVerified', `Looked for a TXT record at '${record.name}' with the value '${record.value}'; found ${describeAnswer(answer)}.`);
  });
}

/**
 * A platform admin marks a domain verified without DNS (claimed first when new): `created`
 * tells whether the claim was made now. Event `domain.verified` with `by: "platform_admin"`.
 */
export function markDomainVerified(db: Database, origin: EventOrigin, tenantId: string, input: string, verified: boolean): Promise<{ domain: TenantDomain; created: boolean }> {
  return withTenant(db, tenantId, (trx) => markInTenant(trx, origin, tenantId, input, verified));
}

async function markInTenant(trx: Transaction, origin: EventOrigin, tenantId: string, input: string, verified: boolean): Promise<{ domain: TenantDomain; created: boolean }> {
  const domain = claimableDomain(input);
  let d = await selectDomain(trx, tenantId, domain, true);
  const created = !d;
  if (!d) d = await claimDomain(trx, origin, tenantId, domain);
  if (!verified || d.status === 'verified') return { domain: d, created };
  if (await otherVerifiedOwner(trx, tenantId, domain)) throw taken(domain);
  const after = await markVerified(trx, tenantId, domain, 'platform_admin');
  await recordEvent(trx, origin, {
    action: 'domain.verified',
    tenantId,
    target: { type: 'domain', id: domain },
    data: { domain: domainData(after), by: 'platform_admin', before: { status: d.status }, after: { status: 'verified' } },
  });
  return { domain: after, created };
}
