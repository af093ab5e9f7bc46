/**
 * Dependencies that stop ANSWERING (not stop running): every process of a private PostgreSQL
 * cluster, and a private redis-server, are paused with SIGSTOP — their sockets stay open, so
 * nothing fails fast by itself — and resumed with SIGCONT
 * (docs/security.md#security-and-robustness).
 *
 * - PostgreSQL paused: /readyz answers 503 `database: unavailable` (it gives up after 1.5 s
 *   instead of waiting for the server), requests answer 503 (client-side query timeout) instead
 *   of hanging, and everything recovers by itself on SIGCONT.
 * - The same under the compiled server with its defaults: every request gets its 503 from the
 *   client-side deadline (SERVICE_DATABASE_QUERY_TIMEOUT_MS), long before the 30 s statement
 *   timeout would answer it.
 * - Redis paused: /readyz reports `rate_limit_store: degraded`, requests pass uncounted, and
 *   they stop sending commands to the paused Redis (one timeout trips a breaker): the commands
 *   Redis finds queued on SIGCONT are a handful, not one per request.
 *
 * The shared PostgreSQL and Redis are never touched. No assertion is timed; the `.timeout()`
 * bounds only turn a hang into a failure.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import request from 'supertest';
import { migrate } from '../../src/db/database';
import { startTestApp, TEST_DATA_DIR, type TestApp } from '../helpers/app';
import { createThrowawayCluster, freePort, type ThrowawayCluster } from '../helpers/pg-cluster';
import { buildOnce, startServerProcess, stopServer, waitUntilReady, type ServerProcess } from '../helpers/server-process';
import { closeOwnerConnection, tokenFor, unique } from '../helpers/factories';

jest.setTimeout(180_000);

const run = promisify(execFile);
const NO_HANG = { response: 20_000, deadline: 25_000 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('PostgreSQL paused (SIGSTOP on every process of a private cluster)', () => {
  let cluster: ThrowawayCluster;
  let t: TestApp;
  let pids: number[] = [];
  let paused = false;

  /** The postmaster and its children (backends, checkpointer, …): all ours, found by pid. */
  async function clusterPids(): Promise<number[]> {
    const postmaster = Number(fs.readFileSync(path.join(cluster.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
    const { stdout } = await run('ps', ['-o', 'pid=', '--ppid', String(postmaster)]);
    return [postmaster, ...stdout.split('\n').map((l) => Number(l.trim())).filter((n) => n > 0)];
  }
  const signal = (sig: NodeJS.Signals) => {
    for (const pid of pids) {
      try {
        process.kill(pid, sig);
      } catch {
        /* exited meanwhile */
      }
    }
  };

  beforeAll(async () => {
    cluster = await createThrowawayCluster();
    await cluster.start();
    await migrate(cluster.url, 'default', pino({ level: 'silent' }));
    // A short statement timeout, so the client-side query timeout (statement timeout + 2 s)
    // is short too; production keeps 30 s.
    t = await startTestApp({ SERVICE_DATABASE_URL: cluster.url }, { statementTimeoutMs: 1_000, poolMax: 4 });
  });
  afterAll(async () => {
    if (paused) signal('SIGCONT');
    await t?.close();
    await cluster?.destroy();
  });

  it('serves normally before the pause', async () => {
    await request(t.app).get('/readyz').expect(200);
    await request(t.app).get('/api/tenant').set('Authorization', `Bearer ${tokenFor({ sub: unique('pg') })}`).expect(200);
  });

  it('while paused: /readyz is 503 database unavailable, requests are 503, none hangs', async () => {
    pids = await clusterPids();
    signal('SIGSTOP');
    paused = true;

    const ready = await request(t.app).get('/readyz').timeout(NO_HANG);
    expect(ready.status).toBe(503);
    expect(ready.body).toEqual({ status: 'unavailable', database: 'unavailable', rate_limit_store: 'memory' });

    // Requests that need the database: the client-side timeouts answer them, 503 with Retry-After.
    const member = `Bearer ${tokenFor({ sub: unique('pg') })}`;
    const results = await Promise.all(
      Array.from({ length: 6 }, () => request(t.app).get('/api/tenant').set('Authorization', member).timeout(NO_HANG)),
    );
    for (const r of results) {
      expect({ status: r.status, error: r.body.error }).toEqual({ status: 503, error: 'Service unavailable' });
      expect(r.headers['retry-after']).toMatch(/^\d+$/);
    }
    // Probes keep answering while the pool's connections are stuck or discarded.
    for (let i = 0; i < 3; i++) expect((await request(t.app).get('/readyz').timeout(NO_HANG)).status).toBe(503);
    expect(t.logs.some((l) => l.msg === 'Unhandled error')).toBe(false);
  });

  it('recovers by itself on SIGCONT', async () => {
    signal('SIGCONT');
    paused = false;
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      status = (await request(t.app).get('/readyz').timeout(NO_HANG)).status;
      if (status !== 200) await sleep(200);
    }
    expect(status).toBe(200);
    let api = 0;
    for (let i = 0; i < 20 && api !== 200; i++) {
      api = (await request(t.app).get('/api/tenant').set('Authorization', `Bearer ${tokenFor({ sub: unique('pg') })}`).timeout(NO_HANG)).status;
      if (api !== 200) await sleep(200);
    }
    expect(api).toBe(200);
  });
});

describe('Redis paused (SIGSTOP on a private redis-server)', () => {
  let redis: ChildProcess;
  let port: number;
  let t: TestApp;
  let paused = false;

  /** One command over a fresh socket (the app's own connection is the one under test). */
  function redisCommand(command: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      let data = '';
      socket.setTimeout(10_000);
      socket.once('connect', () => socket.write(`${command}\r\n`));
      socket.on('data', (d) => {
        data += d.toString();
        const m = /^\$(\d+)\r\n/.exec(data);
        if ((m && data.length >= m[0].length + Number(m[1]) + 2) || (!m && data.endsWith('\r\n') && data[0] !== '$')) {
          socket.destroy();
          resolve(data);
        }
      });
      socket.once('error', reject);
      socket.once('timeout', () => {
        socket.destroy();
        reject(new Error(`redis ${command}: no answer`));
      });
    });
  }
  const commandsProcessed = async () => Number(/total_commands_processed:(\d+)/.exec(await redisCommand('INFO stats'))![1]);

  beforeAll(async () => {
    port = await freePort();
    redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    for (let i = 0; i < 100; i++) {
      if (await redisCommand('PING').then((r) => r.startsWith('+PONG'), () => false)) break;
      await sleep(100);
    }
    t = await startTestApp({ SERVICE_RATE_LIMIT_ENABLED: 'true', SERVICE_REDIS_URL: `redis://127.0.0.1:${port}`, SERVICE_REDIS_KEY_PREFIX: `${unique('hung')}:` });
  });
  afterAll(async () => {
    if (paused) redis.kill('SIGCONT');
    await t?.close();
    if (redis.exitCode === null && redis.signalCode === null) {
      const exited = once(redis, 'exit');
      redis.kill('SIGKILL');
      await exited;
    }
    await closeOwnerConnection();
  });

  it('reports redis, degraded while paused (requests pass, without a timeout each), redis again after', async () => {
    const member = `Bearer ${tokenFor({ sub: unique('redis') })}`;
    const first = await request(t.app).get('/api/tenant').set('Authorization', member).expect(200);
    expect(first.headers['ratelimit-policy']).toMatch(/api/);
    expect((await request(t.app).get('/readyz').expect(200)).body.rate_limit_store).toBe('redis');

    const before = await commandsProcessed();
    redis.kill('SIGSTOP');
    paused = true;

    // Readiness notices without any traffic (a health PING times out), and stays ready: the
    // database is fine and requests pass uncounted.
    let state = '';
    for (let i = 0; i < 100 && state !== 'degraded'; i++) {
      const r = await request(t.app).get('/readyz').timeout(NO_HANG);
      expect(r.status).toBe(200);
      state = r.body.rate_limit_store;
      if (state !== 'degraded') await sleep(200);
    }
    expect(state).toBe('degraded');

    const REQUESTS = 30;
    for (let i = 0; i < REQUESTS; i++) {
      const r = await request(t.app).get('/api/tenant').set('Authorization', member).timeout(NO_HANG);
      expect(r.status).toBe(200);
    }

    redis.kill('SIGCONT');
    paused = false;
    await sleep(300); // let Redis work through what was queued on the app's connection
    // Every command sent while Redis was paused is processed now: count them.
    const after = await commandsProcessed();
    // Each counted request sends one EVALSHA; skipping the paused Redis leaves only the health
    // PINGs and the occasional trial command (minus the INFO of `before`).
    expect(after - before - 1).toBeLessThan(REQUESTS / 2);

    let back = '';
    for (let i = 0; i < 100 && back !== 'redis'; i++) {
      back = (await request(t.app).get('/readyz').timeout(NO_HANG)).body.rate_limit_store;
      if (back !== 'redis') await sleep(200);
    }
    expect(back).toBe('redis');
    // And counting resumes.
    let counted = false;
    for (let i = 0; i < 20 && !counted; i++) {
      const r = await request(t.app).get('/api/tenant').set('Authorization', member);
      counted = r.status === 200 && r.headers['x-ratelimit-remaining'] !== undefined;
      if (!counted) await sleep(200);
    }
    expect(counted).toBe(true);
  });
});

describe('PostgreSQL paused under the compiled server with its default deadlines', () => {
  // No timeout option here: the server runs as an operator starts it, with
  // SERVICE_DATABASE_QUERY_TIMEOUT_MS at its default and the 30 s statement timeout.
  let cluster: ThrowawayCluster;
  let server: ServerProcess;
  let pids: number[] = [];
  let paused = false;
  const signal = (sig: NodeJS.Signals) => {
    for (const pid of pids) {
      try {
        process.kill(pid, sig);
      } catch {
        /* exited meanwhile */
      }
    }
  };
  /** One answer, or 0 when none came before the 30 s statement timeout would have fired. */
  async function ask(pathname: string, token: string): Promise<{ status: number; body: Record<string, unknown>; retryAfter: string | null }> {
    try {
      const r = await fetch(`${server.baseUrl}${pathname}`, { headers: { Authorization: token }, signal: AbortSignal.timeout(20_000) });
      return { status: r.status, body: (await r.json()) as Record<string, unknown>, retryAfter: r.headers.get('retry-after') };
    } catch {
      return { status: 0, body: {}, retryAfter: null };
    }
  }

  beforeAll(async () => {
    await buildOnce();
    cluster = await createThrowawayCluster();
    await cluster.start();
    await migrate(cluster.url, 'default', pino({ level: 'silent' }));
    server = startServerProcess(await freePort(), { SERVICE_DATABASE_URL: cluster.url, SERVICE_DATA_DIR: TEST_DATA_DIR, SERVICE_RATE_LIMIT_ENABLED: 'false', SERVICE_LOG_LEVEL: 'info' });
    const status = await waitUntilReady(server, 120_000);
    if (status !== 200) throw new Error(`server not ready (last status ${status}): ${server.stderr()}`);
  });
  afterAll(async () => {
    if (paused) signal('SIGCONT');
    if (server) await stopServer(server, 'SIGKILL');
    await cluster?.destroy();
  });

  it('answers every request 503 before the 30 s statement timeout would, and recovers on SIGCONT', async () => {
    const member = `Bearer ${tokenFor({ sub: unique('pg') })}`;
    expect((await ask('/api/tenant', member)).status).toBe(200);

    const postmaster = Number(fs.readFileSync(path.join(cluster.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
    const { stdout } = await run('ps', ['-o', 'pid=', '--ppid', String(postmaster)]);
    pids = [postmaster, ...stdout.split('\n').map((l) => Number(l.trim())).filter((n) => n > 0)];
    signal('SIGSTOP');
    paused = true;

    // More requests than the pool has connections: some wait for a connection, some for an answer.
    const results = await Promise.all(Array.from({ length: 14 }, () => ask('/api/tenant', member)));
    const outcomes: Record<string, number> = {};
    for (const r of results) {
      const key = `${r.status} ${String(r.body.error ?? '')}`;
      outcomes[key] = (outcomes[key] ?? 0) + 1;
    }
    expect(outcomes).toEqual({ '503 Service unavailable': 14 });
    for (const r of results) {
      expect(typeof r.body.detail).toBe('string');
      expect(r.retryAfter).toMatch(/^\d+$/);
    }
    expect(server.logs.some((l) => l.msg === 'Unhandled error')).toBe(false);

    signal('SIGCONT');
    paused = false;
    let back = 0;
    for (let i = 0; i < 100 && back !== 200; i++) {
      back = (await ask('/api/tenant', member)).status;
      if (back !== 200) await sleep(200);
    }
    expect(back).toBe(200);
  });
});
