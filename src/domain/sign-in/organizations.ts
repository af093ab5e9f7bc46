/**
 * The tenants a signed-in person may enter (docs/sign-in.md#organizations): the tenants where
 * their account is a member (active tenants, memberships their directory has not deactivated),
 * and, for a verified email, the tenants whose verified domain covering it joins `automatic`
 * (they become members when they choose it). Pending invitations are not listed: an invitation
 * is accepted through the product (POST /api/invitations/accept), which then makes the
 * membership this list shows. Read across tenants under the reader role.
 */
import { selectJoinable } from '../../db/queries/domains';
import { membershipsOf, tenantByRef, tenantOfVerifiedDomain, type TenantSummary } from '../../db/queries/sign-in-admission';
import { withPlatformRead, type Database } from '../../db/tenant-scope';
import { emailDomains } from '../domains/names';

export interface Organization {
  readonly id: string;
  readonly slug: string;
  readonly name: string;
  /** Entering makes them a member (a verified domain joining automatically). */
  readonly joins: boolean;
}

export type { TenantSummary };

/** The tenants the person may choose, by slug. */
export async function organizationsOf(db: Database, who: { issuer: string; accountId: string; email: string | null; emailVerified: boolean }): Promise<Organization[]> {
  const domains = who.emailVerified && who.email ? emailDomains(who.email) : null;
  return withPlatformRead(db, async (trx) => {
    const members = (await membershipsOf(trx, who.issuer, who.accountId)).filter((m) => m.status === 'active' && m.active_member);
    const joinable = domains ? (await selectJoinable(trx, domains, who.issuer, who.accountId)).filter((j) => j.join === 'automatic') : [];
    const out: Organization[] = members.map((m) => ({ id: m.id, slug: m.slug, name: m.name, joins: false }));
    for (const j of joinable) if (!out.some((o) => o.id === j.tenantId)) out.push({ id: j.tenantId, slug: j.slug, name: j.name, joins: true });
    return out.sort((a, b) => a.slug.localeCompare(b.slug));
  });
}

/** A tenant by slug or id (the `organization` parameter); null when none. */
export async function findOrganization(db: Database, ref: string): Promise<TenantSummary | null> {
  if (ref.length === 0 || ref.length > 200) return null;
  return (await tenantByRef(db, ref)) ?? null;
}

/** The tenant that verified the email's domain (longest verified suffix); null when none. */
export async function tenantOfEmail(db: Database, email: string): Promise<string | null> {
  const domains = emailDomains(email);
  if (!domains) return null;
  return withPlatformRead(db, (trx) => tenantOfVerifiedDomain(trx, domains));
}
