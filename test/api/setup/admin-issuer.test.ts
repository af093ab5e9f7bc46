/**
 * Platform admins come from the admin issuers only (docs/security.md#platform-admins): with
 * SERVICE_JWT_ISSUER unset and two issuers accepted by one JWKS served over HTTP, the admin role
 * in a token of the other issuer reaches no /api/setup operation, links no identity link and adds
 * no member; the admin issuer's token does. With no admin issuer at all nobody is a platform
 * admin, and the boot log and setup status say why.
 */
import request from 'supertest';
import { getSetupStatus } from '../../../src/domain/setup-status';
import { startTestApp, type TestApp } from '../../helpers/app';
import { startJwksServer, type JwksServer } from '../../helpers/jwks-server';
import { closeOwnerConnection, createTenant, ownerConnection, unique } from '../../helpers/factories';

let jwks: JwksServer;
/** SERVICE_ADMIN_ISSUER = issuer A; issuer B's tokens are accepted too (no SERVICE_JWT_ISSUER). */
let app: TestApp;
/** Neither SERVICE_ADMIN_ISSUER nor SERVICE_JWT_ISSUER. */
let none: TestApp;
let A: string;
let B: string;

beforeAll(async () => {
  jwks = await startJwksServer();
  A = `${jwks.issuer}/a`;
  B = `${jwks.issuer}/b`;
  app = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_JWKS_URI: jwks.jwksUri, SERVICE_ADMIN_ISSUER: A });
  none = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_JWKS_URI: jwks.jwksUri });
}, 60_000);
afterAll(async () => {
  await Promise.all([app?.close(), none?.close()]);
  await jwks?.close();
  await closeOwnerConnection();
});

const adminOf = (iss: string) => `Bearer ${jwks.sign({ sub: unique('root'), iss, roles: ['admin'] })}`;
const links = (tenantId: string) => ownerConnection()('identity_links').where({ tenant_id: tenantId }).select('issuer', 'organization_id');

describe('SERVICE_ADMIN_ISSUER set to A, tokens of A and B accepted', () => {
  it("B's admin role is refused on /api/setup and links nothing; A's works", async () => {
    const tenant = await createTenant();
    const fromB = await request(app.app).get('/api/setup/tenants').set('Authorization', adminOf(B));
    expect(fromB.status).toBe(403);
    expect(fromB.body).toMatchObject({ error: 'Forbidden', detail: expect.stringMatching(/issuer is not one of the platform admin issuers \(SERVICE_ADMIN_ISSUER\)/) });

    const link = { identity_links: [{ issuer: B, organization_id: unique('org') }] };
    await request(app.app).put(`/api/setup/tenant/${tenant.id}`).set('Authorization', adminOf(B)).send(link).expect(403);
    expect(await links(tenant.id)).toEqual([]);

    await request(app.app).get('/api/setup/tenants').set('Authorization', adminOf(A)).expect(200);
    await request(app.app).put(`/api/setup/tenant/${tenant.id}`).set('Authorization', adminOf(A)).send(link).expect(200);
    expect(await links(tenant.id)).toEqual(link.identity_links);
  });

  it("B's admin role adds nobody to a tenant (the operator's direct add)", async () => {
    const tenant = await createTenant();
    const add = { subject: unique('pulled'), email: 'pulled@example.test', role: 'admin' };
    await request(app.app).post('/api/tenant/members').set('Authorization', adminOf(B)).set('X-Tenant', tenant.slug).send(add).expect(403);
    expect(await ownerConnection()('users').where({ tenant_id: tenant.id })).toEqual([]);
    await request(app.app).post('/api/tenant/members').set('Authorization', adminOf(A)).set('X-Tenant', tenant.slug).send(add).expect(201);
  });
});

describe('no admin issuer (neither SERVICE_ADMIN_ISSUER nor SERVICE_JWT_ISSUER, jwks provider)', () => {
  it('nobody is a platform admin, and the 403 says why', async () => {
    for (const iss of [A, B]) {
      const r = await request(none.app).get('/api/setup/tenants').set('Authorization', adminOf(iss));
      expect(r.status).toBe(403);
      expect(r.body.detail).toMatch(/no issuer may grant it: the operator sets SERVICE_ADMIN_ISSUER/);
    }
  });

  it('the boot log warns, and setup status recommends SERVICE_ADMIN_ISSUER', async () => {
    const warning = none.logs.find((l) => l.level === 40 && typeof l.msg === 'string' && l.msg.startsWith('No token is a platform admin'));
    expect(warning?.msg).toMatch(/jwks provider accepts whatever issuer its keys sign.*Set SERVICE_ADMIN_ISSUER/);
    expect(app.logs.some((l) => typeof l.msg === 'string' && l.msg.startsWith('No token is a platform admin'))).toBe(false);
    // Nobody can read /api/setup/status here: the status itself is read as its handler reads it.
    const status = await getSetupStatus(none.db, { config: none.config, embeddedDatabase: false, rateLimitStore: null });
    expect(status.recommendations[0]).toBe(warning?.msg);
  });
});
