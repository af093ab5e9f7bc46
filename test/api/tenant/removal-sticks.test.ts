/**
 * A removal sticks (docs/security.md#a-removal-sticks): a member removed by an admin, or who
 * left, is never provisioned again from a claim or a linked id; the next request, gateway
 * decision and tenant token are 403 saying so. Only an accepted invitation or a platform admin's
 * direct add brings them back; deleting the tenant deletes the marks.
 */
import request from 'supertest';
import { LOCAL_ISSUER } from '../../../src/auth/local-keys';
import { startTestApp, type TestApp } from '../../helpers/app';
import { adminToken, closeOwnerConnection, createUser, ownerConnection, tokenFor, unique } from '../../helpers/factories';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_JWT_TENANT_ID_CLAIM: 'org_id' });
});
afterAll(async () => {
  await t.close();
  await closeOwnerConnection();
});

const platform = () => `Bearer ${adminToken()}`;
const bearer = (sub: string, claims: Record<string, unknown>) => `Bearer ${tokenFor({ sub, email: `${sub}@removal.test`, claims: { email_verified: true, ...claims } })}`;

/** A tenant that provisions from claims (a platform admin's default), with an admin. */
async function claimTenant(body: Record<string, unknown> = {}): Promise<{ id: string; slug: string; adminAuth: string }> {
  const slug = unique('stick');
  const r = await request(t.app).post('/api/setup/tenant').set('Authorization', platform()).send({ name: slug, slug, ...body }).expect(201);
  const admin = await createUser(r.body.tenant_id as string, { role: 'admin' });
  return { id: r.body.tenant_id as string, slug, adminAuth: bearer(admin.subject, { tenant: slug }) };
}

async function provisioned(auth: string): Promise<string> {
  const r = await request(t.app).get('/api/tenant').set('Authorization', auth).expect(200);
  return r.body.membership.user_id as string;
}

const membersWith = (tenantId: string, subject: string) => ownerConnection()('users').where({ tenant_id: tenantId, subject });
const marks = (tenantId: string) => ownerConnection()('member_removals').where({ tenant_id: tenantId }).select('issuer', 'subject', 'reason');

function expectRemoved(r: { status: number; body: { error?: string; detail?: string } }, slug: string, how: RegExp): void {
  expect(r.status).toBe(403);
  expect(r.body.error).toBe('Access denied');
  expect(r.body.detail).toContain(`removed from tenant '${slug}'`);
  expect(r.body.detail).toMatch(how);
}

describe('removed by an admin', () => {
  it('the next request, gateway decision and tenant token are 403 saying so; no new membership', async () => {
    const tenant = await claimTenant();
    const sub = unique('gone');
    const auth = bearer(sub, { tenant: tenant.slug });
    const userId = await provisioned(auth);
    await request(t.app).delete(`/api/tenant/members/${userId}`).set('Authorization', tenant.adminAuth).expect(204);

    expectRemoved(await request(t.app).get('/api/tenant').set('Authorization', auth), tenant.slug, /by an admin/);
    expectRemoved(await request(t.app).post('/api/boards').set('Authorization', auth).send({ name: 'x' }), tenant.slug, /by an admin/);
    const decision = await request(t.app).get('/api/tenant/decision').set('Authorization', auth);
    expectRemoved(decision, tenant.slug, /by an admin/);
    expect(decision.headers['x-tenant-error']).toBe('Access denied');
    expectRemoved(await request(t.app).post('/api/tenant/token').set('Authorization', auth), tenant.slug, /by an admin/);
    expect(await membersWith(tenant.id, sub)).toEqual([]);
    expect(await marks(tenant.id)).toEqual([{ issuer: LOCAL_ISSUER, subject: sub, reason: 'removed' }]);
  });

  it('on a linked tenant, the linked id does not bring them back either', async () => {
    const orgId = unique('org');
    const tenant = await claimTenant({ identity_links: [{ issuer: LOCAL_ISSUER, organization_id: orgId }] });
    const sub = unique('linked');
    const auth = bearer(sub, { org_id: orgId });
    const userId = await provisioned(auth);
    await request(t.app).delete(`/api/tenant/members/${userId}`).set('Authorization', tenant.adminAuth).set('X-Tenant', tenant.slug).expect(204);
    expectRemoved(await request(t.app).get('/api/tenant').set('Authorization', auth), tenant.slug, /by an admin/);
    expect(await membersWith(tenant.id, sub)).toEqual([]);
  });
});

describe('left (DELETE /api/tenant/membership)', () => {
  it('a claim does not make them a member again', async () => {
    const tenant = await claimTenant();
    const sub = unique('leaver');
    const auth = bearer(sub, { tenant: tenant.slug });
    await provisioned(auth);
    await request(t.app).delete('/api/tenant/membership').set('Authorization', auth).expect(200);
    expectRemoved(await request(t.app).get('/api/tenant').set('Authorization', auth), tenant.slug, /when they left it/);
    expect(await membersWith(tenant.id, sub)).toEqual([]);
    expect(await marks(tenant.id)).toEqual([{ issuer: LOCAL_ISSUER, subject: sub, reason: 'left' }]);
  });
});

describe('what brings them back (and clears the mark)', () => {
  it('an accepted invitation', async () => {
    const tenant = await claimTenant();
    const sub = unique('back');
    const auth = bearer(sub, { tenant: tenant.slug });
    const first = await provisioned(auth);
    await request(t.app).delete(`/api/tenant/members/${first}`).set('Authorization', tenant.adminAuth).expect(204);
    const inv = await request(t.app).post('/api/tenant/invitations').set('Authorization', tenant.adminAuth).send({ email: `${sub}@removal.test`, role: 'member' }).expect(201);
    await request(t.app).post('/api/invitations/accept').set('Authorization', auth).send({ token: inv.body.token }).expect(200);
    const again = await request(t.app).get('/api/tenant').set('Authorization', auth).expect(200);
    expect(again.body.membership.user_id).not.toBe(first);
    expect(await marks(tenant.id)).toEqual([]);
    // Removed once more, the mark is back.
    await request(t.app).delete(`/api/tenant/members/${again.body.membership.user_id}`).set('Authorization', tenant.adminAuth).expect(204);
    expectRemoved(await request(t.app).get('/api/tenant').set('Authorization', auth), tenant.slug, /by an admin/);
  });

  it("a platform admin's direct add", async () => {
    const tenant = await claimTenant();
    const sub = unique('readded');
    const auth = bearer(sub, { tenant: tenant.slug });
    await provisioned(auth);
    await request(t.app).delete('/api/tenant/membership').set('Authorization', auth).expect(200);
    await request(t.app)
      .post('/api/tenant/members')
      .set('Authorization', platform())
      .set('X-Tenant', tenant.slug)
      .send({ subject: sub, issuer: LOCAL_ISSUER, email: `${sub}@removal.test`, role: 'member' })
      .expect(201);
    await request(t.app).get('/api/tenant').set('Authorization', auth).expect(200);
    expect(await marks(tenant.id)).toEqual([]);
  });
});

it("deleting the tenant deletes its removal marks (counted by the deletion preview)", async () => {
  const tenant = await claimTenant();
  const auth = bearer(unique('counted'), { tenant: tenant.slug });
  await provisioned(auth);
  await request(t.app).delete('/api/tenant/membership').set('Authorization', auth).expect(200);
  const preview = await request(t.app).get(`/api/setup/tenant/${tenant.id}/deletion-preview`).set('Authorization', platform()).expect(200);
  expect(preview.body.rows.member_removals).toBe(1);
  await request(t.app).delete(`/api/setup/tenant/${tenant.id}`).set('Authorization', platform()).expect(200);
  expect(await marks(tenant.id)).toEqual([]);
});
