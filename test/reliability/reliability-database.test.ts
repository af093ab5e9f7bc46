/**
 * PostgreSQL stopped under a running service: requests answer 503 `Service unavailable` (the
 * documented Error body, quickly: not 500, not a hang), /readyz answers 503, and the service
 * recovers by itself when the database comes back. Runs against a throwaway cluster on a spare
 * port, so stopping it does not disturb the shared test database.
 */
import request from 'supertest';
import pino from 'pino';
import { migrate } from '../../src/db/database';
import { startTestApp, type TestApp } from '../helpers/app';
import { createThrowawayCluster, type ThrowawayCluster } from '../helpers/pg-cluster';
import { adminToken, tokenFor, unique } from '../helpers/factories';

jest.setTimeout(120_000);

let cluster: ThrowawayCluster;
let t: TestApp;

beforeAll(async () => {
  cluster = await createThrowawayCluster();
  await cluster.start();
  await migrate(cluster.url, 'default', pino({ level: 'silent' }));
  t = await startTestApp({ SERVICE_DATABASE_URL: cluster.url });
});

afterAll(async () => {
  await t?.close();
  await cluster?.destroy();
});

/** Requests that need the database; each must answer 503 while it is down. */
function databaseRequests(): Array<{ name: string; send: () => request.Test }> {
  const member = `Bearer ${tokenFor({ sub: unique('user') })}`;
  const admin = `Bearer ${adminToken()}`;
  return [
    { name: 'GET /api/tenant', send: () => request(t.app).get('/api/tenant').set('Authorization', member) },
    // The gateway decision fails closed: 503, never a 2xx or a 403 a gateway could misread.
    { name: 'GET /api/tenant/decision', send: () => request(t.app).get('/api/tenant/decision').set('Authorization', member) },
    { name: 'POST /api/tenant/decision', send: () => request(t.app).post('/api/tenant/decision').set('Authorization', member) },
    { name: 'GET /api/boards', send: () => request(t.app).get('/api/boards').set('Authorization', member) },
    {
      name: 'POST /api/boards',
      send: () => request(t.app).post('/api/boards').set('Authorization', member).send({ name: 'while down' }),
    },
    { name: 'GET /api/tenant/members', send: () => request(t.app).get('/api/tenant/members').set('Authorization', admin) },
    { name: 'GET /api/setup/status', send: () => request(t.app).get('/api/setup/status').set('Authorization', admin) },
    { name: 'GET /api/setup/tenants', send: () => request(t.app).get('/api/setup/tenants').set('Authorization', admin) },
    { name: 'POST /api/setup/tenant', send: () => request(t.app).post('/api/setup/tenant').set('Authorization', admin).send({ name: 'x', slug: unique('down') }) },
    { name: 'GET /api/setup/audit', send: () => request(t.app).get('/api/setup/audit').set('Authorization', admin) },
    { name: 'GET /api/tenants/mine', send: () => request(t.app).get('/api/tenants/mine').set('Authorization', member) },
  ];
}

// A request must fail fast while the database is down; this bound only catches a hang.
const NO_HANG = { response: 20_000, deadline: 25_000 };

async function readiness(): Promise<number> {
  const r = await request(t.app).get('/readyz').timeout(NO_HANG);
  return r.status;
}

describe('PostgreSQL stopped under a running service', () => {
  it('serves normally while the database is up', async () => {
    expect(await readiness()).toBe(200);
    const r = await request(t.app).get('/api/tenant').set('Authorization', `Bearer ${tokenFor()}`).timeout(NO_HANG);
    expect(r.status).toBe(200);
  });

  it('answers 503 Service unavailable (Error body, Retry-After) and /readyz 503 while it is down', async () => {
    // Warm the pool first, so the stop has to deal with pooled connections the server kills.
    await Promise.all([0, 1, 2].map(() => request(t.app).get('/readyz')));
    await cluster.stop();

    const ready = await request(t.app).get('/readyz').timeout(NO_HANG);
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ status: 'unavailable', database: 'unavailable' });

    for (const { name, send } of databaseRequests()) {
      // Twice: the first meets connections killed by the shutdown, the second a refused connect.
      for (let i = 0; i < 2; i++) {
        const r = await send().timeout(NO_HANG);
        expect({ name, status: r.status, error: r.body.error }).toEqual({ name, status: 503, error: 'Service unavailable' });
        expect(typeof r.body.detail).toBe('string');
        expect(r.body.detail).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|terminat/i);
        expect(r.headers['retry-after']).toMatch(/^\d+$/);
      }
    }
    // Many at once: each still answers 503, none hangs on the pool.
    const burst = await Promise.all(Array.from({ length: 20 }, () => databaseRequests()[0]!.send().timeout(NO_HANG)));
    expect(burst.map((r) => r.status)).toEqual(Array(20).fill(503));
    expect(t.logs.some((l) => l.msg === 'Unhandled error')).toBe(false);
  });

  it('recovers by itself when the database returns', async () => {
    await cluster.start();
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      status = await readiness();
      if (status !== 200) await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(200);
    for (const { name, send } of databaseRequests()) {
      const r = await send().timeout(NO_HANG);
      expect({ name, ok: r.status >= 200 && r.status < 300 }).toEqual({ name, ok: true });
    }
  });
});
