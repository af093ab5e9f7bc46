/**
 * Tenant administration over HTTP: create (with sample data, conflicts, Idempotency-Key), list
 * (keyset pages, q, total_count), get, update, and who may call them.
 */
import request from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { adminToken, closeOwnerConnection, createTenant, ownerConnection, tokenFor, unique } from '../../helpers/factories';

let t: TestApp;
const admin = `Bearer ${adminToken()}`;

beforeAll(async () => {
  t = await startTestApp({}, { poolMax: 10 });
});
afterAll(async () => {
  await t.close();
  await closeOwnerConnection();
});

const TENANT_TABLES = ['users', 'boards', 'board_members', 'generations', 'provider_configs', 'credit_transactions', 'invitations', 'member_removals'] as const;

async function rowCounts(tenantId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of TENANT_TABLES) {
    const [{ n }] = await ownerConnection()(table).where({ tenant_id: tenantId }).count({ n: '*' });
    out[table] = Number(n);
  }
  return out;
}

const uuid = '3f0e9a52-6a0b-4c1e-8f5e-1e2d3c4b5a69';

describe('who may call /api/setup', () => {
  const calls: Array<[string, (r: request.Agent | ReturnType<typeof request>) => request.Test]> = [
    ['GET /api/setup/status', (r) => (r as ReturnType<typeof request>).get('/api/setup/status')],
    ['POST /api/setup/tenant', (r) => (r as ReturnType<typeof request>).post('/api/setup/tenant').send({ name: 'x', slug: unique('nope') })],
    ['GET /api/setup/tenants', (r) => (r as ReturnType<typeof request>).get('/api/setup/tenants')],
    ['GET /api/setup/tenant/{id}', (r) => (r as ReturnType<typeof request>).get(`/api/setup/tenant/${uuid}`)],
    ['PUT /api/setup/tenant/{id}', (r) => (r as ReturnType<typeof request>).put(`/api/setup/tenant/${uuid}`).send({ name: 'x' })],
    ['DELETE /api/setup/tenant/{id}', (r) => (r as ReturnType<typeof request>).delete(`/api/setup/tenant/${uuid}`)],
  ];

  it.each(calls)('%s: 401 without a token', async (_name, call) => {
    const r = await call(request(t.app));
    expect(r.status).toBe(401);
    expect(r.body.error).toBe('Unauthorized');
  });

  it.each(calls)('%s: 403 Forbidden for a caller who is not a platform admin', async (_name, call) => {
    const r = await call(request(t.app)).set('Authorization', `Bearer ${tokenFor({ claims: { roles: ['member'] } })}`);
    expect(r.status).toBe(403);
    expect(r.body.error).toBe('Forbidden');
  });

  it('a non-admin create changes nothing', async () => {
    const slug = unique('forbidden');
    await request(t.app).post('/api/setup/tenant').set('Authorization', `Bearer ${tokenFor()}`).send({ name: 'x', slug }).expect(403);
    expect(await ownerConnection()('tenants').where({ slug }).first()).toBeUndefined();
  });
});

describe('POST /api/setup/tenant', () => {
  it('201 with tenant_id, name, slug, message and existing: false; the tenant is readable', async () => {
    const slug = unique('acme');
    const settings = { admin_email: 'admin@acme.com', billing_plan: 'enterprise', features: ['advanced_analytics'] };
    const r = await request(t.app).post('/api/setup/tenant').set('Authorization', admin).send({ name: 'Acme Corporation', slug, settings }).expect(201);
    expect(r.body).toEqual({ tenant_id: expect.any(String), name: 'Acme Corporation', slug, message: expect.stringContaining(slug), existing: false });
    expect(r.body.message).toContain('Acme Corporation');

    const g = await request(t.app).get(`/api/setup/tenant/${r.body.tenant_id}`).set('Authorization', admin).expect(200);
    expect(g.body).toEqual({
      tenant_id: r.body.tenant_id,
      name: 'Acme Corporation',
      slug,
      settings,
      status: 'active',
      suspended_at: null,
      suspension_reason: null,
      delete_after: null,
      membership_policy: { provision_from_claims: true, claims_issuer: null },
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    // Without include_sample_data the tenant owns nothing.
    expect(await rowCounts(r.body.tenant_id)).toEqual({ users: 0, boards: 0, board_members: 0, generations: 0, provider_configs: 0, credit_transactions: 0, invitations: 0, member_removals: 0 });
  });

  it('include_sample_data: two boards with generations (with media URLs), one provider configuration, one credit grant', async () => {
    const r = await request(t.app)
      .post('/api/setup/tenant')
      .set('Authorization', admin)
      .send({ name: 'Sample', slug: unique('sample'), include_sample_data: true })
      .expect(201);
    const id = r.body.tenant_id as string;
    expect(await rowCounts(id)).toEqual({ users: 0, boards: 2, board_members: 0, generations: 5, provider_configs: 1, credit_transactions: 1, invitations: 0, member_removals: 0 });
    const gens = await ownerConnection()('generations').where({ tenant_id: id }).select('media_url');
    for (const g of gens) expect(g.media_url).toMatch(/^https:\/\//);
    const [grant] = await ownerConnection()('credit_transactions').where({ tenant_id: id }).select('kind', 'amount', 'balance_after');
    expect(grant).toEqual({ kind: 'grant', amount: 1000, balance_after: 1000 });
  });

  it('409 Conflict naming the slug when it is taken, and nothing else is written', async () => {
    const existing = await createTenant();
    // Other suites create tenants at the same time: look only at what this request could write.
    const name = unique('Again');
    const boardsBefore = await ownerConnection()('boards').where({ tenant_id: existing.id }).count({ n: '*' });
    const r = await request(t.app)
      .post('/api/setup/tenant')
      .set('Authorization', admin)
      .send({ name, slug: existing.slug, include_sample_data: true })
      .expect(409);
    expect(r.body.error).toBe('Conflict');
    expect(r.body.detail).toContain(existing.slug);
    expect(await ownerConnection()('tenants').where({ name }).count({ n: '*' })).toEqual([{ n: '0' }]);
    expect(await ownerConnection()('tenants').where({ slug: existing.slug }).select('id', 'name')).toEqual([{ id: existing.id, name: existing.name }]);
    expect(await ownerConnection()('boards').where({ tenant_id: existing.id }).count({ n: '*' })).toEqual(boardsBefore);
  });

  it.each([
    ['a slug with capitals', { name: 'x', slug: 'Acme' }, 'slug'],
    ['a slug with underscores', { name: 'x', slug: 'acme_corp' }, 'slug'],
    ['an empty name', { name: '', slug: 'acme' }, 'name'],
    ['a 256-character name', { name: 'n'.repeat(256), slug: 'acme' }, 'name'],
    ['a 256-character slug', { name: 'x', slug: 'a'.repeat(256) }, 'slug'],
    ['no slug', { name: 'x' }, 'slug'],
    ['an unknown field', { name: 'x', slug: 'acme', plan: 'gold' }, 'plan'],
    ['settings that are not an object', { name: 'x', slug: 'acme', settings: ['a'] }, 'settings'],
  ])('400 Validation error for %s', async (_what, body, field) => {
    const r = await request(t.app).post('/api/setup/tenant').set('Authorization', admin).send(body).expect(400);
    expect(r.body.error).toBe('Validation error');
    expect(r.body.detail).toContain(field);
  });

  it('accepts 255-character names and slugs', async () => {
    const slug = `${unique('long')}-`.padEnd(255, 'z');
    const r = await request(t.app).post('/api/setup/tenant').set('Authorization', admin).send({ name: 'N'.repeat(255), slug }).expect(201);
    expect(r.body.slug).toBe(slug);
  });

  it('20 parallel creates of one slug: exactly one 201 and 19 Conflicts', async () => {
    const slug = unique('race');
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        request(t.app).post('/api/setup/tenant').set('Authorization', admin).send({ name: `Racer ${i}`, slug, include_sample_data: true }),
      ),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([201, ...Array(19).fill(409)]);
    for (const r of responses.filter((x) => x.status === 409)) expect(r.body).toMatchObject({ error: 'Conflict', detail: expect.stringContaining(slug) });
    const rows = await ownerConnection()('tenants').where({ slug }).select('id');
    expect(rows).toHaveLength(1);
    // The winner's sample data only, not a mix of racers.
    expect(await rowCounts(rows[0].id)).toMatchObject({ boards: 2, generations: 5 });
  });
});

describe('Idempotency-Key', () => {
  it('a replay answers 200 with the first result and existing: true; no second tenant', async () => {
    const key = unique('key');
    const body = { name: 'Idem', slug: unique('idem'), include_sample_data: true };
    const first = await request(t.app).post('/api/setup/tenant').set('Authorization', admin).set('Idempotency-Key', key).send(body).expect(201);
    expect(first.body.existing).toBe(false);
    // Same body with keys in another order and the defaults spelled out: the same request.
    const replay = await request(t.app)
      .post('/api/setup/tenant')
      .set('Authorization', admin)
      .set('Idempotency-Key', key)
      .send({ include_sample_data: true, settings: {}, slug: body.slug, name: body.name })
      .expect(200);
    expect(replay.body).toEqual({ ...first.body, existing: true });
    expect(await ownerConnection()('tenants').where({ slug: body.slug }).count({ n: '*' })).toEqual([{ n: '1' }]);
    expect(await rowCounts(first.body.tenant_id)).toMatchObject({ boards: 2 });
  });

  it('the same key with a different body is a 409 Conflict naming the key', async () => {
    const key = unique('key');
    await request(t.app).post('/api/setup/tenant').set('Authorization', admin).set('Idempotency-Key', key).send({ name: 'A', slug: unique('a') }).expect(201);
    const otherSlug = unique('b');
    const r = await request(t.app).post('/api/setup/tenant').set('Authorization', admin).set('Idempotency-Key', key).send({ name: 'A', slug: otherSlug }).expect(409);
    expect(r.body.error).toBe('Conflict');
    expect(r.body.detail).toContain(key);
    expect(await ownerConnection()('tenants').where({ slug: otherSlug }).first()).toBeUndefined();
  });

  it('keys belong to their caller: another admin with the same key is not a replay', async () => {
    const key = unique('key');
    await request(t.app).post('/api/setup/tenant').set('Authorization', admin).set('Idempotency-Key', key).send({ name: 'A', slug: unique('a') }).expect(201);
    const other = `Bearer ${adminToken()}`;
    const r = await request(t.app).post('/api/setup/tenant').set('Authorization', other).set('Idempotency-Key', key).send({ name: 'B', slug: unique('b') }).expect(201);
    expect(r.body.existing).toBe(false);
  });

  it('a failed create stores no key: the retry after fixing the cause creates the tenant', async () => {
    const taken = await createTenant();
    const key = unique('key');
    const body = { name: 'Late', slug: taken.slug };
    await request(t.app).post('/api/setup/tenant').set('Authorization', admin).set('Idempotency-Key', key).send(body).expect(409);
    expect(await ownerConnection()('idempotency_keys').where({ key }).first()).toBeUndefined();
    await ownerConnection()('tenants').where({ id: taken.id }).del();
    const r = await request(t.app).post('/api/setup/tenant').set('Authorization', admin).set('Idempotency-Key', key).send(body).expect(201);
    expect(r.body.existing).toBe(false);
  });

  it('20 parallel requests with one key create one tenant: one 201, nineteen 200 replays of it', async () => {
    const key = unique('key');
    const body = { name: 'Parallel', slug: unique('par'), include_sample_data: true };
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => request(t.app).post('/api/setup/tenant').set('Authorization', admin).set('Idempotency-Key', key).send(body)),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([...Array(19).fill(200), 201]);
    const ids = new Set(responses.map((r) => r.body.tenant_id));
    expect(ids.size).toBe(1);
    expect(responses.filter((r) => r.body.existing === true)).toHaveLength(19);
    expect(await ownerConnection()('tenants').where({ slug: body.slug }).count({ n: '*' })).toEqual([{ n: '1' }]);
  });

  it('after 24 hours a key is forgotten: the same key with a new body creates a new tenant', async () => {
    const key = unique('key');
    await request(t.app).post('/api/setup/tenant').set('Authorization', admin).set('Idempotency-Key', key).send({ name: 'Old', slug: unique('old') }).expect(201);
    await ownerConnection()('idempotency_keys').where({ key }).update({ created_at: ownerConnection().raw("now() - interval '25 hours'") });
    const r = await request(t.app).post('/api/setup/tenant').set('Authorization', admin).set('Idempotency-Key', key).send({ name: 'New', slug: unique('new') }).expect(201);
    expect(r.body.existing).toBe(false);
  });
});

describe('GET /api/setup/tenants', () => {
  const prefix = unique('list');
  let ids: string[] = [];

  beforeAll(async () => {
    // Five tenants, three of them sharing one created_at to the microsecond, so ties are
    // ordered by id and no page boundary loses or repeats a row.
    const owner = ownerConnection();
    const rows = await owner('tenants')
      .insert([
        { name: `${prefix} Alpha`, slug: `${prefix}-a`, created_at: '2020-01-01T00:00:00.000001Z' },
        { name: `${prefix} Bravo`, slug: `${prefix}-b`, created_at: '2020-01-01T00:00:00.000002Z' },
        { name: `${prefix} Charlie`, slug: `${prefix}-c`, created_at: '2020-01-01T00:00:00.000002Z' },
        { name: `${prefix} Delta`, slug: `${prefix}-d`, created_at: '2020-01-01T00:00:00.000002Z' },
        { name: `${prefix} Echo`, slug: `${prefix}-e`, created_at: '2020-01-01T00:00:00.000003Z' },
      ])
      .returning(['id', 'created_at']);
    ids = (rows as Array<{ id: string; created_at: Date }>).map((r) => r.id);
  });

  const expectedOrder = () => {
    const [a, b, c, d, e] = ids as [string, string, string, string, string];
    return [a, ...[b, c, d].sort(), e];
  };

  it('pages through every match in (created_at, id) order; total_count counts all matches; next_cursor null at the end', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r: request.Response = await request(t.app)
        .get('/api/setup/tenants')
        .query({ q: prefix, limit: 2, ...(cursor ? { cursor } : {}) })
        .set('Authorization', admin)
        .expect(200);
      expect(r.body.total_count).toBe(5);
      expect(r.body.tenants.length).toBeLessThanOrEqual(2);
      seen.push(...r.body.tenants.map((x: { tenant_id: string }) => x.tenant_id));
      cursor = r.body.next_cursor;
      pages += 1;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual(expectedOrder());
  });

  it('an exact last page has next_cursor null', async () => {
    const r = await request(t.app).get('/api/setup/tenants').query({ q: prefix, limit: 5 }).set('Authorization', admin).expect(200);
    expect(r.body.tenants).toHaveLength(5);
    expect(r.body.next_cursor).toBeNull();
  });

  it('q is a case-insensitive substring of name or slug', async () => {
    const byName = await request(t.app).get('/api/setup/tenants').query({ q: `${prefix} CHAR`.toUpperCase() }).set('Authorization', admin).expect(200);
    expect(byName.body.tenants.map((x: { slug: string }) => x.slug)).toEqual([`${prefix}-c`]);
    const bySlug = await request(t.app).get('/api/setup/tenants').query({ q: `${prefix}-e` }).set('Authorization', admin).expect(200);
    expect(bySlug.body.tenants.map((x: { name: string }) => x.name)).toEqual([`${prefix} Echo`]);
    expect(bySlug.body.total_count).toBe(1);
  });

  it('q matches LIKE wildcards literally', async () => {
    const p = unique('wild');
    await createTenant({ name: `${p} 50% off`, slug: `${p}-percent` });
    await createTenant({ name: `${p} 500 off`, slug: `${p}-plain` });
    await createTenant({ name: `${p} a_b`, slug: `${p}-under` });
    await createTenant({ name: `${p} axb`, slug: `${p}-x` });
    const pct = await request(t.app).get('/api/setup/tenants').query({ q: `${p} 50%` }).set('Authorization', admin).expect(200);
    expect(pct.body.tenants.map((x: { slug: string }) => x.slug)).toEqual([`${p}-percent`]);
    const und = await request(t.app).get('/api/setup/tenants').query({ q: `${p} a_b` }).set('Authorization', admin).expect(200);
    expect(und.body.tenants.map((x: { slug: string }) => x.slug)).toEqual([`${p}-under`]);
  });

  it('without q lists every tenant, the default included, 100 per page by default', async () => {
    const r = await request(t.app).get('/api/setup/tenants').set('Authorization', admin).expect(200);
    const [{ n }] = await ownerConnection()('tenants').count({ n: '*' });
    expect(r.body.total_count).toBeGreaterThanOrEqual(Number(n) - 50); // other test files may add tenants meanwhile
    expect(r.body.tenants.length).toBe(Math.min(100, r.body.total_count));
    const def = await request(t.app).get('/api/setup/tenants').query({ q: t.config.defaultTenantSlug, limit: 1000 }).set('Authorization', admin).expect(200);
    expect(def.body.tenants.some((x: { slug: string }) => x.slug === t.config.defaultTenantSlug)).toBe(true);
  });

  it.each([
    ['not base64', '!!!'],
    ['base64 of something else', Buffer.from('{"a":1}').toString('base64url')],
    ['a tampered timestamp', Buffer.from(JSON.stringify([1, '2020-13-45T00:00:00.000000Z', '3f0e9a52-6a0b-4c1e-8f5e-1e2d3c4b5a69'])).toString('base64url')],
    ['a bad id', Buffer.from(JSON.stringify([1, '2020-01-01T00:00:00.000000Z', "x' or 1=1"])).toString('base64url')],
  ])('400 Validation error for a cursor that is %s', async (_what, cursor) => {
    const r = await request(t.app).get('/api/setup/tenants').query({ cursor }).set('Authorization', admin).expect(400);
    expect(r.body.error).toBe('Validation error');
    expect(r.body.detail).toContain('cursor');
  });

  it.each([['0'], ['1001'], ['abc']])('400 Validation error for limit=%s', async (limit) => {
    const r = await request(t.app).get('/api/setup/tenants').query({ limit }).set('Authorization', admin).expect(400);
    expect(r.body.error).toBe('Validation error');
    expect(r.body.detail).toContain('limit');
  });
});

describe('GET /api/setup/tenant/{tenant_id}', () => {
  it('404 Tenant not found naming the id', async () => {
    const r = await request(t.app).get(`/api/setup/tenant/${uuid}`).set('Authorization', admin).expect(404);
    expect(r.body).toMatchObject({ error: 'Tenant not found', detail: expect.stringContaining(uuid) });
  });
});

describe('PUT /api/setup/tenant/{tenant_id}', () => {
  const put = (id: string, body: object) => request(t.app).put(`/api/setup/tenant/${id}`).set('Authorization', admin).send(body);

  it('changes only the fields present and bumps updated_at', async () => {
    const tenant = await createTenant({ settings: { billing_plan: 'basic', admin_email: 'a@b.c' } });
    await ownerConnection()('tenants').where({ id: tenant.id }).update({ updated_at: '2020-01-01T00:00:00Z' });
    const r = await put(tenant.id, { name: 'Renamed' }).expect(200);
    expect(r.body).toMatchObject({ tenant_id: tenant.id, name: 'Renamed', slug: tenant.slug, settings: { billing_plan: 'basic', admin_email: 'a@b.c' }, status: 'active' });
    expect(new Date(r.body.updated_at).getTime()).toBeGreaterThan(new Date('2020-01-02T00:00:00Z').getTime());
  });

  it('settings replaces the stored object', async () => {
    const tenant = await createTenant({ settings: { billing_plan: 'basic', admin_email: 'a@b.c' } });
    const r = await put(tenant.id, { settings: { billing_plan: 'premium' } }).expect(200);
    expect(r.body.settings).toEqual({ billing_plan: 'premium' });
    expect(r.body.name).toBe(tenant.name);
    const g = await request(t.app).get(`/api/setup/tenant/${tenant.id}`).set('Authorization', admin).expect(200);
    expect(g.body.settings).toEqual({ billing_plan: 'premium' });
  });

  it('changes the slug; a taken slug is 409 naming it', async () => {
    const a = await createTenant();
    const b = await createTenant();
    const newSlug = unique('moved');
    const r = await put(a.id, { slug: newSlug }).expect(200);
    expect(r.body.slug).toBe(newSlug);
    const c = await put(a.id, { slug: b.slug }).expect(409);
    expect(c.body).toMatchObject({ error: 'Conflict', detail: expect.stringContaining(b.slug) });
    expect((await ownerConnection()('tenants').where({ id: a.id }).first()).slug).toBe(newSlug);
  });

  it("the default tenant's slug cannot change (400 Bad request); its name can", async () => {
    const def = await ownerConnection()('tenants').where({ is_default: true }).first();
    const r = await put(def.id, { slug: unique('nodefault') }).expect(400);
    expect(r.body.error).toBe('Bad request');
    expect(r.body.detail).toContain(def.slug);
    // Sending its own slug back is not a change.
    await put(def.id, { slug: def.slug, name: def.name }).expect(200);
    expect((await ownerConnection()('tenants').where({ id: def.id }).first()).slug).toBe(def.slug);
  });

  it('the default tenant cannot be set pending_approval (400)', async () => {
    const def = await ownerConnection()('tenants').where({ is_default: true }).first();
    const r = await put(def.id, { status: 'pending_approval' }).expect(400);
    expect(r.body.error).toBe('Bad request');
    expect((await ownerConnection()('tenants').where({ id: def.id }).first()).status).toBe('active');
  });

  it('status pending_approval → active approves the tenant', async () => {
    const tenant = await createTenant({ status: 'pending_approval' });
    const r = await put(tenant.id, { status: 'active' }).expect(200);
    expect(r.body.status).toBe('active');
    expect((await ownerConnection()('tenants').where({ id: tenant.id }).first()).status).toBe('active');
  });

  it('404 for an unknown id, 400 for an empty body or an unknown field', async () => {
    const nf = await put(uuid, { name: 'x' }).expect(404);
    expect(nf.body).toMatchObject({ error: 'Tenant not found', detail: expect.stringContaining(uuid) });
    const tenant = await createTenant();
    expect((await put(tenant.id, {}).expect(400)).body.error).toBe('Validation error');
    expect((await put(tenant.id, { is_default: true }).expect(400)).body.error).toBe('Validation error');
  });
});
