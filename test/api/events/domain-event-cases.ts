/**
 * The verified-domain write operations' cases for the every-write-records-its-event suite
 * (events.test.ts), in their own file: each performs the operation and says which event it must
 * have written (docs/domains.md#api-events-limits).
 */
import request from 'supertest';
import type { TestApp } from '../../helpers/app';
import type { DnsServer } from '../../helpers/dns-server';
import { tenantWithMember, tokenFor, unique } from '../../helpers/factories';

/** What one case did and the event it must have written. */
export interface Expected {
  res: request.Response;
  status: number;
  action: string;
  /** Other events the same change writes (accepting an invitation also adds a member). */
  also?: string[];
  actor: { subject: string; platformAdmin: boolean };
  target: { type: string; id: string };
  tenantId: string | null;
}

interface Context {
  t: () => TestApp;
  dns: () => DnsServer;
  admin: string;
  adminSub: string;
}

const zone = () => `${unique('ev')}.example`;

export function domainEventCases({ t, dns, admin, adminSub }: Context): Record<string, () => Promise<Expected>> {
  /** A tenant admin who claimed a fresh domain. */
  async function claimed() {
    const { tenant, user, token } = await tenantWithMember('admin');
    const auth = { Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug };
    const domain = zone();
    const c = await request(t().app).post('/api/tenant/domains').set(auth).send({ domain }).expect(201);
    return { tenant, user, auth, domain, claim: c.body as { verification: { name: string; value: string } } };
  }
  return {
    async claimDomain() {
      const { tenant, user, token } = await tenantWithMember('admin');
      const domain = zone();
      const res = await request(t().app).post('/api/tenant/domains').set({ Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug }).send({ domain });
      return { res, status: 201, action: 'domain.claimed', actor: { subject: user.subject, platformAdmin: false }, target: { type: 'domain', id: domain }, tenantId: tenant.id };
    },
    async updateDomain() {
      const { tenant, user, auth, domain } = await claimed();
      const res = await request(t().app).patch(`/api/tenant/domains/${domain}`).set(auth).send({ join: 'suggest' });
      return { res, status: 200, action: 'domain.updated', actor: { subject: user.subject, platformAdmin: false }, target: { type: 'domain', id: domain }, tenantId: tenant.id };
    },
    async removeDomain() {
      const { tenant, user, auth, domain } = await claimed();
      const res = await request(t().app).delete(`/api/tenant/domains/${domain}`).set(auth);
      return { res, status: 204, action: 'domain.removed', actor: { subject: user.subject, platformAdmin: false }, target: { type: 'domain', id: domain }, tenantId: tenant.id };
    },
    async verifyDomain() {
      const { tenant, user, auth, domain, claim } = await claimed();
      dns().set(claim.verification.name, { txt: [claim.verification.value] });
      const res = await request(t().app).post(`/api/tenant/domains/${domain}/verify`).set(auth);
      return { res, status: 200, action: 'domain.verified', actor: { subject: user.subject, platformAdmin: false }, target: { type: 'domain', id: domain }, tenantId: tenant.id };
    },
    async markDomainVerified() {
      const { tenant } = await tenantWithMember('admin');
      const domain = zone();
      const res = await request(t().app).post(`/api/setup/tenant/${tenant.id}/domains`).set('Authorization', admin).send({ domain, verified: true });
      return { res, status: 201, action: 'domain.verified', also: ['domain.claimed'], actor: { subject: adminSub, platformAdmin: true }, target: { type: 'domain', id: domain }, tenantId: tenant.id };
    },
    async joinTenant() {
      const { tenant, token } = await tenantWithMember('admin');
      const auth = { Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug };
      const domain = zone();
      await request(t().app).post(`/api/setup/tenant/${tenant.id}/domains`).set('Authorization', admin).send({ domain, verified: true }).expect(201);
      await request(t().app).patch(`/api/tenant/domains/${domain}`).set(auth).send({ join: 'suggest' }).expect(200);
      const subject = unique('joiner');
      const res = await request(t().app)
        .post(`/api/tenants/${tenant.id}/join`)
        .set('Authorization', `Bearer ${tokenFor({ sub: subject, claims: { email: `${subject}@${domain}`, email_verified: true } })}`);
      return { res, status: 201, action: 'member.joined_by_domain', actor: { subject, platformAdmin: false }, target: { type: 'member', id: res.body.user_id }, tenantId: tenant.id };
    },
  };
}
