/**
 * rotateTenantTokenKeys (POST /api/setup/tenant-token-keys/rotate): platform admins only; the new
 * key is published in the JWKS at once beside the previous one. What rotation records and that no
 * private half leaks: test/api/tenant/tenant-tokens.test.ts.
 */
import request from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { adminToken, closeOwnerConnection, tenantWithMember } from '../../helpers/factories';

let t: TestApp;
const rotate = () => request(t.app).post('/api/setup/tenant-token-keys/rotate');

beforeAll(async () => {
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
});
afterAll(async () => {
  await t.close();
  await closeOwnerConnection();
});

describe('rotateTenantTokenKeys', () => {
  it('is 401 without a token and 403 for a tenant admin, and rotates nothing then', async () => {
    const before = (await request(t.app).get('/.well-known/jwks.json').expect(200)).body;
    expect((await rotate()).status).toBe(401);
    const { tenant, token } = await tenantWithMember('admin');
    const r = await rotate().set('Authorization', `Bearer ${token}`).set('X-Tenant', tenant.slug);
    expect({ status: r.status, error: r.body.error }).toEqual({ status: 403, error: 'Forbidden' });
    expect((await request(t.app).get('/.well-known/jwks.json').expect(200)).body).toEqual(before);
  });

  it('a platform admin rotates: the new kid and the previous one are both published', async () => {
    const r = await rotate().set('Authorization', `Bearer ${adminToken()}`).expect(200);
    expect(r.body.kid).not.toBe(r.body.previous_kid);
    const kids = (await request(t.app).get('/.well-known/jwks.json').expect(200)).body.keys.map((k: { kid: string }) => k.kid);
    expect(kids).toEqual(expect.arrayContaining([r.body.kid, r.body.previous_kid]));
    const again = await rotate().set('Authorization', `Bearer ${adminToken()}`).expect(200);
    expect(again.body.previous_kid).toBe(r.body.kid);
  });
});
