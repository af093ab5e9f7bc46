/**
 * The SSO write operations' cases for the every-write-records-its-event suite
 * (test/api/events/events.test.ts): each performs the operation and says which event it must have
 * written (docs/sso.md). SAML connections: no network is asked.
 */
import request from 'supertest';
import type { TestApp } from '../../helpers/app';
import { tenantWithMember } from '../../helpers/factories';
import type { Expected } from '../events/domain-event-cases';
import { makeKeyAndCert } from './helpers/certs';

export function ssoEventCases({ t }: { t: () => TestApp }): Record<string, () => Promise<Expected>> {
  const cert = makeKeyAndCert();
  const body = { type: 'saml', name: 'IdP', idp_entity_id: 'https://idp.example.com', idp_sso_url: 'https://idp.example.com/sso', idp_certificate: cert.cert };
  async function connected() {
    const { tenant, user, token } = await tenantWithMember('admin');
    const auth = { Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug };
    const c = await request(t().app).post('/api/tenant/sso/connections').set(auth).send(body).expect(201);
    return { tenant, user, auth, id: c.body.connection_id as string };
  }
  return {
    async createSsoConnection() {
      const { tenant, user, token } = await tenantWithMember('admin');
      const res = await request(t().app).post('/api/tenant/sso/connections').set({ Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug }).send(body);
      return { res, status: 201, action: 'sso_connection.created', actor: { subject: user.subject, platformAdmin: false }, target: { type: 'sso_connection', id: res.body.connection_id }, tenantId: tenant.id };
    },
    async updateSsoConnection() {
      const { tenant, user, auth, id } = await connected();
      const res = await request(t().app).patch(`/api/tenant/sso/connections/${id}`).set(auth).send({ name: 'Renamed' });
      return { res, status: 200, action: 'sso_connection.updated', actor: { subject: user.subject, platformAdmin: false }, target: { type: 'sso_connection', id }, tenantId: tenant.id };
    },
    async deleteSsoConnection() {
      const { tenant, user, auth, id } = await connected();
      const res = await request(t().app).delete(`/api/tenant/sso/connections/${id}`).set(auth);
      return { res, status: 204, action: 'sso_connection.deleted', actor: { subject: user.subject, platformAdmin: false }, target: { type: 'sso_connection', id }, tenantId: tenant.id };
    },
    async updateSsoSettings() {
      const { tenant, user, auth } = await connected();
      const res = await request(t().app).patch('/api/tenant/sso').set(auth).send({ sso_required: true });
      return { res, status: 200, action: 'sso_settings.updated', actor: { subject: user.subject, platformAdmin: false }, target: { type: 'sso_settings', id: tenant.id }, tenantId: tenant.id };
    },
  };
}
