/**
 * The directory admin endpoints (docs/directory-sync.md): SCIM tokens minted by tenant admins
 * (and platform admins through X-Tenant), shown once and stored hashed, listed and revoked; the
 * tenant's directory settings; who may not.
 */
import crypto from 'node:crypto';
import request from 'supertest';
import { startTestApp, type TestApp } from './helpers/app';
import { adminToken, closeOwnerConnection, createUser, ownerConnection, tokenFor, unique } from './factories';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_PUBLIC_URL: 'https://tenants.example.com/' });
});
afterAll(async () => {
  await t.close();
  await closeOwnerConnection();
});

const platform = () => `Bearer ${adminToken()}`;

async function tenantWithAdmin(): Promise<{ id: string; slug: string; admin: string; member: string }> {
  const slug = unique('dir');
  const r = await request(t.app).post('/api/setup/tenant').set('Authorization', platform()).send({ name: slug, slug }).expect(201);
  const id = r.body.tenant_id as string;
  const a = await createUser(id, { role: 'admin' });
  const m = await createUser(id, { role: 'member' });
  const auth = (sub: string) => `Bearer ${tokenFor({ sub, claims: { tenant: slug } })}`;
  return { id, slug, admin: auth(a.subject), member: auth(m.subject) };
}

describe('SCIM tokens', () => {
  it('a tenant admin mints one (shown once, stored as its SHA-256), lists it without the secret, and revokes it', async () => {
    const x = await tenantWithAdmin();
    const made = await request(t.app).post('/api/tenant/scim/tokens').set('Authorization', x.admin).send({ description: 'Entra ID' }).expect(201);
    expect(made.body).toEqual({ token_id: expect.any(String), token: expect.stringMatching(/^scim_[A-Za-z0-9_-]{43}$/), description: 'Entra ID', created_at: expect.any(String) });
    const stored = await ownerConnection()('scim_tokens').where({ tenant_id: x.id }).select('token_hash');
    expect(stored).toEqual([{ token_hash: crypto.createHash('sha256').update(made.body.token).digest('hex') }]);

    const list = await request(t.app).get('/api/tenant/scim/tokens').set('Authorization', x.admin).expect(200);
    expect(list.body).toEqual({ tokens: [{ token_id: made.body.token_id, description: 'Entra ID', created_at: made.body.created_at, last_used_at: null }] });
    expect(JSON.stringify(list.body)).not.toContain(made.body.token);

    const settings = await request(t.app).get('/api/tenant/scim').set('Authorization', x.admin).expect(200);
    expect(settings.body).toEqual({ base_url: 'https://tenants.example.com/scim/v2', enabled: true, group_roles: [], external_id_claim: null });

    await request(t.app).delete(`/api/tenant/scim/tokens/${made.body.token_id}`).set('Authorization', x.admin).expect(204);
    await request(t.app).delete(`/api/tenant/scim/tokens/${made.body.token_id}`).set('Authorization', x.admin).expect(404);
    expect((await request(t.app).get('/api/tenant/scim').set('Authorization', x.admin).expect(200)).body.enabled).toBe(false);

    const events = await ownerConnection()('events').where({ tenant_id: x.id }).whereIn('action', ['scim_token.created', 'scim_token.revoked']).orderBy('occurred_at').select('action', 'target_id');
    expect(events).toEqual([
      { action: 'scim_token.created', target_id: made.body.token_id },
      { action: 'scim_token.revoked', target_id: made.body.token_id },
    ]);
  });

  it('a platform admin mints one through X-Tenant; a plain member may not; another tenant cannot revoke it', async () => {
    const x = await tenantWithAdmin();
    const y = await tenantWithAdmin();
    const made = await request(t.app).post('/api/tenant/scim/tokens').set('Authorization', platform()).set('X-Tenant', x.slug).send({}).expect(201);
    expect(made.body.description).toBeNull();
    await request(t.app).post('/api/tenant/scim/tokens').set('Authorization', x.member).send({}).expect(403);
    await request(t.app).get('/api/tenant/scim/tokens').set('Authorization', x.member).expect(403);
    await request(t.app).delete(`/api/tenant/scim/tokens/${made.body.token_id}`).set('Authorization', y.admin).expect(404);
    expect((await request(t.app).get('/api/tenant/scim/tokens').set('Authorization', y.admin).expect(200)).body.tokens).toEqual([]);
    expect((await request(t.app).get('/api/tenant/scim/tokens').set('Authorization', x.admin).expect(200)).body.tokens).toHaveLength(1);
  });

  it('refuses a description over 200 characters and unknown fields, writing nothing', async () => {
    const x = await tenantWithAdmin();
    await request(t.app).post('/api/tenant/scim/tokens').set('Authorization', x.admin).send({ description: 'x'.repeat(201) }).expect(400);
    await request(t.app).post('/api/tenant/scim/tokens').set('Authorization', x.admin).send({ token: 'scim_mine' }).expect(400);
    expect(await ownerConnection()('scim_tokens').where({ tenant_id: x.id })).toEqual([]);
  });
});

describe('directory settings', () => {
  it('keeps ordered group_roles validated against the tenant role keys, and external_id_claim', async () => {
    const x = await tenantWithAdmin();
    const put = await request(t.app)
      .put('/api/tenant/scim')
      .set('Authorization', x.admin)
      .send({ group_roles: [{ group: 'Admins', role: 'admin' }, { group: 'Everyone', role: 'member' }], external_id_claim: 'oid' })
      .expect(200);
    expect(put.body).toEqual({ base_url: 'https://tenants.example.com/scim/v2', enabled: false, group_roles: [{ group: 'Admins', role: 'admin' }, { group: 'Everyone', role: 'member' }], external_id_claim: 'oid' });

    const bad = await request(t.app).put('/api/tenant/scim').set('Authorization', x.admin).send({ group_roles: [{ group: 'Ops', role: 'no-such-role' }] }).expect(400);
    expect(bad.body).toMatchObject({ error: 'Validation error', detail: expect.stringContaining("'no-such-role'") });
    // Omitted fields stay; null clears the claim.
    const cleared = await request(t.app).put('/api/tenant/scim').set('Authorization', x.admin).send({ external_id_claim: null }).expect(200);
    expect(cleared.body).toMatchObject({ group_roles: [{ group: 'Admins', role: 'admin' }, { group: 'Everyone', role: 'member' }], external_id_claim: null });
    await request(t.app).put('/api/tenant/scim').set('Authorization', x.member).send({ external_id_claim: 'oid' }).expect(403);
  });
});

describe('member listings', () => {
  it('show directory_managed on each member', async () => {
    const x = await tenantWithAdmin();
    const r = await request(t.app).get('/api/tenant/members').set('Authorization', x.admin).expect(200);
    expect(r.body.members.length).toBe(2);
    for (const m of r.body.members) expect(m.directory_managed).toBe(false);
  });
});
