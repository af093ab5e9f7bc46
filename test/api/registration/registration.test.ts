/**
 * Self-service registration (docs/tenants.md#self-service-registration) against the real pipeline
 * and database: status, the registration result, mode and domain checks, the per-user limit under
 * concurrency, slug choice, validation, metadata safety and the caller's memberships.
 */
import request from 'supertest';
import type { Express } from 'express';
import { startTestApp, type TestApp } from '../../helpers/app';
import { closeOwnerConnection, createTenant, createUser, ownerConnection, tokenFor, unique } from '../../helpers/factories';
import { SYSTEM_PERMISSIONS } from '../../../src/context/permissions';

const FRONTEND = 'https://app.example.com/dash?ref=signup';

let single: TestApp; // default configuration: single-tenant mode
let multi: TestApp; // multi-tenant, frontend URL, custom GraphQL path
let domains: TestApp; // multi-tenant with an allowed-domain list
let limited: TestApp; // multi-tenant with at most 3 tenants per user

beforeAll(async () => {
  single = await startTestApp();
  multi = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_FRONTEND_BASE_URL: FRONTEND, SERVICE_GRAPHQL_PATH: '/gql' });
  domains = await startTestApp({
    SERVICE_MULTI_TENANT_MODE: 'true',
    SERVICE_TENANT_REGISTRATION_ALLOWED_DOMAINS: 'acme-corp.test, Example.ORG',
  });
  limited = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_MAX_TENANTS_PER_USER: '3' }, { poolMax: 10 });
});
afterAll(async () => {
  await Promise.all([single, multi, domains, limited].map((t) => t?.close()));
  await closeOwnerConnection();
});

function register(app: Express, token: string, body: unknown) {
  return request(app).post('/api/tenants/register').set('Authorization', `Bearer ${token}`).send(body as object);
}

/** A caller with a fresh subject and an email at a non-public domain. */
function caller(opts: { email?: string | null; name?: string } = {}): { sub: string; token: string } {
  const sub = unique('reg');
  const email = opts.email === undefined ? `${sub}@acme-corp.test` : opts.email;
  return { sub, token: tokenFor({ sub, ...(email !== null ? { email } : {}), ...(opts.name ? { name: opts.name } : {}) }) };
}

async function tenantsRegisteredBy(sub: string): Promise<Array<{ id: string; slug: string }>> {
  return ownerConnection()('tenants').where({ created_by_subject: sub }).select('id', 'slug').orderBy('created_at');
}

describe('GET /api/tenants/registration/status', () => {
  it('reports registration disabled in single-tenant mode', async () => {
    const r = await request(single.app).get('/api/tenants/registration/status').set('Authorization', `Bearer ${caller().token}`).expect(200);
    expect(r.body).toEqual({ enabled: false, requires_approval: false, max_tenants_per_user: null, allowed_domains: null });
  });

  it('reports the configured limit and domains', async () => {
    const l = await request(limited.app).get('/api/tenants/registration/status').set('Authorization', `Bearer ${caller().token}`).expect(200);
    expect(l.body).toEqual({ enabled: true, requires_approval: false, max_tenants_per_user: 3, allowed_domains: null });
    const d = await request(domains.app).get('/api/tenants/registration/status').set('Authorization', `Bearer ${caller().token}`).expect(200);
    expect(d.body.allowed_domains).toEqual(['acme-corp.test', 'example.org']);
  });

  it('needs a token', async () => {
    await request(multi.app).get('/api/tenants/registration/status').expect(401);
  });
});

describe('POST /api/tenants/register', () => {
  it('creates the tenant with the caller as admin and sample data, and reports how to use it', async () => {
    const { sub, token } = caller();
    const name = `Acme Corporation ${unique('n')}`;
    const slug = unique('acme-corp');
    const r = await register(multi.app, token, {
      organization_name: name,
      organization_slug: slug,
      admin_email: 'ann@acme-corp.test',
      admin_name: 'Ann Admin',
      use_case: 'Content generation for the marketing team',
      organization_size: 'medium',
      metadata: { source: 'website', nested: { a: [1, 2] } },
    });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      tenant_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      organization_name: name,
      tenant_slug: slug,
      status: 'active',
      admin_instructions: expect.stringContaining(`X-Tenant: ${slug}`),
      dashboard_url: `https://app.example.com/dash?ref=signup&tenant=${slug}`,
      api_access: { tenant_header: `X-Tenant: ${slug}`, graphql_endpoint: '/gql', api_base_url: '/api', authentication_required: true },
    });
    expect(r.body.admin_instructions).not.toMatch(/approval/);

    const db = ownerConnection();
    const tenant = await db('tenants').where({ id: r.body.tenant_id }).first();
    expect(tenant).toMatchObject({
      name,
      slug,
      status: 'active',
      is_default: false,
      created_by_subject: sub,
      settings: { admin_email: 'ann@acme-corp.test' },
      registration: {
        admin_email: 'ann@acme-corp.test',
        admin_name: 'Ann Admin',
        use_case: 'Content generation for the marketing team',
        organization_size: 'medium',
        metadata: { source: 'website', nested: { a: [1, 2] } },
      },
    });
    const users = await db('users').where({ tenant_id: tenant.id });
    expect(users).toHaveLength(1);
    expect(users[0]).toMatchObject({ subject: sub, role: 'admin', email: 'ann@acme-corp.test', display_name: 'Ann Admin' });
    expect(users[0].issuer).toBe(tenant.created_by_issuer);
    // include_sample_data defaults to true here: two boards, owned by the new admin.
    const boards = await db('boards').where({ tenant_id: tenant.id });
    expect(boards).toHaveLength(2);
    expect(boards.every((b: { created_by: string }) => b.created_by === users[0].id)).toBe(true);
    expect(await db('credit_transactions').where({ tenant_id: tenant.id })).toHaveLength(1);

    const log = multi.logs.find((l) => l.msg === 'Tenant registered' && l.tenant_id === r.body.tenant_id);
    expect(log).toMatchObject({ tenant_slug: slug, subject: sub, status: 'active' });
  });

  it('creates no sample data when include_sample_data is false, and names the admin from the token', async () => {
    const { sub, token } = caller({ name: 'Token Name' });
    const r = await register(multi.app, token, { organization_name: 'Bare Org', admin_email: `${sub}@acme-corp.test`, include_sample_data: false }).expect(201);
    const db = ownerConnection();
    expect(await db('boards').where({ tenant_id: r.body.tenant_id })).toHaveLength(0);
    expect(await db('users').where({ tenant_id: r.body.tenant_id }).first()).toMatchObject({ role: 'admin', display_name: 'Token Name' });
  });

  it('has a null dashboard_url without SERVICE_FRONTEND_BASE_URL, and the default GraphQL path', async () => {
    const { token } = caller();
    const r = await register(domains.app, token, { organization_name: 'No Frontend', admin_email: 'ops@acme-corp.test', include_sample_data: false }).expect(201);
    expect(r.body.dashboard_url).toBeNull();
    expect(r.body.api_access.graphql_endpoint).toBe('/graphql');
  });

  it('is 403 Registration disabled outside multi-tenant mode, creating nothing', async () => {
    const { sub, token } = caller();
    const r = await register(single.app, token, { organization_name: 'Nope', admin_email: 'a@acme-corp.test' }).expect(403);
    expect(r.body.error).toBe('Registration disabled');
    expect(r.body.detail).toMatch(/only available in multi-tenant mode/);
    expect(await tenantsRegisteredBy(sub)).toHaveLength(0);
  });

  it('needs a token', async () => {
    await request(multi.app).post('/api/tenants/register').send({ organization_name: 'X', admin_email: 'a@acme-corp.test' }).expect(401);
  });

  describe('allowed domains', () => {
    it('admits a listed domain, case-insensitively', async () => {
      const { token } = caller({ email: `${unique('u')}@Acme-Corp.TEST` });
      await register(domains.app, token, { organization_name: 'Listed', admin_email: 'Ann@ACME-Corp.Test', include_sample_data: false }).expect(201);
      const other = caller({ email: `${unique('u')}@EXAMPLE.org` });
      await register(domains.app, other.token, { organization_name: 'Listed 2', admin_email: 'bob@example.org', include_sample_data: false }).expect(201);
    });

    it('refuses an unlisted admin_email domain, naming it', async () => {
      const { sub, token } = caller();
      const r = await register(domains.app, token, { organization_name: 'Unlisted', admin_email: 'eve@evil.test' }).expect(403);
      expect(r.body.error).toBe('Domain not allowed');
      expect(r.body.detail).toContain("'evil.test'");
      expect(await tenantsRegisteredBy(sub)).toHaveLength(0);
    });

    it('does not admit subdomains of a listed domain', async () => {
      const { sub, token } = caller();
      const r = await register(domains.app, token, { organization_name: 'Sub', admin_email: 'eve@eu.acme-corp.test' }).expect(403);
      expect(r.body).toMatchObject({ error: 'Domain not allowed' });
      expect(r.body.detail).toContain("'eu.acme-corp.test'");
      expect(await tenantsRegisteredBy(sub)).toHaveLength(0);
    });

    it.each([
      ['no email claim', {}],
      ['email_verified false', { email_verified: false }],
      ['email_verified "FALSE"', { email_verified: 'FALSE' }],
      ['email_verified 0', { email_verified: 0 }],
      ['email_verified absent', { email_verified: undefined }],
    ])("needs the token's own verified email on the list (%s), whatever admin_email says", async (what, extra) => {
      const sub = unique('reg');
      const claims: Record<string, unknown> = what === 'no email claim' ? {} : { email: `${sub}@acme-corp.test`, ...extra };
      if (claims.email_verified === undefined) delete claims.email_verified;
      const token = tokenFor({ sub, claims });
      const r = await register(domains.app, token, { organization_name: 'Unverified', admin_email: 'ann@acme-corp.test' }).expect(403);
      expect(r.body.error).toBe('Domain not allowed');
      expect(r.body.detail).toMatch(/no (verified )?email/);
      expect(await tenantsRegisteredBy(sub)).toHaveLength(0);
    });

    it.each([
      ['no email claim', {}],
      ['an unverified email', { email: 'eve@acme-corp.test', email_verified: false }],
      ['an unlisted email', { email: 'eve@gmail.com', email_verified: true }],
    ])('checks admin_email first: its unlisted domain is named even when the token has %s', async (_what, claims) => {
      const sub = unique('reg');
      const r = await register(domains.app, tokenFor({ sub, claims }), { organization_name: 'Outside', admin_email: 'eve@outside.test' }).expect(403);
      expect(r.body.error).toBe('Domain not allowed');
      expect(r.body.detail).toContain("'outside.test'");
      expect(r.body.detail).toContain('admin_email');
      expect(await tenantsRegisteredBy(sub)).toHaveLength(0);
    });

    it("checks the token's email claim too", async () => {
      const { sub, token } = caller({ email: 'mallory@gmail.com' });
      const r = await register(domains.app, token, { organization_name: 'Claim', admin_email: 'ann@acme-corp.test' }).expect(403);
      expect(r.body.error).toBe('Domain not allowed');
      expect(r.body.detail).toContain("'gmail.com'");
      expect(await tenantsRegisteredBy(sub)).toHaveLength(0);
    });
  });

  describe('SERVICE_MAX_TENANTS_PER_USER', () => {
    it('10 parallel registrations by one user with a limit of 3 create exactly 3 tenants', async () => {
      const { sub, token } = caller();
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          register(limited.app, token, { organization_name: `Parallel ${sub} ${i}`, admin_email: 'p@acme-corp.test', include_sample_data: false }),
        ),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([201, 201, 201, 403, 403, 403, 403, 403, 403, 403]);
      for (const r of results.filter((x) => x.status === 403)) {
        expect(r.body.error).toBe('Tenant limit reached');
        expect(r.body.detail).toMatch(/limit is 3/);
      }
      expect(await tenantsRegisteredBy(sub)).toHaveLength(3);
    });

    it('counts per user, and a deleted tenant frees its place', async () => {
      const a = caller();
      for (let i = 0; i < 3; i++) {
        await register(limited.app, a.token, { organization_name: `Seq ${i}`, admin_email: 'a@acme-corp.test', include_sample_data: false }).expect(201);
      }
      await register(limited.app, a.token, { organization_name: 'Seq 4', admin_email: 'a@acme-corp.test' }).expect(403);
      // Another caller is not affected by a's tenants.
      const b = caller();
      await register(limited.app, b.token, { organization_name: 'Other user', admin_email: 'b@acme-corp.test', include_sample_data: false }).expect(201);
      const [first] = await tenantsRegisteredBy(a.sub);
      await ownerConnection()('tenants').where({ id: first!.id }).delete();
      await register(limited.app, a.token, { organization_name: 'Seq 5', admin_email: 'a@acme-corp.test', include_sample_data: false }).expect(201);
      expect(await tenantsRegisteredBy(a.sub)).toHaveLength(3);
    });

    it('a membership the caller did not register does not count', async () => {
      const a = caller();
      for (let i = 0; i < 2; i++) {
        const other = await createTenant();
        await createUser(other.id, { subject: a.sub, role: 'admin' });
      }
      for (let i = 0; i < 3; i++) {
        await register(limited.app, a.token, { organization_name: `Own ${i}`, admin_email: 'a@acme-corp.test', include_sample_data: false }).expect(201);
      }
    });
  });

  describe('slugs', () => {
    it('409 Conflict naming an organization_slug that is taken, creating nothing', async () => {
      const existing = await createTenant();
      const { sub, token } = caller();
      const r = await register(multi.app, token, { organization_name: 'Dup', organization_slug: existing.slug, admin_email: 'a@acme-corp.test' }).expect(409);
      expect(r.body.error).toBe('Conflict');
      expect(r.body.detail).toContain(`'${existing.slug}'`);
      expect(await tenantsRegisteredBy(sub)).toHaveLength(0);
    });

    it('generates the slug from the name and appends -2, -3… while taken', async () => {
      const name = `  Überflow Studios ${unique('x')}!  `;
      const base = name.trim().toLowerCase().replace('ü', 'u').replace(/[^a-z0-9]+/g, '-').replace(/-+$/, '');
      // A tenant that already holds `<base>-2` is skipped over, not collided with.
      await createTenant({ slug: `${base}-2` });
      const slugs: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await register(multi.app, caller().token, { organization_name: name, admin_email: 'a@acme-corp.test', include_sample_data: false }).expect(201);
        expect(r.body.organization_name).toBe(name.trim());
        slugs.push(r.body.tenant_slug);
      }
      expect(slugs).toEqual([base, `${base}-3`, `${base}-4`]);
    });

    it('gives concurrent registrations of one name distinct slugs', async () => {
      const name = `Race Corp ${unique('r')}`;
      const results = await Promise.all(
        Array.from({ length: 6 }, () =>
          register(multi.app, caller().token, { organization_name: name, admin_email: 'a@acme-corp.test', include_sample_data: false }),
        ),
      );
      expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201, 201, 201]);
      const base = name.toLowerCase().replace(/[^a-z0-9]+/g, '-');
      expect(results.map((r) => r.body.tenant_slug).sort()).toEqual([base, `${base}-2`, `${base}-3`, `${base}-4`, `${base}-5`, `${base}-6`].sort());
    });

    it('keeps generated slugs within 63 characters, suffix included', async () => {
      const name = `${unique('long')} ${'word '.repeat(40)}`;
      const first = await register(multi.app, caller().token, { organization_name: name, admin_email: 'a@acme-corp.test', include_sample_data: false }).expect(201);
      const second = await register(multi.app, caller().token, { organization_name: name, admin_email: 'a@acme-corp.test', include_sample_data: false }).expect(201);
      expect(first.body.tenant_slug.length).toBeLessThanOrEqual(63);
      expect(second.body.tenant_slug.length).toBeLessThanOrEqual(63);
      expect(second.body.tenant_slug).toMatch(/-2$/);
      expect(second.body.tenant_slug.slice(0, -2)).toBe(first.body.tenant_slug.slice(0, second.body.tenant_slug.length - 2));
    });

    it('gives a name with nothing usable an org-<random> slug', async () => {
      const r = await register(multi.app, caller().token, { organization_name: '🚀✨🚀', admin_email: 'a@acme-corp.test', include_sample_data: false }).expect(201);
      expect(r.body.tenant_slug).toMatch(/^org-[0-9a-f]{8}$/);
      expect(r.body.organization_name).toBe('🚀✨🚀');
    });
  });

  describe('validation', () => {
    const valid = { organization_name: 'Valid Org', admin_email: 'a@acme-corp.test' };
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['missing organization_name', { admin_email: 'a@acme-corp.test' }, /organization_name/],
      ['empty organization_name', { ...valid, organization_name: '' }, /organization_name/],
      ['blank organization_name', { ...valid, organization_name: '   ' }, /organization_name/],
      ['organization_name over 255', { ...valid, organization_name: 'n'.repeat(256) }, /organization_name/],
      ['missing admin_email', { organization_name: 'Valid Org' }, /admin_email/],
      ['malformed admin_email', { ...valid, admin_email: 'not-an-email' }, /admin_email/],
      ['use_case over 500', { ...valid, use_case: 'u'.repeat(501) }, /use_case/],
      ['organization_size outside the enum', { ...valid, organization_size: 'huge' }, /organization_size/],
      ['metadata not an object', { ...valid, metadata: 'vip' }, /metadata/],
      ['metadata an array', { ...valid, metadata: ['a'] }, /metadata/],
      ['malformed organization_slug', { ...valid, organization_slug: 'Bad_Slug' }, /organization_slug/],
      ['unknown field', { ...valid, billing_plan: 'gold' }, /billing_plan/],
    ];
    it.each(cases)('%s → 400 Validation error naming the field, nothing created', async (_label, body, field) => {
      const { sub, token } = caller();
      const r = await register(multi.app, token, body).expect(400);
      expect(r.body.error).toBe('Validation error');
      expect(r.body.detail).toMatch(field);
      expect(await tenantsRegisteredBy(sub)).toHaveLength(0);
    });

    it('accepts use_case of exactly 500 and a name of exactly 255 characters', async () => {
      await register(multi.app, caller().token, { ...valid, organization_name: 'n'.repeat(255), use_case: 'u'.repeat(500), include_sample_data: false }).expect(201);
    });
  });

  it('stores __proto__ and constructor keys of metadata as plain data, polluting nothing', async () => {
    const { sub, token } = caller();
    const raw = JSON.stringify({ organization_name: 'Proto Org', admin_email: 'a@acme-corp.test', include_sample_data: false }).replace(
      /}$/,
      ',"metadata":{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"toString":"x"}}',
    );
    const r = await request(multi.app)
      .post('/api/tenants/register')
      .set('Authorization', `Bearer ${token}`)
      .set('Content-Type', 'application/json')
      .send(raw)
      .expect(201);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).toBe(false);
    const row = await ownerConnection()('tenants')
      .where({ id: r.body.tenant_id })
      .first(
        ownerConnection().raw("registration->'metadata'->'__proto__'->>'polluted' as proto"),
        ownerConnection().raw("registration->'metadata'->'constructor'->'prototype'->>'polluted' as ctor"),
        ownerConnection().raw("registration->'metadata'->>'toString' as to_string"),
      );
    expect(row).toEqual({ proto: 'yes', ctor: 'yes', to_string: 'x' });
    expect(await tenantsRegisteredBy(sub)).toHaveLength(1);
  });
});

describe('GET /api/tenants/mine', () => {
  it('is empty for a caller with no memberships', async () => {
    const r = await request(multi.app).get('/api/tenants/mine').set('Authorization', `Bearer ${caller().token}`).expect(200);
    expect(r.body).toEqual({ tenants: [] });
  });

  it("lists the caller's memberships across tenants with the role, and nobody else's", async () => {
    const { sub, token } = caller();
    const memberOf = await createTenant({ status: 'pending_approval' });
    await createUser(memberOf.id, { subject: sub, role: 'member' });
    const someoneElses = await createTenant();
    await createUser(someoneElses.id, { subject: unique('other'), role: 'admin' });
    // Same subject at another issuer is another identity.
    const otherIssuer = await createTenant();
    await createUser(otherIssuer.id, { subject: sub, issuer: 'https://other-idp.test', role: 'admin' });

    const reg = await register(multi.app, token, { organization_name: 'Mine', admin_email: 'a@acme-corp.test', include_sample_data: false }).expect(201);
    const r = await request(multi.app).get('/api/tenants/mine').set('Authorization', `Bearer ${token}`).expect(200);
    expect(r.body.tenants).toEqual([
      { tenant_id: memberOf.id, name: memberOf.name, slug: memberOf.slug, status: 'pending_approval', role: 'member', permissions: ['tenant:members:read'], joined_at: expect.any(String) },
      { tenant_id: reg.body.tenant_id, name: 'Mine', slug: reg.body.tenant_slug, status: 'active', role: 'admin', permissions: [...SYSTEM_PERMISSIONS], joined_at: expect.any(String) },
    ]);
  });

  it('works in single-tenant mode too', async () => {
    await request(single.app).get('/api/tenants/mine').set('Authorization', `Bearer ${caller().token}`).expect(200, { tenants: [] });
  });
});
