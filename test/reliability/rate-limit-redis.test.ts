/**
 * Rate limits with SERVICE_REDIS_URL: two instances share the counters, and a Redis outage (a
 * real redis-server on a spare port, stopped and started again) lets requests pass, is logged,
 * shows in /readyz, and counting resumes when Redis returns. Also booting while Redis is down.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { once } from 'node:events';
import request from 'supertest';
import { createClient } from '@redis/client';
import { startTestApp, type TestApp } from '../helpers/app';
import { closeOwnerConnection, tokenFor, unique } from '../helpers/factories';

const SHARED_REDIS = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const bearer = (token: string) => `Bearer ${token}`;
const prefixes: string[] = [];
const children = new Set<ChildProcess>();
const apps: TestApp[] = [];

/** A key prefix of this test's own, removed from the shared Redis afterwards. */
function testPrefix(): string {
  const p = `${unique('rl-test')}:`;
  prefixes.push(p);
  return p;
}

async function app(env: Record<string, string>): Promise<TestApp> {
  const a = await startTestApp({ SERVICE_RATE_LIMIT_ENABLED: 'true', ...env });
  apps.push(a);
  return a;
}

async function spareTcpPort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as net.AddressInfo).port;
  server.close();
  await once(server, 'close');
  return port;
}

/** Resolves when a PING on the port answers PONG; bounded. */
async function waitForPong(port: number): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.setTimeout(500);
      socket.once('connect', () => socket.write('PING\r\n'));
      socket.once('data', (d) => {
        socket.destroy();
        resolve(d.toString().startsWith('+PONG'));
      });
      socket.once('error', () => resolve(false));
      socket.once('timeout', () => {
        socket.destroy();
        resolve(false);
      });
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`redis-server on port ${port} did not answer`);
}

async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  children.add(child);
  child.once('exit', () => children.delete(child));
  await waitForPong(port);
  return child;
}

async function stopRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

/** Polls /readyz until rate_limit_store is `want` (bounded), returning the last body. */
async function readinessStore(t: TestApp, want: string): Promise<string> {
  let last = '';
  for (let attempt = 0; attempt < 150; attempt++) {
    const r = await request(t.app).get('/readyz').expect(200);
    last = r.body.rate_limit_store as string;
    if (last === want) return last;
    await new Promise((res) => setTimeout(res, 100));
  }
  return last;
}

const register = (t: TestApp, token: string) => request(t.app).post('/api/tenants/register').set('Authorization', bearer(token)).send({});

afterAll(async () => {
  for (const a of apps) await a.close();
  for (const c of [...children]) await stopRedis(c);
  const client = createClient({ url: SHARED_REDIS });
  await client.connect();
  for (const p of prefixes) {
    for await (const keys of client.scanIterator({ MATCH: `${p}*`, COUNT: 100 })) {
      if (keys.length) await client.del(keys);
    }
  }
  await client.close();
  await closeOwnerConnection();
});

describe('two instances on one Redis', () => {
  it('share the counter: the limit spent across both refuses the next request on either', async () => {
    const prefix = testPrefix();
    const a = await app({ SERVICE_REDIS_URL: SHARED_REDIS, SERVICE_REDIS_KEY_PREFIX: prefix });
    const b = await app({ SERVICE_REDIS_URL: SHARED_REDIS, SERVICE_REDIS_KEY_PREFIX: prefix });
    expect((await request(a.app).get('/readyz').expect(200)).body.rate_limit_store).toBe('redis');

    const token = tokenFor();
    expect((await register(a, token).expect(400)).headers['x-ratelimit-remaining']).toBe('2');
    expect((await register(b, token).expect(400)).headers['x-ratelimit-remaining']).toBe('1');
    expect((await register(a, token).expect(400)).headers['x-ratelimit-remaining']).toBe('0');
    const onB = await register(b, token).expect(429);
    expect(onB.body.error).toBe('Rate limit exceeded');
    expect(onB.headers['retry-after']).toMatch(/^\d+$/);
    expect(onB.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
    await register(a, token).expect(429);

    // The counters live under the configured prefix plus the row name.
    const client = createClient({ url: SHARED_REDIS });
    await client.connect();
    const keys: string[] = [];
    for await (const batch of client.scanIterator({ MATCH: `${prefix}*` })) keys.push(...batch);
    await client.close();
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(new RegExp(`^${prefix}rate-limit:register:caller:`));
  });
});

describe('Redis outage', () => {
  it('requests pass and it is logged (once), /readyz says degraded, and counting resumes when Redis returns', async () => {
    const port = await spareTcpPort();
    let redis = await startRedis(port);
    const t = await app({ SERVICE_REDIS_URL: `redis://127.0.0.1:${port}`, SERVICE_REDIS_KEY_PREFIX: testPrefix() });
    expect(await readinessStore(t, 'redis')).toBe('redis');
    const token = tokenFor();
    expect((await register(t, token).expect(400)).headers['x-ratelimit-remaining']).toBe('2');

    await stopRedis(redis);
    expect(await readinessStore(t, 'degraded')).toBe('degraded');
    // More requests than the limit: none is refused, none fails.
    for (let i = 0; i < 5; i++) {
      const r = await register(t, token);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('Validation error');
    }
    const outageLines = t.logs.filter((l) => l.level === 50 && String(l.msg).startsWith('Rate limit store (Redis) unavailable'));
    expect(outageLines).toHaveLength(1);

    redis = await startRedis(port);
    expect(await readinessStore(t, 'redis')).toBe('redis');
    expect(t.logs.some((l) => l.msg === 'Rate limit store (Redis) connected again; counting resumes')).toBe(true);
    // The restarted Redis is empty: a fresh window, counted again up to the limit.
    expect((await register(t, token).expect(400)).headers['x-ratelimit-remaining']).toBe('2');
    await register(t, token).expect(400);
    await register(t, token).expect(400);
    await register(t, token).expect(429);
  });

  it('boots degraded when Redis is unreachable, and counts once it appears', async () => {
    const port = await spareTcpPort();
    const t = await app({ SERVICE_REDIS_URL: `redis://127.0.0.1:${port}`, SERVICE_REDIS_KEY_PREFIX: testPrefix() });
    expect((await request(t.app).get('/readyz').expect(200)).body.rate_limit_store).toBe('degraded');
    expect(t.logs.some((l) => l.msg === 'Rate limit store (Redis) unreachable at boot; starting degraded')).toBe(true);
    const token = tokenFor();
    for (let i = 0; i < 4; i++) await register(t, token).expect(400);

    await startRedis(port);
    expect(await readinessStore(t, 'redis')).toBe('redis');
    for (let i = 0; i < 3; i++) await register(t, token).expect(400);
    const r = await register(t, token).expect(429);
    expect(r.headers['ratelimit']).toMatch(/^"register"; r=0; /);
  });
});
