/**
 * Registration end to end: from a fresh token to using the new tenant through the tenant-scoped
 * API, and the approval path through a platform admin (docs/tenants.md#self-service-registration).
 */
import request from 'supertest';
import { SAMPLE_BOARDS } from '../../../src/db/queries/tenants';
import { startTestApp, type TestApp } from '../../helpers/app';
import { adminToken, closeOwnerConnection, tokenFor, unique } from '../../helpers/factories';

let open: TestApp; // multi-tenant, no approval
let gated: TestApp; // multi-tenant, approval required

beforeAll(async () => {
  open = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
  gated = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_TENANT_REGISTRATION_REQUIRES_APPROVAL: 'true' });
});
afterAll(async () => {
  await Promise.all([open, gated].map((t) => t?.close()));
  await closeOwnerConnection();
});

/** A fresh identity with an email at a company (non-public) domain. */
function freshUser(): { sub: string; email: string; token: string } {
  const sub = unique('founder');
  const email = `${sub}@globex-industries.test`;
  return { sub, email, token: tokenFor({ sub, email, name: 'Grace Founder' }) };
}

const sampleBoardNames = SAMPLE_BOARDS.map((b) => b.name).sort();

it('journey: fresh token → register → GET /api/tenant as admin → GET /api/boards shows the sample boards', async () => {
  const me = freshUser();
  const name = `Globex Industries ${unique('g')}`;
  const reg = await request(open.app)
    .post('/api/tenants/register')
    .set('Authorization', `Bearer ${me.token}`)
    .send({ organization_name: name, admin_email: me.email })
    .expect(201);
  const slug: string = reg.body.tenant_slug;
  expect(reg.body.status).toBe('active');
  expect(reg.body.api_access.tenant_header).toBe(`X-Tenant: ${slug}`);

  const current = await request(open.app).get('/api/tenant').set('Authorization', `Bearer ${me.token}`).set('X-Tenant', slug).expect(200);
  expect(current.body.tenant).toMatchObject({ tenant_id: reg.body.tenant_id, name, slug, status: 'active' });
  expect(current.body.membership).toMatchObject({ subject: me.sub, role: 'admin', email: me.email, display_name: 'Grace Founder' });
  expect(current.body.source).toBe('header');

  const boards = await request(open.app).get('/api/boards').set('Authorization', `Bearer ${me.token}`).set('X-Tenant', slug).expect(200);
  expect(boards.body.boards.map((b: { name: string }) => b.name).sort()).toEqual(sampleBoardNames);

  const mine = await request(open.app).get('/api/tenants/mine').set('Authorization', `Bearer ${me.token}`).expect(200);
  expect(mine.body.tenants).toEqual([expect.objectContaining({ tenant_id: reg.body.tenant_id, slug, role: 'admin', status: 'active' })]);

  // Someone else naming the new tenant in X-Tenant is not let in.
  const stranger = freshUser();
  const denied = await request(open.app).get('/api/boards').set('Authorization', `Bearer ${stranger.token}`).set('X-Tenant', slug).expect(403);
  expect(denied.body.error).toBe('Access denied');
});

it('approval: pending tenant is refused until a platform admin sets it active, then the registrant can use it', async () => {
  const me = freshUser();
  const reg = await request(gated.app)
    .post('/api/tenants/register')
    .set('Authorization', `Bearer ${me.token}`)
    .send({ organization_name: `Initech ${unique('i')}`, admin_email: me.email })
    .expect(201);
  const slug: string = reg.body.tenant_slug;
  expect(reg.body.status).toBe('pending_approval');
  expect(reg.body.admin_instructions).toMatch(/awaiting approval/);
  expect(reg.body.admin_instructions).toContain(`X-Tenant: ${slug}`);

  for (const path of ['/api/tenant', '/api/boards']) {
    const r = await request(gated.app).get(path).set('Authorization', `Bearer ${me.token}`).set('X-Tenant', slug).expect(403);
    expect(r.body.error).toBe('Tenant pending approval');
  }
  const mine = await request(gated.app).get('/api/tenants/mine').set('Authorization', `Bearer ${me.token}`).expect(200);
  expect(mine.body.tenants).toEqual([expect.objectContaining({ slug, status: 'pending_approval', role: 'admin' })]);

  // The registrant cannot approve their own tenant.
  await request(gated.app).put(`/api/setup/tenant/${reg.body.tenant_id}`).set('Authorization', `Bearer ${me.token}`).send({ status: 'active' }).expect(403);

  const approved = await request(gated.app)
    .put(`/api/setup/tenant/${reg.body.tenant_id}`)
    .set('Authorization', `Bearer ${adminToken()}`)
    .send({ status: 'active' })
    .expect(200);
  expect(approved.body).toMatchObject({ tenant_id: reg.body.tenant_id, slug, status: 'active' });

  const current = await request(gated.app).get('/api/tenant').set('Authorization', `Bearer ${me.token}`).set('X-Tenant', slug).expect(200);
  expect(current.body.tenant.status).toBe('active');
  expect(current.body.membership).toMatchObject({ subject: me.sub, role: 'admin' });
  const boards = await request(gated.app).get('/api/boards').set('Authorization', `Bearer ${me.token}`).set('X-Tenant', slug).expect(200);
  expect(boards.body.boards.map((b: { name: string }) => b.name).sort()).toEqual(sampleBoardNames);
});
