/**
 * Backup and restore as docs/operations.md ("Backup and restore") tells an operator to do it,
 * with this machine's pg_dump and pg_restore and the built server:
 * - a service with tenants, a member and a tenant-token key set (encrypted with
 *   SERVICE_KEY_ENCRYPTION_SECRET) issues a tenant token, then stops;
 * - pg_dump runs as a backup role with BYPASSRLS (the owner cannot dump tables whose row-level
 *   security is forced: test/operations/database-roles.test.ts shows it);
 * - the dump goes to ANOTHER PostgreSQL cluster, owned there by another user: pg_restore fails
 *   while the runtime roles are missing, and works with `--no-owner` once
 *   docs/sql/create-roles.sql has been run for that user, and keeps its grants only without
 *   `--no-privileges` (the start does not grant them again: it stops with one line);
 * - the service started on the restored database with a copy of SERVICE_DATA_DIR and the same
 *   secret resolves the member with the token minted before the dump, and the tenant token
 *   issued before the dump verifies against its /.well-known/jwks.json; without the secret it
 *   cannot sign (503), which is why the secret belongs to the backup.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { Client } from 'pg';
import { loadOrCreateLocalKeys, signLocalToken } from '../../src/auth/local-keys';
import { runProcess } from '../helpers/cli';
import { initContract } from '../helpers/contract';
import { admin, createFreshDatabase, type FreshDatabase } from '../helpers/fresh-database';
import { createThrowawayCluster, freePort, type ThrowawayCluster } from '../helpers/pg-cluster';
import { callProcess } from '../helpers/process-api';
import { buildOnce, ROOT, startServerProcess, stopServer, waitUntilReady, type ServerProcess } from '../helpers/server-process';
import { unique } from '../helpers/factories';

jest.setTimeout(300_000);

const TOKEN_ISSUER = 'https://tenants.example.test';
const TOKEN_AUDIENCE = 'backup-restore-product';
const SECRET = crypto.randomBytes(32).toString('base64');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tenant-service-backup-'));
const dataDir = path.join(work, 'data');
const restoredDataDir = path.join(work, 'data-restored');
const dumpFile = path.join(work, 'tenants.dump');
const backupRole = unique('ts_backup').replace(/-/g, '_');
const restoreUser = unique('ts_restored').replace(/-/g, '_');

let source: FreshDatabase;
let target: ThrowawayCluster;
const started: ServerProcess[] = [];
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.tmpdir() };

async function launch(url: string, dir: string, secret: string | null): Promise<ServerProcess> {
  const server = startServerProcess(await freePort(), {
    SERVICE_DATABASE_URL: url,
    SERVICE_DATA_DIR: dir,
    SERVICE_MULTI_TENANT_MODE: 'true',
    SERVICE_RATE_LIMIT_ENABLED: 'false',
    SERVICE_TENANT_TOKEN_ISSUER: TOKEN_ISSUER,
    SERVICE_TENANT_TOKEN_AUDIENCE: TOKEN_AUDIENCE,
    SERVICE_TENANT_TOKEN_TTL: '3600',
    SERVICE_LOG_LEVEL: 'warn',
    ...(secret ? { SERVICE_KEY_ENCRYPTION_SECRET: secret } : {}),
  });
  started.push(server);
  return server;
}

async function start(url: string, dir: string, secret: string | null): Promise<ServerProcess> {
  const server = await launch(url, dir, secret);
  const status = await waitUntilReady(server, 60_000);
  if (status !== 200) throw new Error(`service not ready (last status ${status}): ${server.stderr()}`);
  return server;
}

async function onTarget(sql: string): Promise<void> {
  const c = new Client({ connectionString: target.url });
  await c.connect();
  await c.query(sql).finally(() => c.end());
}

const targetUrl = (db = 'tenants') => `postgres://${restoreUser}@127.0.0.1:${target.port}/${db}`;
const pgRestore = (db = 'tenants', ...extra: string[]) => runProcess('pg_restore', ['--dbname', targetUrl(db), '--no-owner', '--exit-on-error', ...extra, dumpFile], { cwd: ROOT, env });

beforeAll(async () => {
  await initContract();
  await buildOnce();
  source = await createFreshDatabase('tenant_service_backup');
  target = await createThrowawayCluster();
  await target.start();
}, 180_000);

afterAll(async () => {
  for (const s of started) await stopServer(s, 'SIGKILL');
  await source?.drop();
  await admin((c) => c.query(`drop role if exists ${backupRole}`));
  await target?.destroy();
  fs.rmSync(work, { recursive: true, force: true });
});

it('pg_dump and pg_restore of this machine match the server major version', async () => {
  const version = async (bin: string) => (await promisify(execFile)(bin, ['--version'])).stdout.match(/(\d+)\.\d+/)![1];
  const server = await admin((c) => c.query(`select current_setting('server_version_num')::int / 10000 as major`));
  expect(await version('pg_dump')).toBe(String(server.rows[0].major));
  expect(await version('pg_restore')).toBe(String(server.rows[0].major));
});

describe('a backup restored into another cluster', () => {
  const slug = unique('backup');
  const subject = unique('member');
  let memberToken: string;
  let tenantToken: string;
  let kid: string;

  it('the source service holds a tenant, a member and a tenant-token key set, and issues a tenant token', async () => {
    const server = await start(source.url, dataDir, SECRET);
    const keys = loadOrCreateLocalKeys(dataDir);
    const adminToken = signLocalToken(keys, { sub: unique('admin'), admin: true });
    expect((await callProcess(server.baseUrl, 'POST', '/api/setup/tenant', { token: adminToken, body: { name: 'Backup Inc', slug } })).status).toBe(201);
    const added = await callProcess(server.baseUrl, 'POST', '/api/tenant/members', { token: adminToken, tenant: slug, body: { subject, email: `${subject}@example.test`, role: 'member' } });
    expect(added.status).toBe(201);
    memberToken = signLocalToken(keys, { sub: subject, ttlSeconds: 3600 });
    const issued = await callProcess(server.baseUrl, 'POST', '/api/tenant/token', { token: memberToken, tenant: slug });
    expect(issued.status).toBe(200);
    tenantToken = issued.body.access_token;
    kid = JSON.parse(Buffer.from(tenantToken.split('.')[0]!, 'base64url').toString()).kid;
    await stopServer(server);
  });

  it('pg_dump as a backup role with BYPASSRLS and pg_read_all_data', async () => {
    await admin((c) => c.query(`create role ${backupRole} login bypassrls; grant pg_read_all_data to ${backupRole}`));
    const url = new URL(source.url);
    url.username = backupRole;
    const dumped = await runProcess('pg_dump', ['--format=custom', '--file', dumpFile, url.toString()], { cwd: ROOT, env });
    expect(dumped).toMatchObject({ code: 0, stderr: '' });
    expect(fs.statSync(dumpFile).size).toBeGreaterThan(0);
  });

  it('pg_restore into another cluster needs the runtime roles there, then works as that cluster\'s user', async () => {
    await onTarget(`create role ${restoreUser} login nosuperuser nocreaterole nocreatedb`);
    await onTarget(`create database tenants owner ${restoreUser}`);
    const refused = await pgRestore();
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/role "tenant_service_(app|reader)" does not exist/);

    await onTarget('drop database tenants');
    await onTarget(`create database tenants owner ${restoreUser}`);
    const roles = await runProcess('psql', [target.url, '-X', '-q', '-v', `service_user=${restoreUser}`, '-f', 'docs/sql/create-roles.sql'], { cwd: ROOT, env });
    expect(roles).toMatchObject({ code: 0, stderr: '' });
    expect(await pgRestore()).toMatchObject({ code: 0, stderr: '' });
  });

  it('the restored service resolves the member and verifies the tenant token issued before the dump', async () => {
    fs.cpSync(dataDir, restoredDataDir, { recursive: true });
    const server = await start(targetUrl(), restoredDataDir, SECRET);
    const mine = await callProcess(server.baseUrl, 'GET', '/api/tenant', { token: memberToken, tenant: slug });
    expect(mine.status).toBe(200);
    expect(mine.body.membership).toMatchObject({ subject, role: 'member' });
    const members = await callProcess(server.baseUrl, 'GET', '/api/tenant/members', { token: memberToken, tenant: slug });
    expect(members.status).toBe(200);
    expect(members.body.members.map((m: { subject: string }) => m.subject)).toContain(subject);

    const jwks = await callProcess(server.baseUrl, 'GET', '/.well-known/jwks.json');
    const verified = await jwtVerify(tenantToken, createLocalJWKSet(jwks.body), { issuer: TOKEN_ISSUER, audience: TOKEN_AUDIENCE, typ: 'at+jwt', algorithms: ['ES256'] });
    expect(verified.payload).toMatchObject({ sub: subject, tenant_slug: slug });
    // The same (encrypted) private key signs on: the secret came along.
    const again = await callProcess(server.baseUrl, 'POST', '/api/tenant/token', { token: memberToken, tenant: slug });
    expect(again.status).toBe(200);
    expect(JSON.parse(Buffer.from(again.body.access_token.split('.')[0], 'base64url').toString()).kid).toBe(kid);
    await stopServer(server);
  });

  it('a restore with --no-privileges leaves the runtime role without rights (the start does not grant them): one line says so', async () => {
    await onTarget(`create database tenants_no_privileges owner ${restoreUser}`);
    expect(await pgRestore('tenants_no_privileges', '--no-privileges')).toMatchObject({ code: 0, stderr: '' });
    const server = await launch(targetUrl('tenants_no_privileges'), restoredDataDir, SECRET);
    expect((await server.exited).code).toBe(1);
    const fatal = server.logs.filter((l) => l.level === 60).map((l) => String(l.msg));
    expect(fatal).toHaveLength(1);
    expect(fatal[0]).toMatch(/^tenant-service failed to start: permission denied for table \w+: the database's grants to tenant_service_app and tenant_service_reader are missing \(a pg_restore with --no-privileges\?\), see docs\/operations.md "Backup and restore"$/);
    expect(server.stderr()).toBe('');
  });

  it('without SERVICE_KEY_ENCRYPTION_SECRET the restored service cannot sign tenant tokens', async () => {
    const server = await start(targetUrl(), restoredDataDir, null);
    const refused = await callProcess(server.baseUrl, 'POST', '/api/tenant/token', { token: memberToken, tenant: slug });
    expect(refused.status).toBe(503);
    await stopServer(server);
  });
});
