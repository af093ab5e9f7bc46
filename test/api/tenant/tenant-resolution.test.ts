/**
 * Tenant resolution end to end (docs/tenants.md#tenant-resolution), table-driven over GET
 * /api/tenant in multi-tenant mode, plus single-tenant mode.
 */
import request from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { closeOwnerConnection, createTenant, createUser, ownerConnection, tokenFor, unique, type TenantFixture } from '../../helpers/factories';

let t: TestApp;
let acme: TenantFixture;
let other: TenantFixture;
let pending: TenantFixture;
let domainTenant: TenantFixture;
let domain: string;
beforeAll(async () => {
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_JWT_TENANT_CLAIM: 'https://example.com/tenant' });
  acme = await createTenant({ name: 'Acme Corp' });
  other = await createTenant();
  pending = await createTenant({ status: 'pending_approval' });
  // email-domain resolution: a tenant whose slug is a registrable domain label
  domain = unique('dom');
  domainTenant = await createTenant({ slug: domain });
});
afterAll(async () => {
  await t.close();
  await closeOwnerConnection();
});

const get = (token: string, header?: string) => {
  const r = request(t.app).get('/api/tenant').set('Authorization', `Bearer ${token}`);
  return header === undefined ? r : r.set('X-Tenant', header);
};

describe('each claim strategy resolves and provisions the caller as a member', () => {
  it.each([
    ['tenant', 'tenant_claim'],
    ['org', 'organization_claim'],
    ['organization', 'organization_claim'],
    ['org_slug', 'organization_claim'],
    ['org_name', 'organization_claim'],
    ['namespace', 'namespace_claim'],
    ['group', 'namespace_claim'],
    ['team', 'namespace_claim'],
    ['workspace', 'namespace_claim'],
    ['https://example.com/tenant', 'custom_claim'],
  ])('%s', async (claim, source) => {
    const sub = unique('c');
    const r = await get(tokenFor({ sub, claims: { [claim]: acme.slug } })).expect(200);
    expect(r.body.tenant.slug).toBe(acme.slug);
    expect(r.body.source).toBe(source);
    expect(r.body.membership).toMatchObject({ subject: sub, role: 'member' });
    const rows = await ownerConnection()('users').where({ tenant_id: acme.id, subject: sub });
    expect(rows).toHaveLength(1);
  });

  it('normalizes claim values ("Acme Corp" → acme-corp) and objects (slug, name, id)', async () => {
    const corp = await createTenant({ slug: `${unique('x')}-corp` });
    const name = corp.slug.replace(/-/g, ' ').toUpperCase();
    expect((await get(tokenFor({ claims: { org: name } })).expect(200)).body.tenant.slug).toBe(corp.slug);
    expect((await get(tokenFor({ claims: { organization: { slug: corp.slug, name: 'nope' } } })).expect(200)).body.tenant.slug).toBe(corp.slug);
    expect((await get(tokenFor({ claims: { organization: { name: name } } })).expect(200)).body.tenant.slug).toBe(corp.slug);
    expect((await get(tokenFor({ claims: { organization: { id: corp.slug } } })).expect(200)).body.tenant.slug).toBe(corp.slug);
  });

  it('skips empty values and uses the next source', async () => {
    const r = await get(tokenFor({ claims: { tenant: '', org: '   ', team: acme.slug } })).expect(200);
    expect(r.body.source).toBe('namespace_claim');
  });
});

describe('precedence between sources', () => {
  it.each([
    ['custom over tenant', { 'https://example.com/tenant': 'A', tenant: 'B' }],
    ['tenant over org', { tenant: 'A', org: 'B' }],
    ['org over namespace', { org: 'A', namespace: 'B' }],
    ['namespace over email', { workspace: 'A', email: 'x@b-domain-corp.com' }],
  ])('%s', async (_name, claims) => {
    const swap = (v: unknown) => (v === 'A' ? acme.slug : v === 'B' ? other.slug : v);
    const resolved = Object.fromEntries(Object.entries(claims).map(([k, v]) => [k, swap(v)]));
    const r = await get(tokenFor({ claims: resolved })).expect(200);
    expect(r.body.tenant.slug).toBe(acme.slug);
  });

  it('header over email domain', async () => {
    const user = await createUser(other.id);
    const r = await get(tokenFor({ sub: user.subject, claims: { email: `x@${domain}.com`, email_verified: true } }), other.slug).expect(200);
    expect(r.body.tenant.slug).toBe(other.slug);
    expect(r.body.source).toBe('header');
  });

  it('header + matching claim: allowed', async () => {
    const r = await get(tokenFor({ claims: { tenant: acme.slug } }), acme.slug).expect(200);
    expect(r.body.source).toBe('tenant_claim');
  });

  it('header + different claim: 403 Access denied naming both', async () => {
    const r = await get(tokenFor({ claims: { org: acme.slug } }), other.slug).expect(403);
    expect(r.body.error).toBe('Access denied');
    expect(r.body.detail).toContain(acme.slug);
    expect(r.body.detail).toContain(other.slug);
  });
});

describe('email domain', () => {
  it('a@<domain>.com → <domain>, for an existing member', async () => {
    const user = await createUser(domainTenant.id, { email: `a@${domain}.com` });
    const r = await get(tokenFor({ sub: user.subject, claims: { email: `a@${domain}.com`, email_verified: true } })).expect(200);
    expect(r.body).toMatchObject({ source: 'email_domain', tenant: { slug: domain } });
  });
  it('a@mail.<domain>.co.uk → <domain>', async () => {
    const user = await createUser(domainTenant.id);
    const r = await get(tokenFor({ sub: user.subject, claims: { email: `a@mail.${domain}.co.uk`, email_verified: true } })).expect(200);
    expect(r.body.tenant.slug).toBe(domain);
  });
  it('the email domain alone does not grant membership', async () => {
    const r = await get(tokenFor({ claims: { email: `new@${domain}.com`, email_verified: true } })).expect(403);
    expect(r.body.error).toBe('Access denied');
  });
  it('gmail.com is skipped → Missing X-Tenant header', async () => {
    const r = await get(tokenFor({ claims: { email: 'someone@gmail.com', email_verified: true } })).expect(400);
    expect(r.body).toMatchObject({ error: 'Missing X-Tenant header', multi_tenant_mode: true });
  });
  it('an unverified email is skipped', async () => {
    const user = await createUser(domainTenant.id);
    const r = await get(tokenFor({ sub: user.subject, claims: { email: `a@${domain}.com`, email_verified: false } })).expect(400);
    expect(r.body.error).toBe('Missing X-Tenant header');
  });
});

describe('header only', () => {
  it('member via header: 200', async () => {
    const user = await createUser(acme.id, { role: 'admin' });
    const r = await get(tokenFor({ sub: user.subject }), acme.slug).expect(200);
    expect(r.body).toMatchObject({ source: 'header', membership: { user_id: user.id, role: 'admin' } });
  });
  it('non-member via header: 403 Access denied, nothing provisioned', async () => {
    const sub = unique('stranger');
    const r = await get(tokenFor({ sub }), acme.slug).expect(403);
    expect(r.body).toMatchObject({ error: 'Access denied' });
    expect(r.body.detail).toMatch(/does not belong/);
    expect(await ownerConnection()('users').where({ subject: sub })).toEqual([]);
  });
  it('a member of the same subject under another issuer is not a member', async () => {
    const user = await createUser(acme.id, { issuer: 'https://other-idp.example' });
    await get(tokenFor({ sub: user.subject }), acme.slug).expect(403);
  });
  it('platform admin via header without membership: 200 without a membership', async () => {
    const r = await get(tokenFor({ admin: true }), acme.slug).expect(200);
    expect(r.body.membership).toBeUndefined();
  });
  it('malformed header: 400 with provided_tenant', async () => {
    const r = await get(tokenFor(), 'Acme Corp!').expect(400);
    expect(r.body).toMatchObject({ error: 'Invalid X-Tenant header format', provided_tenant: 'Acme Corp!' });
  });
  it('over-long header: 400', async () => {
    const r = await get(tokenFor(), 'a'.repeat(256)).expect(400);
    expect(r.body.error).toBe('Invalid X-Tenant header format');
  });
  it('no source: 400 Missing X-Tenant header with multi_tenant_mode', async () => {
    const r = await get(tokenFor()).expect(400);
    expect(r.body).toMatchObject({ error: 'Missing X-Tenant header', multi_tenant_mode: true });
  });
  it('unknown tenant: 404 naming the slug', async () => {
    const slug = unique('ghost');
    const r = await get(tokenFor(), slug).expect(404);
    expect(r.body.error).toBe('Tenant not found');
    expect(r.body.detail).toContain(slug);
  });
  it('unknown tenant from a claim: 404 and nothing provisioned', async () => {
    const sub = unique('ghosted');
    await get(tokenFor({ sub, claims: { tenant: unique('ghost') } })).expect(404);
    expect(await ownerConnection()('users').where({ subject: sub })).toEqual([]);
  });
  it('pending tenant: 403 Tenant pending approval, even from a claim, nothing provisioned', async () => {
    const sub = unique('early');
    const r = await get(tokenFor({ sub, claims: { tenant: pending.slug } })).expect(403);
    expect(r.body.error).toBe('Tenant pending approval');
    expect(await ownerConnection()('users').where({ subject: sub })).toEqual([]);
    const user = await createUser(pending.id);
    await get(tokenFor({ sub: user.subject }), pending.slug).expect(403);
  });
});

describe('logging', () => {
  it("logs 'Tenant resolved for authenticated request' with tenant_slug, tenant_id, subject and source", async () => {
    const sub = unique('logged');
    const before = t.logs.length;
    await get(tokenFor({ sub, claims: { tenant: acme.slug } })).expect(200);
    const line = t.logs.slice(before).find((l) => l.msg === 'Tenant resolved for authenticated request');
    expect(line).toMatchObject({ tenant_slug: acme.slug, tenant_id: acme.id, subject: sub, source: 'tenant_claim' });
    // no token in any log line
    expect(JSON.stringify(t.logs.slice(before))).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\./);
  });
});

describe('single-tenant mode', () => {
  it('uses the default tenant; claims and header are ignored, a malformed header is still refused', async () => {
    const single = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'false' });
    try {
      const r = await request(single.app).get('/api/tenant').set('Authorization', `Bearer ${tokenFor({ claims: { tenant: acme.slug } })}`).set('X-Tenant', other.slug).expect(200);
      expect(r.body.tenant.slug).toBe('default');
      expect(r.body.source).toBe('single_tenant');
      expect(r.body.membership.role).toBe('member');
      const bad = await request(single.app).get('/api/tenant').set('Authorization', `Bearer ${tokenFor()}`).set('X-Tenant', 'BAD').expect(400);
      expect(bad.body.error).toBe('Invalid X-Tenant header format');
    } finally {
      await single.close();
    }
  });
});
