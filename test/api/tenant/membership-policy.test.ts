/**
 * Who may join a tenant (docs/tenants.md#membership), against the running API: the two
 * attacks of the issue (slug squatting, default-tenant takeover) refused, reserved and retired
 * slugs, and an identity-provider-driven deployment that still provisions from claims.
 */
import knexFactory, { type Knex } from 'knex';
import pino from 'pino';
import request from 'supertest';
import type { Express } from 'express';
import { LOCAL_ISSUER } from '../../../src/auth/local-keys';
import { migrate } from '../../../src/db/database';
import * as m001 from '../../../src/db/migrations/001-schema';
import * as m002 from '../../../src/db/migrations/002-foreign-key-indexes';
import * as m003 from '../../../src/db/migrations/003-tenant-search-index';
import * as m004 from '../../../src/db/migrations/004-membership';
import { startTestApp, type TestApp } from '../../helpers/app';
import { admin as adminClient, createFreshDatabase, type FreshDatabase } from '../../helpers/fresh-database';
import { ADMIN_URL } from '../../setup/global-setup';
import { adminToken, closeOwnerConnection, ownerConnection, tokenFor, unique } from '../../helpers/factories';

let multi: TestApp;
let noRetirement: TestApp;
const admin = () => `Bearer ${adminToken()}`;

beforeAll(async () => {
  multi = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_RESERVED_SLUGS: 'admin,api,billing' });
  noRetirement = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_SLUG_RETIREMENT_DAYS: '0' });
});
afterAll(async () => {
  await Promise.all([multi, noRetirement].map((a) => a?.close()));
  await closeOwnerConnection();
});

function register(app: Express, token: string, body: Record<string, unknown>) {
  return request(app).post('/api/tenants/register').set('Authorization', `Bearer ${token}`).send(body);
}

async function createByAdmin(app: Express, body: Record<string, unknown>) {
  const r = await request(app).post('/api/setup/tenant').set('Authorization', admin()).send(body).expect(201);
  return r.body as { tenant_id: string; slug: string };
}

async function membersOf(tenantId: string): Promise<Array<{ subject: string; role: string }>> {
  return ownerConnection()('users').where({ tenant_id: tenantId }).select('subject', 'role').orderBy('created_at');
}

describe('membership_policy in the Tenant object', () => {
  it('admin-created tenants provision from claims by default; registered ones do not; update changes it', async () => {
    const slug = unique('pol');
    const created = await createByAdmin(multi.app, { name: 'Policy', slug });
    const got = await request(multi.app).get(`/api/setup/tenant/${created.tenant_id}`).set('Authorization', admin()).expect(200);
    expect(got.body.membership_policy).toEqual({ provision_from_claims: true, claims_issuer: null });

    const withPolicy = await createByAdmin(multi.app, {
      name: 'Policy 2',
      slug: unique('pol'),
      membership_policy: { provision_from_claims: false },
    });
    const got2 = await request(multi.app).get(`/api/setup/tenant/${withPolicy.tenant_id}`).set('Authorization', admin()).expect(200);
    expect(got2.body.membership_policy).toEqual({ provision_from_claims: false, claims_issuer: null });

    const sub = unique('reg');
    const reg = await register(multi.app, tokenFor({ sub }), { organization_name: 'Registered Co', admin_email: `${sub}@acme.test` }).expect(201);
    const got3 = await request(multi.app).get(`/api/setup/tenant/${reg.body.tenant_id}`).set('Authorization', admin()).expect(200);
    expect(got3.body.membership_policy).toEqual({ provision_from_claims: false, claims_issuer: null });

    const put = await request(multi.app)
      .put(`/api/setup/tenant/${reg.body.tenant_id}`)
      .set('Authorization', admin())
      .send({ membership_policy: { provision_from_claims: true, claims_issuer: 'https://idp.example.com' } })
      .expect(200);
    expect(put.body.membership_policy).toEqual({ provision_from_claims: true, claims_issuer: 'https://idp.example.com' });
    const cleared = await request(multi.app)
      .put(`/api/setup/tenant/${reg.body.tenant_id}`)
      .set('Authorization', admin())
      .send({ membership_policy: { claims_issuer: null } })
      .expect(200);
    expect(cleared.body.membership_policy).toEqual({ provision_from_claims: true, claims_issuer: null });
  });

  it('refuses a malformed policy with 400 and changes nothing', async () => {
    const created = await createByAdmin(multi.app, { name: 'Bad policy', slug: unique('pol') });
    for (const membership_policy of [{}, { provision_from_claims: 'yes' }, { claims_issuer: '' }, { other: true }]) {
      const r = await request(multi.app).put(`/api/setup/tenant/${created.tenant_id}`).set('Authorization', admin()).send({ membership_policy }).expect(400);
      expect(r.body.error).toBe('Validation error');
    }
    const row = await ownerConnection()('tenants').where({ id: created.tenant_id }).first('provision_from_claims', 'claims_issuer');
    expect(row).toEqual({ provision_from_claims: true, claims_issuer: null });
  });

  it('is only for platform admins', async () => {
    const created = await createByAdmin(multi.app, { name: 'Mine', slug: unique('pol') });
    await request(multi.app)
      .put(`/api/setup/tenant/${created.tenant_id}`)
      .set('Authorization', `Bearer ${tokenFor()}`)
      .send({ membership_policy: { provision_from_claims: false } })
      .expect(403);
  });
});

describe('attack 1: slug squatting', () => {
  it('a deleted tenant’s slug cannot be registered, and its former members are never provisioned into a squatter’s tenant', async () => {
    const slug = unique('globex');
    const globex = await createByAdmin(multi.app, { name: 'Globex', slug });
    // A former member, provisioned from the identity provider's claim.
    const formerSub = unique('former');
    const former = tokenFor({ sub: formerSub, claims: { tenant: slug.toUpperCase() } });
    await request(multi.app).get('/api/tenant').set('Authorization', `Bearer ${former}`).expect(200);
    expect(await membersOf(globex.tenant_id)).toHaveLength(1);

    await request(multi.app).delete(`/api/setup/tenant/${globex.tenant_id}`).set('Authorization', admin()).expect(200);

    // The attacker's token names no tenant; registering the retired slug is refused.
    const attackerSub = unique('attacker');
    const attacker = tokenFor({ sub: attackerSub });
    const r = await register(multi.app, attacker, { organization_name: 'Globex', organization_slug: slug, admin_email: 'evil@evil.test' }).expect(409);
    expect(r.body.error).toBe('Conflict');
    expect(r.body.detail).toMatch(/reserved/);
    expect(r.body.detail).toMatch(/deleted or renamed within the last 90 days/);
    expect(await ownerConnection()('tenants').where({ slug }).first()).toBeUndefined();

    // Generated slugs skip it too.
    const gen = await register(multi.app, tokenFor(), { organization_name: slug, admin_email: 'a@acme.test', include_sample_data: false }).expect(201);
    expect(gen.body.tenant_slug).toBe(`${slug}-2`);

    // A platform admin may still take it deliberately.
    await createByAdmin(multi.app, { name: 'Globex again', slug });
  });

  it('even when the slug is free (no retirement), a squatter’s tenant never gains a member it did not invite', async () => {
    const slug = unique('globex');
    const globex = await createByAdmin(noRetirement.app, { name: 'Globex', slug });
    const formerSub = unique('former');
    const former = tokenFor({ sub: formerSub, claims: { tenant: 'Globex', org_slug: slug } });
    const formerTenantOnly = tokenFor({ sub: formerSub, claims: { tenant: slug } });
    await request(noRetirement.app).get('/api/tenant').set('Authorization', `Bearer ${formerTenantOnly}`).expect(200);
    await request(noRetirement.app).delete(`/api/setup/tenant/${globex.tenant_id}`).set('Authorization', admin()).expect(200);

    const attackerSub = unique('attacker');
    const attacker = tokenFor({ sub: attackerSub });
    const reg = await register(noRetirement.app, attacker, { organization_name: 'Globex', organization_slug: slug, admin_email: 'evil@evil.test' }).expect(201);

    // The former member's next requests: refused, and no membership appears.
    const g = await request(noRetirement.app).get('/api/tenant').set('Authorization', `Bearer ${formerTenantOnly}`).expect(403);
    expect(g.body.error).toBe('Access denied');
    expect(g.body.detail).toMatch(/invitation only/);
    await request(noRetirement.app).post('/api/boards').set('Authorization', `Bearer ${formerTenantOnly}`).send({ name: 'secret plans' }).expect(403);
    void former;
    // The attacker sees only themselves and no board of the former member.
    const members = await request(noRetirement.app).get('/api/tenant/members').set('Authorization', `Bearer ${attacker}`).set('X-Tenant', slug).expect(200);
    expect(members.body.members.map((m: { subject: string }) => m.subject)).toEqual([attackerSub]);
    expect(await membersOf(reg.body.tenant_id)).toEqual([{ subject: attackerSub, role: 'admin' }]);
    const boards = await ownerConnection()('boards').where({ tenant_id: reg.body.tenant_id, name: 'secret plans' });
    expect(boards).toHaveLength(0);
  });

  it('pre-registering an organization’s slug does not capture the users whose identity provider names it', async () => {
    const slug = unique('hooli');
    const attackerSub = unique('attacker');
    const attacker = tokenFor({ sub: attackerSub });
    const reg = await register(multi.app, attacker, { organization_name: 'Hooli', organization_slug: slug, admin_email: 'evil@evil.test' }).expect(201);
    const victim = tokenFor({ claims: { org_name: slug.replace(/-/g, ' ').toUpperCase() } });
    const r = await request(multi.app).get('/api/tenant').set('Authorization', `Bearer ${victim}`).expect(403);
    expect(r.body.error).toBe('Access denied');
    await request(multi.app).post('/api/boards').set('Authorization', `Bearer ${victim}`).send({ name: 'roadmap' }).expect(403);
    expect(await membersOf(reg.body.tenant_id)).toEqual([{ subject: attackerSub, role: 'admin' }]);
  });
});

describe('reserved slugs', () => {
  it.each(['admin', 'billing', 'default'])('refuses to register %s with 409 naming why', async (slug) => {
    const sub = unique('reg');
    const r = await register(multi.app, tokenFor({ sub }), { organization_name: 'Reserved', organization_slug: slug, admin_email: 'a@acme.test' }).expect(409);
    expect(r.body).toMatchObject({ error: 'Conflict' });
    expect(r.body.detail).toContain(`'${slug}' is reserved`);
    expect(await ownerConnection()('tenants').where({ created_by_subject: sub })).toHaveLength(0);
  });

  it('generated slugs skip reserved ones', async () => {
    const r = await register(multi.app, tokenFor(), { organization_name: 'Billing', admin_email: 'a@acme.test', include_sample_data: false }).expect(201);
    expect(r.body.tenant_slug).not.toBe('billing');
    expect(r.body.tenant_slug).toMatch(/^billing-\d+$/);
  });

  it('a renamed tenant’s old slug is retired too', async () => {
    const slug = unique('ren');
    const t = await createByAdmin(multi.app, { name: 'Rename me', slug });
    await request(multi.app).put(`/api/setup/tenant/${t.tenant_id}`).set('Authorization', admin()).send({ slug: `${slug}-new` }).expect(200);
    const r = await register(multi.app, tokenFor(), { organization_name: 'Old name', organization_slug: slug, admin_email: 'a@acme.test' }).expect(409);
    expect(r.body.detail).toMatch(/reserved/);
  });
});

describe('a legitimate identity-provider-driven deployment', () => {
  it('an admin-created tenant provisions callers from claims; with claims_issuer only that issuer’s', async () => {
    const slug = unique('idp');
    const t = await createByAdmin(multi.app, { name: 'IdP Co', slug });
    const first = tokenFor({ claims: { org: { slug } } });
    const r = await request(multi.app).get('/api/tenant').set('Authorization', `Bearer ${first}`).expect(200);
    expect(r.body.membership.role).toBe('member');
    expect(r.body.tenant.membership_policy).toEqual({ provision_from_claims: true, claims_issuer: null });

    await request(multi.app)
      .put(`/api/setup/tenant/${t.tenant_id}`)
      .set('Authorization', admin())
      .send({ membership_policy: { claims_issuer: 'https://other-idp.example.com' } })
      .expect(200);
    const second = tokenFor({ claims: { tenant: slug } });
    const refused = await request(multi.app).get('/api/tenant').set('Authorization', `Bearer ${second}`).expect(403);
    expect(refused.body.detail).toMatch(/another identity provider/);
    // Existing members keep working.
    await request(multi.app).get('/api/tenant').set('Authorization', `Bearer ${first}`).expect(200);

    await request(multi.app).put(`/api/setup/tenant/${t.tenant_id}`).set('Authorization', admin()).send({ membership_policy: { claims_issuer: LOCAL_ISSUER } }).expect(200);
    await request(multi.app).get('/api/tenant').set('Authorization', `Bearer ${second}`).expect(200);
    expect(await membersOf(t.tenant_id)).toHaveLength(2);
  });

  it('the header never provisions, even where claims do', async () => {
    const slug = unique('idp');
    const t = await createByAdmin(multi.app, { name: 'Header Co', slug });
    await request(multi.app).get('/api/tenant').set('Authorization', `Bearer ${tokenFor()}`).set('X-Tenant', slug).expect(403);
    expect(await membersOf(t.tenant_id)).toHaveLength(0);
  });
});

describe('attack 2: the default tenant is never replaced (own database)', () => {
  let fresh: FreshDatabase;
  let owner: Knex;
  beforeAll(async () => {
    fresh = await createFreshDatabase('tenant_service_default');
    owner = knexFactory({ client: 'pg', connection: fresh.url, pool: { min: 0, max: 1 } });
  });
  afterAll(async () => {
    await owner?.destroy();
    await fresh?.drop();
  });

  it('a squatter holding the default slug is not adopted at boot; setup status says so; single-tenant callers are not provisioned into it', async () => {
    const m = await startTestApp({ SERVICE_DATABASE_URL: fresh.url, SERVICE_MULTI_TENANT_MODE: 'true' });
    try {
      const def = await owner('tenants').where({ is_default: true }).first('id');
      await request(m.app).delete(`/api/setup/tenant/${def.id}`).set('Authorization', admin()).expect(200);
      // Registration cannot take it (reserved)…
      const squatterSub = unique('squatter');
      const squatter = tokenFor({ sub: squatterSub });
      const r = await register(m.app, squatter, { organization_name: 'Default', organization_slug: 'default', admin_email: 'evil@evil.test' }).expect(409);
      expect(r.body.detail).toMatch(/reserved/);
    } finally {
      await m.close();
    }
    // …but suppose it was taken anyway (say, before this release): the next boot adopts nothing.
    const [taken] = await owner('tenants').insert({ name: 'Squatter', slug: 'default', created_by_issuer: LOCAL_ISSUER, created_by_subject: 'squatter' }).returning('id');
    const lines: Array<Record<string, unknown>> = [];
    const log = pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s) as Record<string, unknown>) });
    await migrate(fresh.url, 'default', log);
    expect(await owner('tenants').where({ is_default: true })).toHaveLength(0);
    expect(await owner('tenants').where({ slug: 'default' }).first('id', 'is_default')).toEqual({ id: (taken as { id: string }).id, is_default: false });
    expect(lines.some((l) => l.level === 50 && String(l.msg).includes('not adopting'))).toBe(true);

    const single = await startTestApp({ SERVICE_DATABASE_URL: fresh.url });
    try {
      const s = await request(single.app).get('/api/setup/status').set('Authorization', admin()).expect(200);
      expect(s.body.setup_needed).toBe(true);
      expect(s.body.has_default_tenant).toBe(false);
      expect(s.body.recommendations.join(' ')).toMatch(/another tenant holds its slug 'default'/);
      const u = await request(single.app).get('/api/tenant').set('Authorization', `Bearer ${tokenFor()}`).expect(503);
      expect(u.body.error).toBe('Service unavailable');
      expect(await owner('users').where({ tenant_id: (taken as { id: string }).id })).toHaveLength(0);
    } finally {
      await single.close();
    }
  });
});

describe('migration 004 on existing tenants (own database)', () => {
  it('keeps claim provisioning for existing tenants except self-registered ones', async () => {
    // A database migrated only to 003, with tenants made before this release.
    const name = `tenant_service_m004_${Date.now()}`;
    await adminClient((c) => c.query(`create database ${name}`));
    const url = new URL(ADMIN_URL);
    url.pathname = `/${name}`;
    const k = knexFactory({ client: 'pg', connection: url.toString(), pool: { min: 1, max: 1 } });
    const source = (mods: Record<string, { up(k: Knex): Promise<void>; down(k: Knex): Promise<void> }>) => ({
      getMigrations: async () => Object.keys(mods),
      getMigrationName: (m: string) => m,
      getMigration: async (m: string) => mods[m]!,
    });
    try {
      const first = { '001-schema': m001, '002-foreign-key-indexes': m002, '003-tenant-search-index': m003 };
      await k.migrate.latest({ migrationSource: source(first) });
      await k('tenants').insert([
        { name: 'Admin made', slug: 'admin-made' },
        { name: 'Registered', slug: 'registered', created_by_issuer: 'iss', created_by_subject: 'sub' },
      ]);
      await k.migrate.latest({ migrationSource: source({ ...first, '004-membership': m004 }) });
      const rows = await k('tenants').select('slug', 'provision_from_claims', 'claims_issuer').orderBy('slug');
      expect(rows).toEqual([
        { slug: 'admin-made', provision_from_claims: true, claims_issuer: null },
        { slug: 'registered', provision_from_claims: false, claims_issuer: null },
      ]);
    } finally {
      await k.destroy();
      await adminClient((c) => c.query(`drop database if exists ${name} with (force)`));
    }
  });
});
