/**
 * `POST /api/tenants/{tenant_id}/join` (docs/domains.md#joining-by-domain): the tenant's facts by
 * its id in one statement (src/db/queries/enter-tenant.ts), the decision (./decide), then the
 * membership with the domain's join role and its event in the same transaction.
 */
import type { Member } from '../context/entities';
import type { AuthenticatedContext } from '../context/request';
import { insertMembership, withTenantFacts } from '../db/queries/enter-tenant';
import { emailDomains } from '../domain/domains/names';
import { memberData, recordEvent } from '../domain/events';
import { ApiError } from '../errors';
import { decideDomainJoin } from './decide';
import { decisionFacts } from './enter';

/** Makes the caller a member by their verified email's verified domain; the member, with the domain. */
export async function joinByDomain(ctx: AuthenticatedContext, tenantId: string): Promise<{ member: Member; domain: string; slug: string }> {
  const { caller } = ctx;
  const domains = caller.emailVerified === true && caller.email ? emailDomains(caller.email) : null;
  if (!domains) throw new ApiError('accessDenied', 'Joining by domain needs a token with a verified email (email_verified: true).');
  const query = { slug: null, tenantId, issuer: caller.issuer, subject: caller.subject, roles: [], emailKey: null, emailDomains: domains };
  const out = await withTenantFacts(ctx.services.db, query, async (row, trx) => {
    const d = decideDomainJoin(row && decisionFacts(ctx, row), tenantId);
    if (d instanceof ApiError) throw d;
    const inserted = await insertMembership(trx, { tenantId, issuer: caller.issuer, subject: caller.subject, email: caller.email, displayName: caller.name, role: d.role });
    if (!inserted || !inserted.made) throw new ApiError('conflict', `The user is already a member of tenant '${row!.tenant.slug}'.`);
    await recordEvent(trx, ctx.origin, {
      action: 'member.joined_by_domain',
      tenantId,
      target: { type: 'member', id: inserted.member.userId },
      data: { member: memberData(inserted.member), domain: d.domain, join: 'request' },
    });
    return { member: inserted.member, domain: d.domain, slug: row!.tenant.slug };
  });
  // This instance forgets the tenant's facts at once; the others when the notification arrives.
  ctx.services.decisionMemory?.facts?.forget(tenantId);
  return out;
}
