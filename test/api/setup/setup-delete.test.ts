/**
 * DELETE /api/setup/tenant/{id}: the tenant and every row it owns go, nothing of any other
 * tenant does; `?dry_run=true` counts and deletes nothing; the default tenant is protected in
 * single-tenant mode; the batched delete leaves nothing behind whatever the batch size.
 * GET …/deletion-preview (docs/tenants.md#tenant-administration) counts the same rows as a read: it
 * changes nothing and does not spend the delete quota.
 */
import request from 'supertest';
import { TENANT_TABLES } from '../../../src/db/schema';
import { withTenant } from '../../../src/db/tenant-scope';
import { SYSTEM_ORIGIN } from '../../../src/domain/events';
import { deleteTenant } from '../../../src/domain/tenant-admin';
import { createTenantWithSampleData } from '../../../src/domain/tenant-admin';
import { startTestApp, type TestApp } from '../../helpers/app';
import { adminToken, closeOwnerConnection, ownerConnection, tokenFor, unique } from '../../helpers/factories';

let single: TestApp;
let multi: TestApp;
const admin = `Bearer ${adminToken()}`;

beforeAll(async () => {
  single = await startTestApp();
  multi = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
});
afterAll(async () => {
  await single.close();
  await multi.close();
  await closeOwnerConnection();
});

/** Every table the service has, tenant rows included. */
const ALL_TABLES = ['tenants', 'idempotency_keys', ...TENANT_TABLES] as const;

/** Rows of every table that belong to `tenantId`, read as the owner (no row-level security). */
async function countsOf(tenantId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of ALL_TABLES) {
    const column = table === 'tenants' ? 'id' : 'tenant_id';
    const [{ n }] = await ownerConnection()(table).where(column, tenantId).count({ n: '*' });
    out[table] = Number(n);
  }
  return out;
}

/** One catalogue permission the tenants' own roles hold (the catalogue is platform-wide). */
let permission: string | null = null;
async function catalogued(): Promise<string> {
  if (permission === null) {
    permission = `${unique('del').replace('-', '')}:read`;
    await ownerConnection()('permissions').insert({ key: permission });
  }
  return permission;
}

/**
 * A tenant full of sample data: an admin who owns the sample boards, two more members on a
 * board, a credit usage by one of them, a role of its own, and an idempotency key of the create that made it.
 */
async function fullTenant(t: TestApp): Promise<{ id: string; slug: string; name: string }> {
  const slug = unique('full');
  const name = `Full ${slug}`;
  const created = await request(t.app)
    .post('/api/setup/tenant')
    .set('Authorization', admin)
    .set('Idempotency-Key', unique('key'))
    .send({ name, slug, include_sample_data: true })
    .expect(201);
  const id = created.body.tenant_id as string;
  await withTenant(t.db, id, async (trx) => {
    const users = (await trx('users')
      .insert([
        { tenant_id: id, issuer: 'iss', subject: unique('owner'), role: 'admin' },
        { tenant_id: id, issuer: 'iss', subject: unique('m'), role: 'member' },
        { tenant_id: id, issuer: 'iss', subject: unique('m'), role: 'member' },
      ])
      .returning('id')) as Array<{ id: string }>;
    const boards = (await trx('boards').where({ tenant_id: id }).select('id')) as Array<{ id: string }>;
    await trx('boards').where({ tenant_id: id }).update({ created_by: users[0]!.id });
    await trx('board_members').insert(boards.flatMap((b) => users.map((u, i) => ({ tenant_id: id, board_id: b.id, user_id: u.id, role: i === 0 ? 'owner' : 'editor' }))));
    await trx('credit_transactions').insert({ tenant_id: id, user_id: users[1]!.id, kind: 'usage', amount: -10, balance_after: 990 });
    await trx('invitations').insert({ tenant_id: id, email: `${unique('inv')}@example.test`, token_hash: unique('hash'), expires_at: new Date(Date.now() + 3_600_000), invited_by: users[0]!.id });
     await trx('tenant_roles').insert({ tenant_id: id, key: 'auditor', name: 'Auditor' });
    await trx('tenant_role_permissions').insert({ tenant_id: id, role_key: 'auditor', permission_key: await catalogued() });
    await trx('member_removals').insert({ tenant_id: id, issuer: 'iss', subject: unique('gone'), reason: 'removed' });
    await trx('scim_tokens').insert({ tenant_id: id, token_hash: unique('scim-hash') });
    await trx('directory_settings').insert({ tenant_id: id, external_id_claim: 'oid' });
    const [du] = (await trx('directory_users').insert({ tenant_id: id, user_name: 'dir@example.test', user_name_key: 'dir@example.test', user_id: users[2]!.id }).returning('id')) as Array<{ id: string }>;
    const [dg] = (await trx('directory_groups').insert({ tenant_id: id, display_name: 'Everyone' }).returning('id')) as Array<{ id: string }>;
    await trx('directory_group_members').insert({ tenant_id: id, group_id: dg!.id, member_id: du!.id });
  });
  return { id, slug, name };
}

describe('DELETE /api/setup/tenant/{tenant_id}', () => {
  it('deletes the tenant and every row it owns, and nothing of the other tenant', async () => {
    const a = await fullTenant(multi);
    const b = await fullTenant(multi);
    const beforeA = await countsOf(a.id);
    const beforeB = await countsOf(b.id);
    // Every table is populated, so "deleted" below means something.
    for (const table of ALL_TABLES) {
      expect(beforeA[table]).toBeGreaterThan(0);
      expect(beforeB[table]).toBeGreaterThan(0);
    }

    const r = await request(multi.app).delete(`/api/setup/tenant/${a.id}`).set('Authorization', admin).expect(200);
    expect(r.body).toEqual({ message: expect.any(String), tenant_id: a.id, warning: expect.stringMatching(/permanently deleted/) });
    expect(r.body.message).toContain(a.name);
    expect(r.body.message).toContain(a.slug);

    expect(await countsOf(a.id)).toEqual(Object.fromEntries(ALL_TABLES.map((table) => [table, 0])));
    expect(await countsOf(b.id)).toEqual(beforeB);
    await request(multi.app).get(`/api/setup/tenant/${a.id}`).set('Authorization', admin).expect(404);
    await request(multi.app).get(`/api/setup/tenant/${b.id}`).set('Authorization', admin).expect(200);
  });

  it('dry_run=true returns the rows per table that would go and deletes nothing', async () => {
    const a = await fullTenant(multi);
    const before = await countsOf(a.id);
    const r = await request(multi.app).delete(`/api/setup/tenant/${a.id}`).query({ dry_run: 'true' }).set('Authorization', admin).expect(200);
    expect(r.body).toEqual({
      dry_run: true,
      tenant_id: a.id,
      message: expect.stringContaining(a.slug),
      rows: Object.fromEntries(TENANT_TABLES.map((table) => [table, before[table]])),
    });
    expect(await countsOf(a.id)).toEqual(before);
    // dry_run=false is a real delete.
    await request(multi.app).delete(`/api/setup/tenant/${a.id}`).query({ dry_run: 'false' }).set('Authorization', admin).expect(200);
    expect((await countsOf(a.id)).tenants).toBe(0);
  });

  it('GET deletion-preview returns the rows per table that would go, the same as a dry run, and deletes nothing', async () => {
    const a = await fullTenant(multi);
    const before = await countsOf(a.id);
    const r = await request(multi.app).get(`/api/setup/tenant/${a.id}/deletion-preview`).set('Authorization', admin).expect(200);
    expect(r.body).toEqual({
      tenant_id: a.id,
      message: expect.stringContaining(a.slug),
      rows: Object.fromEntries(TENANT_TABLES.map((table) => [table, before[table]])),
    });
    expect(Object.values(r.body.rows as Record<string, number>).some((n) => n > 0)).toBe(true);
    const dry = await request(multi.app).delete(`/api/setup/tenant/${a.id}`).query({ dry_run: 'true' }).set('Authorization', admin).expect(200);
    expect(dry.body.rows).toEqual(r.body.rows);
    expect(await countsOf(a.id)).toEqual(before);
  });

  it('deletion-preview: 404 for an unknown tenant, 400 for the default tenant in single-tenant mode, 403 for a non-admin', async () => {
    const id = '0e8f3c2a-1b7d-4f6e-9a5c-2d4b6e8f0a1c';
    const nf = await request(multi.app).get(`/api/setup/tenant/${id}/deletion-preview`).set('Authorization', admin).expect(404);
    expect(nf.body).toMatchObject({ error: 'Tenant not found', detail: expect.stringContaining(id) });
    const def = await ownerConnection()('tenants').where({ is_default: true }).first();
    const bad = await request(single.app).get(`/api/setup/tenant/${def.id}/deletion-preview`).set('Authorization', admin).expect(400);
    expect(bad.body.detail).toMatch(/single-tenant mode/);
    await request(multi.app).get(`/api/setup/tenant/${def.id}/deletion-preview`).set('Authorization', `Bearer ${tokenFor({ sub: unique('member') })}`).expect(403);
  });

  it('previews do not spend the delete quota (5 per hour): after 8 previews a real delete still goes through', async () => {
    const limited = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_RATE_LIMIT_ENABLED: 'true' });
    try {
      const caller = `Bearer ${adminToken(unique('quota'))}`;
      const a = await fullTenant(limited);
      for (let i = 0; i < 8; i++) {
        const r = await request(limited.app).get(`/api/setup/tenant/${a.id}/deletion-preview`).set('Authorization', caller).expect(200);
        expect(r.headers['ratelimit-policy']).toMatch(/setup-read/);
      }
      const del = await request(limited.app).delete(`/api/setup/tenant/${a.id}`).set('Authorization', caller).expect(200);
      expect(del.headers['ratelimit-policy']).toMatch(/setup-delete/);
      expect((await countsOf(a.id)).tenants).toBe(0);

      // The deprecated dry run still works, and (as documented) still counts as a delete.
      const b = await fullTenant(limited);
      const other = `Bearer ${adminToken(unique('quota'))}`;
      for (let i = 0; i < 5; i++) await request(limited.app).delete(`/api/setup/tenant/${b.id}`).query({ dry_run: 'true' }).set('Authorization', other).expect(200);
      await request(limited.app).delete(`/api/setup/tenant/${b.id}`).set('Authorization', other).expect(429);
    } finally {
      await limited.close();
    }
  });

  it('404 Tenant not found naming the id, for a delete and a dry run', async () => {
    const id = '0e8f3c2a-1b7d-4f6e-9a5c-2d4b6e8f0a1c';
    for (const query of [{}, { dry_run: 'true' }]) {
      const r = await request(multi.app).delete(`/api/setup/tenant/${id}`).query(query).set('Authorization', admin).expect(404);
      expect(r.body).toMatchObject({ error: 'Tenant not found', detail: expect.stringContaining(id) });
    }
  });

  it('a second delete of the same tenant is a 404', async () => {
    const a = await fullTenant(multi);
    await request(multi.app).delete(`/api/setup/tenant/${a.id}`).set('Authorization', admin).expect(200);
    await request(multi.app).delete(`/api/setup/tenant/${a.id}`).set('Authorization', admin).expect(404);
  });

  it('refuses the default tenant in single-tenant mode (400), dry run included; it stays', async () => {
    const def = await ownerConnection()('tenants').where({ is_default: true }).first();
    for (const query of [{}, { dry_run: 'true' }]) {
      const r = await request(single.app).delete(`/api/setup/tenant/${def.id}`).query(query).set('Authorization', admin).expect(400);
      expect(r.body.error).toBe('Bad request');
      expect(r.body.detail).toMatch(/single-tenant mode/);
    }
    expect(await ownerConnection()('tenants').where({ id: def.id }).first()).toBeDefined();
  });

  it('in multi-tenant mode the default tenant is deletable (shown by a dry run, so other tests keep it)', async () => {
    const def = await ownerConnection()('tenants').where({ is_default: true }).first();
    const r = await request(multi.app).delete(`/api/setup/tenant/${def.id}`).query({ dry_run: 'true' }).set('Authorization', admin).expect(200);
    expect(r.body).toMatchObject({ dry_run: true, tenant_id: def.id });
  });

  it('single-tenant mode deletes tenants other than the default', async () => {
    const a = await fullTenant(single);
    await request(single.app).delete(`/api/setup/tenant/${a.id}`).set('Authorization', admin).expect(200);
    expect((await countsOf(a.id)).tenants).toBe(0);
  });
});

describe('deleteTenant (domain): batches', () => {
  it('with batches of 2 rows, deletes and reports every row, children before parents, leaving the other tenant whole', async () => {
    const a = await fullTenant(multi);
    const b = await fullTenant(multi);
    const beforeA = await countsOf(a.id);
    const beforeB = await countsOf(b.id);
    const result = await deleteTenant(multi.db, SYSTEM_ORIGIN, a.id, { multiTenantMode: true, batchSize: 2 });
    expect(result.dryRun).toBe(false);
    expect(result.rows).toEqual(Object.fromEntries(TENANT_TABLES.map((table) => [table, beforeA[table]])));
    expect(await countsOf(a.id)).toEqual(Object.fromEntries(ALL_TABLES.map((table) => [table, 0])));
    expect(await countsOf(b.id)).toEqual(beforeB);
  });

  it('a board written concurrently with the delete never survives it', async () => {
    const slug = unique('busy');
    const id = (await multi.db.transaction((trx) => createTenantWithSampleData(trx, { name: slug, slug, includeSampleData: true }))).tenant.id;
    // Whether the insert lands before the batches, between them (the final cascade takes it) or
    // after the tenant row is gone (the foreign key refuses it), nothing of the tenant remains.
    let inserted = false;
    const db = multi.db;
    const run = deleteTenant(db, SYSTEM_ORIGIN, id, { multiTenantMode: true, batchSize: 1 });
    await withTenant(db, id, async (trx) => {
      await trx('boards').insert({ tenant_id: id, name: 'late' }).catch(() => undefined);
      inserted = true;
    });
    await run;
    expect(inserted).toBe(true);
    expect(await countsOf(id)).toEqual(Object.fromEntries(ALL_TABLES.map((table) => [table, 0])));
  });
});
