/**
 * Isolation at the database level: under the runtime role, with app.tenant_id set to tenant A,
 * a query without any tenant filter sees none of B's rows, and a row that references B's board
 * cannot be stored. The role and the tenant are set by each transaction itself, so this holds
 * through a transaction pooler too (`npm run test:pgbouncer` runs this file through PgBouncer).
 */
import type { Knex } from 'knex';
import { openDatabase } from '../../src/db/database';
import { platformReadStatements, serviceStatements, tenantStatements, withPlatformRead, withService, withTenant } from '../../src/db/tenant-scope';
import { createTenantWithSampleData } from '../../src/domain/tenant-admin';
import { testRuntimeDatabaseUrl } from '../helpers/app';
import { closeOwnerConnection, ownerConnection, unique } from '../helpers/factories';

let db: Knex;
let a: string;
let b: string;
beforeAll(async () => {
  db = openDatabase({ url: testRuntimeDatabaseUrl(), poolMax: 2 });
  const make = (slug: string) =>
    withService(db, (trx) => createTenantWithSampleData(trx, { name: slug, slug, includeSampleData: true, admin: { issuer: 'iss', subject: unique('s'), email: null, displayName: null } }));
  a = (await make(unique('iso-a'))).tenant.id;
  b = (await make(unique('iso-b'))).tenant.id;
  const permission = `${unique('iso').replace('-', '')}:read`;
  await ownerConnection()('permissions').insert({ key: permission });
  for (const tenantId of [a, b]) {
    await ownerConnection()('invitations').insert({ tenant_id: tenantId, email: `${unique('i')}@iso.test`, token_hash: unique('hash'), expires_at: new Date(Date.now() + 3_600_000) });
    await ownerConnection()('tenant_roles').insert({ tenant_id: tenantId, key: 'iso-role', name: 'Isolated' });
    await ownerConnection()('tenant_role_permissions').insert({ tenant_id: tenantId, role_key: 'iso-role', permission_key: permission });
    await ownerConnection()('member_removals').insert({ tenant_id: tenantId, issuer: 'iss', subject: unique('gone'), reason: 'removed' });
    await ownerConnection()('scim_tokens').insert({ tenant_id: tenantId, token_hash: unique('scim-hash') });
    await ownerConnection()('directory_settings').insert({ tenant_id: tenantId, external_id_claim: 'oid' });
    const [du] = await ownerConnection()('directory_users').insert({ tenant_id: tenantId, user_name: 'iso@dir.test', user_name_key: 'iso@dir.test' }).returning('id');
    const [dg] = await ownerConnection()('directory_groups').insert({ tenant_id: tenantId, display_name: 'Isolated' }).returning('id');
    await ownerConnection()('directory_group_members').insert({ tenant_id: tenantId, group_id: dg.id, member_id: du.id });
  }
});
afterAll(async () => {
  await db.destroy();
  await closeOwnerConnection();
});

const TABLES = ['users', 'boards', 'board_members', 'generations', 'provider_configs', 'credit_transactions', 'invitations', 'tenant_roles', 'tenant_role_permissions', 'member_removals', 'scim_tokens', 'directory_settings', 'directory_users', 'directory_groups', 'directory_group_members'];

const whoAmI = 'select current_user, rolbypassrls, rolsuper from pg_roles where rolname = current_user';
type WhoAmI = { rows: Array<{ current_user: string; rolbypassrls: boolean; rolsuper: boolean }> };

it('runs every service transaction as a role that cannot bypass row-level security', async () => {
  const runtime = { current_user: 'tenant_service_app', rolbypassrls: false, rolsuper: false };
  // Several transactions on a small pool: each must set the role itself, whichever connection
  // (or, behind PgBouncer, whichever server connection) it lands on.
  for (let i = 0; i < 5; i++) {
    expect((await withTenant(db, a, (trx) => trx.raw<WhoAmI>(whoAmI))).rows[0]).toEqual(runtime);
    expect((await withService(db, (trx) => trx.raw<WhoAmI>(whoAmI))).rows[0]).toEqual(runtime);
    const [r1, r2] = await Promise.all([withTenant(db, b, (trx) => trx.raw<WhoAmI>(whoAmI)), withService(db, (trx) => trx.raw<WhoAmI>(whoAmI))]);
    expect([r1.rows[0], r2.rows[0]]).toEqual([runtime, runtime]);
  }
  expect((await withPlatformRead(db, (trx) => trx.raw<WhoAmI>(whoAmI))).rows[0]).toEqual({
    current_user: 'tenant_service_reader',
    rolbypassrls: true,
    rolsuper: false,
  });
});

it.each(TABLES)('a query on %s without a tenant filter sees only the current tenant', async (table) => {
  await withTenant(db, a, async (trx) => {
    const rows = await trx(table).select('tenant_id');
    expect(rows.length).toBeGreaterThan(0);
    expect(new Set(rows.map((r) => r.tenant_id))).toEqual(new Set([a]));
  });
  // The owner sees both tenants' rows: the filter above came from row-level security alone.
  const all = await ownerConnection()(table).whereIn('tenant_id', [a, b]).select('tenant_id');
  expect(new Set(all.map((r) => r.tenant_id))).toEqual(new Set([a, b]));
});

describe('statements in one round trip (serviceStatements)', () => {
  it('run as the runtime role and see no tenant rows, whichever connection they land on', async () => {
    for (let i = 0; i < 5; i++) {
      const [[who, rows], [again]] = await Promise.all([serviceStatements(db, [whoAmI, 'select tenant_id from users'], []), serviceStatements(db, [whoAmI], [])]);
      expect([who!.rows[0], again!.rows[0]]).toEqual([
        { current_user: 'tenant_service_app', rolbypassrls: false, rolsuper: false },
        { current_user: 'tenant_service_app', rolbypassrls: false, rolsuper: false },
      ]);
      expect(rows!.rows).toEqual([]);
    }
  });

  it('confine a tenant\'s statements to it, and the reader\'s to reading', async () => {
    const [who, rows] = await tenantStatements(db, a, [whoAmI, 'select distinct tenant_id from users'], []);
    expect(who!.rows[0]).toEqual({ current_user: 'tenant_service_app', rolbypassrls: false, rolsuper: false });
    expect(rows!.rows).toEqual([{ tenant_id: a }]);
    const [all] = await platformReadStatements(db, ['select distinct tenant_id from users where tenant_id = any($1::uuid[])'], [`{${a},${b}}`]);
    expect(new Set(all!.rows.map((r) => (r as { tenant_id: string }).tenant_id))).toEqual(new Set([a, b]));
    await expect(platformReadStatements(db, ["update boards set name = name where tenant_id = $1"], [a])).rejects.toMatchObject({ code: '25006' });
    // A tenant id is a value like any other: quoted, never SQL.
    const odd = "x', true); select set_config('app.tenant_id', 'y";
    const [setting] = await tenantStatements(db, odd, ["select current_setting('app.tenant_id') as t"], []);
    expect(setting!.rows).toEqual([{ t: odd }]);
  });

  it('send every value as the literal it is, whatever it holds', async () => {
    const values = ["it's", 'back\\slash\\', '$1 and $2', "'); drop table users; --", 'line\nbreak', 'ünï😀', '', null, 42, -7.5, true, false];
    const [r] = await serviceStatements(db, [`select ${values.map((_, i) => `$${i + 1}::text as v${i}`).join(', ')}`], values);
    expect(Object.values(r!.rows[0] as Record<string, unknown>)).toEqual(values.map((v) => (v === null ? null : String(v))));
    await expect(serviceStatements(db, ['select $1::text'], [])).rejects.toThrow(/no value/);
    await expect(serviceStatements(db, ['select $1::float'], [Number.NaN])).rejects.toThrow(/finite/);
  });

  it('commit together or not at all', async () => {
    const id = unique('one-trip');
    const insert = "insert into oidc_payloads (model, id, payload) values ('Session', $1, '{}'::jsonb)";
    await expect(serviceStatements(db, [insert, 'select 1 / 0'], [id])).rejects.toMatchObject({ code: '22012' });
    expect(await ownerConnection()('oidc_payloads').where({ model: 'Session', id }).first()).toBeUndefined();
    await serviceStatements(db, [insert], [id]);
    expect(await ownerConnection()('oidc_payloads').where({ model: 'Session', id }).first()).toBeDefined();
    await ownerConnection()('oidc_payloads').where({ model: 'Session', id }).delete();
  });
});

it('sees no tenant rows at all without app.tenant_id', async () => {
  for (const table of TABLES) {
    const rows = await withService(db, (trx) => trx(table).select('tenant_id'));
    expect(rows).toEqual([]);
  }
});

it("refuses to store a row that references another tenant's board", async () => {
  const [bBoard] = await ownerConnection()('boards').where({ tenant_id: b }).select('id');
  // Under A's scope, claiming to be A: the composite foreign key (tenant_id, board_id) fails.
  await expect(
    withTenant(db, a, (trx) => trx('generations').insert({ tenant_id: a, board_id: bBoard.id, prompt: 'x' })),
  ).rejects.toMatchObject({ code: '23503' });
  // Under A's scope, writing B's tenant_id: row-level security's WITH CHECK fails.
  await expect(
    withTenant(db, a, (trx) => trx('generations').insert({ tenant_id: b, board_id: bBoard.id, prompt: 'x' })),
  ).rejects.toMatchObject({ code: '42501' });
  const count = await ownerConnection()('generations').where({ prompt: 'x' }).count<{ count: string }[]>('* as count');
  expect(Number(count[0]!.count)).toBe(0);
});

it("refuses a role permission row naming another tenant's role", async () => {
  // The composite foreign key (tenant_id, role_key): A's row cannot point at B's role.
  await ownerConnection()('tenant_roles').insert({ tenant_id: b, key: 'only-in-b', name: 'B only' });
  const [perm] = await ownerConnection()('permissions').select('key').limit(1);
  await expect(
    withTenant(db, a, (trx) => trx('tenant_role_permissions').insert({ tenant_id: a, role_key: 'only-in-b', permission_key: perm.key })),
  ).rejects.toMatchObject({ code: '23503' });
});

it('cannot update or delete another tenant\'s rows', async () => {
  await withTenant(db, a, async (trx) => {
    expect(await trx('boards').where({ tenant_id: b }).update({ name: 'hijacked' })).toBe(0);
    expect(await trx('boards').where({ tenant_id: b }).delete()).toBe(0);
  });
  const names = await ownerConnection()('boards').where({ tenant_id: b }).pluck('name');
  expect(names).not.toContain('hijacked');
  expect(names.length).toBe(2);
});

it('does not carry one transaction\'s tenant into the next on a pooled connection', async () => {
  await withTenant(db, a, (trx) => trx('boards').select('id'));
  const setting = await db.raw<{ rows: Array<{ v: string | null }> }>("select current_setting('app.tenant_id', true) as v");
  expect(setting.rows[0]!.v === null || setting.rows[0]!.v === '').toBe(true);
});

it("refuses a directory group membership naming another tenant's directory user", async () => {
  // The composite foreign keys (tenant_id, group_id) and (tenant_id, member_id).
  const [aGroup] = await ownerConnection()('directory_groups').where({ tenant_id: a }).select('id');
  const [bUser] = await ownerConnection()('directory_users').where({ tenant_id: b }).select('id');
  await expect(withTenant(db, a, (trx) => trx('directory_group_members').insert({ tenant_id: a, group_id: aGroup.id, member_id: bUser.id }))).rejects.toMatchObject({ code: '23503' });
});
