/**
 * Database roles where the service's user may not create roles (docs/operations.md, "Database
 * roles"), on a PostgreSQL cluster of its own, so the runtime roles start out missing as on a
 * new production cluster:
 * - a user without CREATEROLE owning its database: the built server stops with one line naming
 *   docs/sql/create-roles.sql, no stack, and migrates nothing;
 * - a superuser runs that file with psql for the user: the service migrates and serves as it,
 *   the isolation audit is clean (the roles' attributes are right), `tenantctl migrate status`
 *   is up to date, and the owner's own pg_dump is refused by forced row-level security;
 * - a second owner on the same cluster, roles present but not granted to it: one line again,
 *   and the file run for it fixes it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { loadOrCreateLocalKeys, signLocalToken } from '../../src/auth/local-keys';
import { MIGRATION_NAMES } from '../../src/db/database';
import { CLI, runProcess } from '../helpers/cli';
import { initContract } from '../helpers/contract';
import { createThrowawayCluster, freePort, type ThrowawayCluster } from '../helpers/pg-cluster';
import { callProcess } from '../helpers/process-api';
import { buildOnce, ROOT, startServerProcess, stopServer, waitUntilReady, type ServerProcess } from '../helpers/server-process';
import { unique } from '../helpers/factories';

jest.setTimeout(240_000);

const SQL_FILE = 'docs/sql/create-roles.sql';
let cluster: ThrowawayCluster;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenant-service-roles-'));
const started: ServerProcess[] = [];

/** Runs SQL as the cluster's superuser. */
async function asSuperuser(sql: string): Promise<void> {
  const c = new Client({ connectionString: cluster.url });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/** A login role without CREATEROLE (or any other privilege) and a database it owns; returns its URL. */
async function ownerWithDatabase(): Promise<{ user: string; url: string }> {
  const user = unique('ts_owner').replace(/-/g, '_');
  await asSuperuser(`CREATE ROLE ${user} LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB NOBYPASSRLS`);
  await asSuperuser(`CREATE DATABASE ${user} OWNER ${user}`);
  return { user, url: `postgres://${user}@127.0.0.1:${cluster.port}/${user}` };
}

/** What the DBA runs: psql, as superuser, on the file shipped in the repository. */
function runCreateRolesSql(user: string) {
  return runProcess('psql', [cluster.url, '-X', '-q', '-v', `service_user=${user}`, '-f', SQL_FILE], { cwd: ROOT, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.tmpdir() } });
}

async function start(url: string): Promise<ServerProcess> {
  const server = startServerProcess(await freePort(), { SERVICE_DATABASE_URL: url, SERVICE_DATA_DIR: dataDir, SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_RATE_LIMIT_ENABLED: 'false', SERVICE_LOG_LEVEL: 'info' });
  started.push(server);
  return server;
}

/** The boot refused: exit 1, one fatal line naming the SQL file, nothing on stderr (no stack). */
async function expectRefusedNamingTheSqlFile(server: ServerProcess): Promise<string> {
  expect((await server.exited).code).toBe(1);
  const fatal = server.logs.filter((l) => l.level === 60);
  expect(fatal).toHaveLength(1);
  const msg = String(fatal[0]!.msg);
  expect(msg).toContain(SQL_FILE);
  expect(JSON.stringify(server.logs)).not.toMatch(/\n\s+at /);
  expect(server.stderr()).toBe('');
  return msg;
}

beforeAll(async () => {
  await initContract();
  await buildOnce();
  cluster = await createThrowawayCluster();
  await cluster.start();
}, 180_000);

afterAll(async () => {
  for (const s of started) await stopServer(s, 'SIGKILL');
  // The cluster (its roles and databases included) goes as a whole.
  await cluster?.destroy();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('a service user without CREATEROLE', () => {
  let owner: { user: string; url: string };

  it('without the DBA SQL, the boot stops with one line naming docs/sql/create-roles.sql and migrates nothing', async () => {
    owner = await ownerWithDatabase();
    const msg = await expectRefusedNamingTheSqlFile(await start(owner.url));
    expect(msg).toBe(
      `The database roles tenant_service_app and tenant_service_reader do not exist and ${owner.user} may not create them: a superuser runs ${SQL_FILE} once on this PostgreSQL cluster (psql -v service_user=${owner.user} -f ${SQL_FILE}), see docs/operations.md "Database roles"`,
    );
    const c = new Client({ connectionString: owner.url });
    await c.connect();
    const { rows } = await c.query(`select to_regclass('knex_migrations') as t`).finally(() => c.end());
    expect(rows[0].t).toBeNull();
  });

  it('with the DBA SQL run as superuser, the service migrates and serves as that user', async () => {
    const sql = await runCreateRolesSql(owner.user);
    expect(sql).toMatchObject({ code: 0, stderr: '' });
    // Run twice: a DBA may, and it must change nothing.
    expect(await runCreateRolesSql(owner.user)).toMatchObject({ code: 0, stderr: '' });

    const server = await start(owner.url);
    expect(await waitUntilReady(server, 60_000)).toBe(200);
    const keys = loadOrCreateLocalKeys(dataDir);
    const admin = signLocalToken(keys, { sub: unique('admin'), admin: true });
    const slug = unique('roles');
    const created = await callProcess(server.baseUrl, 'POST', '/api/setup/tenant', { token: admin, body: { name: 'Roles Inc', slug } });
    expect(created.status).toBe(201);
    const subject = unique('member');
    const added = await callProcess(server.baseUrl, 'POST', '/api/tenant/members', { token: admin, tenant: slug, body: { subject, email: `${subject}@example.test`, role: 'member' } });
    expect(added.status).toBe(201);
    const mine = await callProcess(server.baseUrl, 'GET', '/api/tenant', { token: signLocalToken(keys, { sub: subject }), tenant: slug });
    expect(mine.status).toBe(200);
    expect(mine.body.membership).toMatchObject({ subject, role: 'member' });
    // The audit checks that the runtime role cannot bypass row-level security, among the rest.
    const audit = await callProcess(server.baseUrl, 'GET', '/api/setup/audit', { token: admin });
    expect(audit.status).toBe(200);
    expect(audit.body).toMatchObject({ total_violations: 0, global_violations: [] });

    const status = await runProcess(process.execPath, [CLI, 'migrate', 'status'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', SERVICE_DATABASE_URL: owner.url } });
    expect(status).toMatchObject({ code: 0, stderr: '' });
    expect(status.stdout).toContain(`Up to date: ${MIGRATION_NAMES.length} migrations applied, none pending.`);
    await stopServer(server);

    // Backups need a role with BYPASSRLS (docs/operations.md, "Backup and restore"): the owner's
    // own pg_dump meets the forced row-level security of the tenant tables.
    const dump = await runProcess('pg_dump', ['--format=custom', '--file', path.join(dataDir, 'owner.dump'), owner.url], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: os.tmpdir() } });
    expect(dump.code).not.toBe(0);
    expect(dump.stderr).toContain('query would be affected by row-level security policy');
  });

  it('a second owner on the cluster, roles present but not granted to it: one line again, and the SQL for it fixes it', async () => {
    const second = await ownerWithDatabase();
    const before = await runProcess(process.execPath, [CLI, 'migrate', 'status', '--format', 'json'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', SERVICE_DATABASE_URL: second.url } });
    expect(before.code).toBe(1);
    expect(JSON.parse(before.stdout)).toMatchObject({ up_to_date: false, roles_problem: null, applied: [] });
    const msg = await expectRefusedNamingTheSqlFile(await start(second.url));
    expect(msg).toMatch(new RegExp(`^${second.user} is not a member of tenant_service_app and tenant_service_reader`));
    const after = await runProcess(process.execPath, [CLI, 'migrate', 'status', '--format', 'json'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', SERVICE_DATABASE_URL: second.url } });
    expect(after.code).toBe(1);
    expect(JSON.parse(after.stdout).roles_problem).toBe(msg);

    expect(await runCreateRolesSql(second.user)).toMatchObject({ code: 0, stderr: '' });
    const server = await start(second.url);
    expect(await waitUntilReady(server, 60_000)).toBe(200);
    await stopServer(server);
  });
});
