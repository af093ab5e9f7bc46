/**
 * Checking a database before an upgrade (docs/operations.md, "Upgrades"):
 * - `tenantctl migrate status` (the built binary) lists applied and pending migrations from
 *   SERVICE_DATABASE_URL, exit 0 when up to date and 1 when a start would migrate, and changes
 *   nothing while reading;
 * - a database migrated by a newer version (a migration this one does not know): status exits 1
 *   naming it, and the server refuses to start on it with one line, touching nothing;
 * - no URL, or a server that does not answer: exit 2, one line, no password, no stack.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { MIGRATION_NAMES } from '../../src/db/database';
import { CLI, runProcess } from '../helpers/cli';
import { admin, createFreshDatabase, type FreshDatabase } from '../helpers/fresh-database';
import { freePort } from '../helpers/pg-cluster';
import { buildOnce, ROOT, startServerProcess, stopServer } from '../helpers/server-process';
import { ADMIN_URL } from '../setup/global-setup';

jest.setTimeout(180_000);

let fresh: FreshDatabase;
const emptyName = `tenant_service_empty_${Date.now()}`;
const emptyUrl = (() => {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${emptyName}`;
  return u.toString();
})();
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenant-service-migrate-'));

const status = (env: Record<string, string>, ...args: string[]) =>
  runProcess(process.execPath, [CLI, 'migrate', 'status', ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env } });

async function query<T>(url: string, sql: string): Promise<T[]> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql)).rows as T[];
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  await buildOnce();
  fresh = await createFreshDatabase('tenant_service_migrate');
  await admin((c) => c.query(`create database ${emptyName}`));
}, 120_000);

afterAll(async () => {
  await fresh?.drop();
  await admin((c) => c.query(`drop database if exists ${emptyName} with (force)`));
  fs.rmSync(dataDir, { recursive: true, force: true });
});

it('a migrated database: every migration applied, exit 0', async () => {
  const r = await status({ SERVICE_DATABASE_URL: fresh.url });
  expect(r).toMatchObject({ code: 0, stderr: '' });
  for (const name of MIGRATION_NAMES) expect(r.stdout).toMatch(new RegExp(`^${name}\\s+applied\\s+\\d{4}-`, 'm'));
  expect(r.stdout).toContain(`Up to date: ${MIGRATION_NAMES.length} migrations applied, none pending.`);
  const json = await status({ SERVICE_DATABASE_URL: fresh.url }, '--format', 'json');
  expect(json.code).toBe(0);
  expect(JSON.parse(json.stdout)).toMatchObject({ up_to_date: true, pending: [], unknown: [], roles_problem: null });
  expect(JSON.parse(json.stdout).applied.map((m: { name: string }) => m.name)).toEqual(MIGRATION_NAMES);
});

it('a database never started: every migration pending, exit 1, and reading it created nothing', async () => {
  // SERVICE_MIGRATION_DATABASE_URL wins over SERVICE_DATABASE_URL, as it does for the service.
  const r = await status({ SERVICE_DATABASE_URL: fresh.url, SERVICE_MIGRATION_DATABASE_URL: emptyUrl });
  expect(r).toMatchObject({ code: 1, stderr: '' });
  for (const name of MIGRATION_NAMES) expect(r.stdout).toMatch(new RegExp(`^${name}\\s+pending\\s+-`, 'm'));
  expect(r.stdout).toContain(`${MIGRATION_NAMES.length} pending: the next start of this version runs them`);
  expect(await query(emptyUrl, `select tablename from pg_tables where schemaname = 'public'`)).toEqual([]);
});

describe('a database migrated by a newer version', () => {
  const future = '999-from-a-newer-version';

  beforeAll(async () => {
    await query(fresh.url, `insert into knex_migrations (name, batch, migration_time) values ('${future}', 99, now())`);
  });
  afterAll(async () => {
    await query(fresh.url, `delete from knex_migrations where name = '${future}'`);
  });

  it('status names the migration this version does not know, exit 1', async () => {
    const r = await status({ SERVICE_DATABASE_URL: fresh.url });
    expect(r).toMatchObject({ code: 1, stderr: '' });
    expect(r.stdout).toMatch(new RegExp(`^${future}\\s+unknown\\s+\\d{4}-`, 'm'));
    expect(r.stdout).toContain('1 migration(s) unknown to this version: the database was migrated by a newer tenant-service');
  });

  it('the server refuses to start on it with one line and migrates nothing', async () => {
    const server = startServerProcess(await freePort(), { SERVICE_DATABASE_URL: fresh.url, SERVICE_DATA_DIR: dataDir, SERVICE_LOG_LEVEL: 'info' });
    const exit = await server.exited.finally(() => stopServer(server, 'SIGKILL'));
    expect(exit.code).toBe(1);
    const fatal = server.logs.filter((l) => l.level === 60);
    expect(fatal.map((l) => l.msg)).toEqual([
      `This database was migrated by a newer tenant-service (${future} unknown to this version): start that version or a later one, or restore the backup taken before the upgrade (docs/operations.md, "Upgrades")`,
    ]);
    expect(server.stderr()).toBe('');
    expect(await query(fresh.url, 'select count(*)::int as n from knex_migrations')).toEqual([{ n: MIGRATION_NAMES.length + 1 }]);
  });
});

it('without a database URL, or with one that does not answer: exit 2, one line, no password', async () => {
  const none = await status({});
  expect(none).toMatchObject({ code: 2, stdout: '' });
  expect(none.stderr).toBe('error: SERVICE_DATABASE_URL is not set: give --database-url (the embedded database of `npm start` migrates itself on start and has no status to read)\n');
  const port = await freePort();
  const down = await status({}, '--database-url', `postgres://owner:s3cret@127.0.0.1:${port}/tenants`);
  expect(down).toMatchObject({ code: 2, stdout: '' });
  expect(down.stderr).toBe(`error: cannot read the migrations of postgres://owner:***@127.0.0.1:${port}/tenants: connect ECONNREFUSED 127.0.0.1:${port}\n`);
});
