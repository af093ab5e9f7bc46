/**
 * Migrations are safe to run twice and from several instances at once: the advisory lock
 * serialises them, each migration is recorded once, and there is exactly one default tenant.
 */
import crypto from 'node:crypto';
import { Client } from 'pg';
import pino from 'pino';
import { MIGRATION_NAMES, migrate } from '../../src/db/database';
import { TENANT_TABLES } from '../../src/db/schema';
import { TENANT_STATUSES } from '../../src/context/tenant-status';
import { admin } from '../helpers/fresh-database';
import { ADMIN_URL } from '../setup/global-setup';

let name: string;
let url: string;

beforeAll(async () => {
  name = `tenant_service_migrate_${Date.now()}_${crypto.randomBytes(3).toString('hex')}`;
  await admin((c) => c.query(`create database ${name}`));
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  url = u.toString();
});
afterAll(() => admin((c) => c.query(`drop database if exists ${name} with (force)`)));

it('three instances migrating one empty database at once all succeed, and a fourth run is a no-op', async () => {
  const log = pino({ level: 'silent' });
  await Promise.all([migrate(url, 'default', log), migrate(url, 'default', log), migrate(url, 'default', log)]);
  await migrate(url, 'default', log);

  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const migrations = await c.query<{ name: string; n: string }>('select name, count(*) as n from knex_migrations group by name order by name');
    expect(migrations.rows.map((r) => r.name)).toEqual([...MIGRATION_NAMES].sort());
    expect(migrations.rows.every((r) => r.n === '1')).toBe(true);

    const defaults = await c.query('select slug from tenants where is_default');
    expect(defaults.rows).toEqual([{ slug: 'default' }]);

    const rls = await c.query<{ relname: string; relrowsecurity: boolean; relforcerowsecurity: boolean }>(
      'select relname, relrowsecurity, relforcerowsecurity from pg_class where relname = any($1) order by relname',
      [[...TENANT_TABLES]],
    );
    expect(rls.rows).toHaveLength(TENANT_TABLES.length);
    for (const r of rls.rows) expect(r).toMatchObject({ relrowsecurity: true, relforcerowsecurity: true });
    // The audit log is under forced row-level security too (tenant_id nullable: no tenant PK).
    const events = await c.query('select relrowsecurity, relforcerowsecurity from pg_class where relname = $1', ['events']);
    expect(events.rows).toEqual([{ relrowsecurity: true, relforcerowsecurity: true }]);
  } finally {
    await c.end();
  }
});

it('keeps the first default tenant when SERVICE_DEFAULT_TENANT_SLUG changes later', async () => {
  await migrate(url, 'main', pino({ level: 'silent' }));
  const c = new Client({ connectionString: url });
  await c.connect();
  const slugs = await c.query('select slug from tenants where is_default').then((r) => r.rows).finally(() => c.end());
  expect(slugs).toEqual([{ slug: 'default' }]);
});

it("the database accepts exactly the lifecycle table's statuses, re-inserted by every migrate", async () => {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const statuses = async () => (await c.query<{ status: string }>('select status from tenant_statuses order by status')).rows.map((r) => r.status);
    expect(await statuses()).toEqual([...TENANT_STATUSES].sort());
    // A status the table holds and the database lacks (a state added to the code) is there after the next migrate.
    await c.query("delete from tenant_statuses where status = 'pending_deletion'");
    await expect(c.query("update tenants set status = 'pending_deletion', delete_after = now(), status_before_deletion = 'active' where is_default")).rejects.toMatchObject({ code: '23503', constraint: 'tenants_status_known' });
    await migrate(url, 'default', pino({ level: 'silent' }));
    expect(await statuses()).toEqual([...TENANT_STATUSES].sort());
    // A status the table does not know is refused by the database itself.
    await expect(c.query("update tenants set status = 'no_such_status' where is_default")).rejects.toMatchObject({ code: '23503', constraint: 'tenants_status_known' });
    await expect(c.query("update tenants set status_before_deletion = 'no_such_status' where is_default")).rejects.toMatchObject({ code: '23503', constraint: 'tenants_status_before_deletion_known' });
  } finally {
    await c.end();
  }
});
