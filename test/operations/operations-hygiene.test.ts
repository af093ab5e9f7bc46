/**
 * Operations hygiene: what an operator sees when something around the service is wrong.
 *
 * - `npm run test:pgbouncer` on a machine without PgBouncer: the global setup fails with a reason
 *   that says what to do, and leaves no `tenant_service_test_*` database behind (checked on a
 *   private PostgreSQL cluster, so other runs' databases on the shared server do not matter).
 * - SERVICE_PORT already taken: the server logs one line naming SERVICE_PORT, no stack, exits 1,
 *   and stops the embedded PostgreSQL it had started (nothing left running, no lock left).
 * - 4xx access lines carry the body's `detail` beside its `error`.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import request from 'supertest';
import { startTestApp, type TestApp } from '../helpers/app';
import { createThrowawayCluster, type ThrowawayCluster } from '../helpers/pg-cluster';
import globalSetup from '../setup/global-setup';
import { buildOnce, pidsWithArg, startServerProcess, type ServerProcess } from '../helpers/server-process';
import { closeOwnerConnection, tokenFor, unique } from '../helpers/factories';

jest.setTimeout(240_000);

describe('npm run test:pgbouncer without PgBouncer installed', () => {
  let cluster: ThrowawayCluster;
  const saved: Record<string, string | undefined> = {};
  const KEYS = ['TEST_PG_URL', 'TEST_PGBOUNCER', 'PGBOUNCER_BIN', 'PATH', 'TEST_DATABASE_URL', 'TEST_DATABASE_NAME', 'TEST_RUNTIME_DATABASE_URL'];

  beforeAll(async () => {
    cluster = await createThrowawayCluster();
    await cluster.start();
  });
  afterAll(async () => {
    await cluster?.destroy();
  });

  it('the global setup fails saying what to do, and leaves no test database behind', async () => {
    for (const k of KEYS) saved[k] = process.env[k];
    let failure: unknown = null;
    try {
      process.env.TEST_PG_URL = cluster.url;
      process.env.TEST_PGBOUNCER = '1';
      // Not installed: nothing at PGBOUNCER_BIN, and a PATH without it.
      process.env.PGBOUNCER_BIN = path.join(os.tmpdir(), unique('no-pgbouncer'), 'pgbouncer');
      process.env.PATH = '/usr/bin:/bin';
      await globalSetup().catch((e: unknown) => (failure = e));
    } finally {
      for (const k of KEYS) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
    }
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toMatch(/^pgbouncer not found at PGBOUNCER_BIN=\S+: point PGBOUNCER_BIN at the pgbouncer binary, or unset it$/);

    const c = new Client({ connectionString: cluster.url });
    await c.connect();
    try {
      const left = await c.query("select datname from pg_database where datname like 'tenant_service_test_%'");
      expect(left.rows).toEqual([]);
    } finally {
      await c.end();
    }
  });
});

describe('SERVICE_PORT already in use', () => {
  let blocker: net.Server;
  let dataDir: string;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    await buildOnce();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenant-service-port-'));
    fs.chmodSync(dataDir, 0o755); // the postgres system user (as root) must reach <dataDir>/pg
  });
  afterAll(async () => {
    if (server && server.proc.exitCode === null) server.proc.kill('SIGKILL');
    for (const pid of pidsWithArg(path.join(dataDir, 'pg'))) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    await new Promise((r) => blocker?.close(r));
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('logs one line naming SERVICE_PORT, no stack, exits 1 and leaves the embedded PostgreSQL stopped', async () => {
    blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;

    // The embedded database (no SERVICE_DATABASE_URL): it is up by the time the port is tried.
    server = startServerProcess(port, { SERVICE_DATA_DIR: dataDir, SERVICE_RATE_LIMIT_ENABLED: 'false', SERVICE_LOG_LEVEL: 'info' });
    const exit = await server.exited;
    expect(exit).toEqual({ code: 1, signal: null });
    expect(server.logs.some((l) => l.msg === 'Embedded PostgreSQL started')).toBe(true);

    const fatal = server.logs.filter((l) => l.level === 60);
    expect(fatal).toHaveLength(1);
    expect(fatal[0]!.msg).toBe(`Port ${port} is already in use on 127.0.0.1: stop what listens there, or set SERVICE_PORT to a free port`);
    expect(server.logs.every((l) => typeof l.level === 'number')).toBe(true); // JSON only, on stdout
    expect(server.stderr()).toBe('');
    expect(JSON.stringify(server.logs)).not.toMatch(/\\n\s+at /);

    // Nothing left behind: the PostgreSQL it started is stopped and its lock released.
    for (let waited = 0; pidsWithArg(path.join(dataDir, 'pg')).length > 0 && waited < 30_000; waited += 200) await new Promise((r) => setTimeout(r, 200));
    expect(pidsWithArg(path.join(dataDir, 'pg'))).toEqual([]);
    expect(fs.existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
    expect(fs.existsSync(path.join(dataDir, 'pg.lock'))).toBe(false);
  });
});

describe('4xx access lines', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
  });
  afterAll(async () => {
    await t?.close();
    await closeOwnerConnection();
  });

  it('carry the body’s detail as well as its error', async () => {
    const member = `Bearer ${tokenFor({ sub: unique('ops') })}`;
    const answers = [
      await request(t.app).get('/api/tenant').set('Authorization', 'Bearer not-a-token'), // 401
      await request(t.app).get('/api/setup/tenants').set('Authorization', member), // 403
      await request(t.app).get('/api/no-such-thing').set('Authorization', member), // 404
      await request(t.app).post('/api/tenants/register').set('Authorization', member).send({ name: '' }), // 400
    ];
    expect(answers.map((r) => r.status)).toEqual([401, 403, 404, 400]);
    for (const r of answers) {
      const line = t.logs.find((l) => l.msg === 'request completed' && l.request_id === r.headers['x-request-id']);
      expect(typeof r.body.detail).toBe('string');
      expect(line).toMatchObject({ status: r.status, error: r.body.error, detail: r.body.detail });
    }
  });
});
