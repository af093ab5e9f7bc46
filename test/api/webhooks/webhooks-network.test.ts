/**
 * The webhook network rule (docs/events.md#webhooks), on a database of its own with real receivers:
 * - URLs on loopback, private, link-local (cloud metadata), unspecified and internal networks,
 *   in every spelling (IPv4 shorthands, IPv6, IPv4-mapped IPv6, names that resolve there), are
 *   refused on create and on update with 400, and nothing is stored;
 * - the rule is checked again when a delivery connects: an endpoint saved while private networks
 *   were allowed is not reached by a worker that does not allow them;
 * - an attempt's recorded error is a category only ("connection failed", "timed out",
 *   "HTTP 401"), never the socket's message, so the log cannot tell an open port from a closed one.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { startWebhookWorker, type WebhookWorker } from '../../../src/workers/webhook-delivery';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createFreshDatabase, type FreshDatabase } from '../../helpers/fresh-database';
import { startReceiver, type Receiver } from '../../helpers/webhook-receiver';
import { adminToken, unique } from '../../helpers/factories';

jest.setTimeout(120_000);

let fresh: FreshDatabase;
/** The rule in force (the default). */
let strict: TestApp;
/** SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS=true on the same database. */
let lenient: TestApp;
const workers: WebhookWorker[] = [];
const closers: Array<() => Promise<void>> = [];
const admin = `Bearer ${adminToken(unique('net-admin'))}`;

beforeAll(async () => {
  fresh = await createFreshDatabase('tenant_service_hook_net');
  strict = await startTestApp({ SERVICE_DATABASE_URL: fresh.url, SERVICE_MULTI_TENANT_MODE: 'true' });
  lenient = await startTestApp({ SERVICE_DATABASE_URL: fresh.url, SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
}, 90_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  for (const close of closers) await close();
  await lenient?.close();
  await strict?.close();
  await fresh?.drop();
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
  await strict.db('webhook_endpoints').update({ enabled: false });
});

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  closers.push(() => r.close());
  return r;
}

function worker(opts: { allowPrivateNetworks: boolean; timeoutMs?: number }): void {
  workers.push(
    startWebhookWorker({
      db: strict.db,
      logger: strict.services.logger,
      pollIntervalMs: 50,
      backoffMs: [3_600_000], // one attempt each within the test
      timeoutMs: opts.timeoutMs ?? 5_000,
      allowPrivateNetworks: opts.allowPrivateNetworks,
    }),
  );
}

interface Attempt {
  status_code: number | null;
  error: string | null;
}

async function firstAttempt(app: TestApp, id: string, boundMs = 60_000): Promise<Attempt> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const r = await request(app.app).get(`/api/setup/webhooks/${id}/deliveries`).set('Authorization', admin).expect(200);
    const a = (r.body.deliveries as Array<{ attempts: Attempt[] }>)[0]?.attempts[0];
    if (a) return a;
    if (Date.now() > deadline) throw new Error(`no attempt recorded for ${id}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

async function createTenantEvent(): Promise<void> {
  await request(strict.app).post('/api/setup/tenant').set('Authorization', admin).send({ name: 'Net', slug: unique('net') }).expect(201);
}

async function endpointCount(): Promise<number> {
  const [row] = (await strict.db('webhook_endpoints').count({ n: '*' })) as Array<{ n: string }>;
  return Number(row!.n);
}

const REFUSED_URLS = [
  'http://127.0.0.1/hook',
  'http://127.1:6379/',
  'http://2130706433/',
  'http://0x7f000001/',
  'http://0.0.0.0:5432/',
  'http://10.0.0.5/',
  'http://172.16.3.4/',
  'http://192.168.0.10/',
  'http://100.64.1.1/',
  'http://169.254.169.254/latest/meta-data/',
  'http://metadata.google.internal/computeMetadata/v1/',
  'http://[::1]:5432/',
  'http://[::]/',
  'http://[fc00::1]/',
  'http://[fd00:ec2::254]/',
  'http://[fe80::1]/',
  'http://[::ffff:127.0.0.1]:6379/',
  'http://[::ffff:169.254.169.254]/',
  'http://[0:0:0:0:0:ffff:7f00:1]/',
  // Names: `localhost` because it resolves to 127.0.0.1 (and ::1); the others by their reserved suffix.
  'https://localhost:8443/',
  'http://LOCALHOST./',
  'http://api.localhost/',
];

describe('refused on create and update', () => {
  it.each(REFUSED_URLS)('POST %s → 400, nothing stored', async (url) => {
    const before = await endpointCount();
    const r = await request(strict.app).post('/api/setup/webhooks').set('Authorization', admin).send({ url, events: ['tenant.*'] });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'Validation error', detail: expect.stringMatching(/^body\.url's host is on a [a-z-]+ network; webhooks may reach only public addresses/) });
    expect(await endpointCount()).toBe(before);
  });

  it('PUT with each refused URL → 400 and the endpoint is unchanged', async () => {
    const created = await request(strict.app)
      .post('/api/setup/webhooks')
      .set('Authorization', admin)
      .send({ url: 'https://192.0.2.10/hook', events: ['tenant.*'], enabled: false })
      .expect(201);
    const id = created.body.webhook_id as string;
    for (const url of REFUSED_URLS) {
      const r = await request(strict.app).put(`/api/setup/webhooks/${id}`).set('Authorization', admin).send({ url, description: 'moved' });
      expect({ url, status: r.status, error: r.body.error }).toEqual({ url, status: 400, error: 'Validation error' });
    }
    const got = await request(strict.app).get(`/api/setup/webhooks/${id}`).set('Authorization', admin).expect(200);
    expect(got.body).toMatchObject({ url: 'https://192.0.2.10/hook', description: null });
    // A public address is accepted.
    await request(strict.app).put(`/api/setup/webhooks/${id}`).set('Authorization', admin).send({ url: 'https://192.0.2.11/hook' }).expect(200);
  });

  it('SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS=true accepts them', async () => {
    for (const url of ['http://127.0.0.1:9/hook', 'http://[::1]:9/', 'http://localhost:9/']) {
      await request(lenient.app).post('/api/setup/webhooks').set('Authorization', admin).send({ url, events: ['tenant.*'], enabled: false }).expect(201);
    }
  });
});

describe('checked again at connect time', () => {
  it('an endpoint saved while private networks were allowed is never reached by a worker that refuses them', async () => {
    const rcv = await receiver();
    const port = new URL(rcv.url).port;
    const ids: string[] = [];
    // Saved through the instance that allows private networks (by address and by a name that resolves there).
    for (const url of [`${rcv.url}/by-address`, `http://localhost:${port}/by-name`]) {
      const r = await request(lenient.app).post('/api/setup/webhooks').set('Authorization', admin).send({ url, events: ['tenant.created'] }).expect(201);
      ids.push(r.body.webhook_id as string);
    }
    worker({ allowPrivateNetworks: false });
    await createTenantEvent();
    for (const id of ids) expect(await firstAttempt(strict, id)).toEqual(expect.objectContaining({ status_code: null, error: 'connection failed' }));
    expect(rcv.received).toEqual([]);
    // The operator's log says why; the API never does.
    const reasons = strict.logs.filter((l) => l.msg === 'Webhook delivery failed; will retry' && ids.includes(l.webhook_id as string)).map((l) => l.reason);
    expect(reasons).toEqual(['webhook address refused: loopback network', 'webhook address refused: loopback network']);
  });
});

describe('recorded errors are categories', () => {
  it('refused port, no answer, reset connection and HTTP 401', async () => {
    // A port nothing listens on.
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const closedPort = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    // A server that accepts and drops every connection.
    const dropper = net.createServer((s) => s.destroy());
    await new Promise<void>((r) => dropper.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise<void>((r) => dropper.close(() => r())));
    const hang = await receiver();
    hang.respond(() => 'hang');
    const denied = await receiver();
    denied.respond(() => 401);

    const targets = {
      refused: `http://127.0.0.1:${closedPort}/x`,
      reset: `http://127.0.0.1:${(dropper.address() as AddressInfo).port}/x`,
      silent: `${hang.url}/x`,
      denied: `${denied.url}/x`,
    };
    const ids: Record<string, string> = {};
    for (const [name, url] of Object.entries(targets)) {
      const r = await request(lenient.app).post('/api/setup/webhooks').set('Authorization', admin).send({ url, events: ['tenant.created'] }).expect(201);
      ids[name] = r.body.webhook_id as string;
    }
    worker({ allowPrivateNetworks: true, timeoutMs: 500 });
    await createTenantEvent();
    const seen: Record<string, Attempt> = {};
    for (const [name, id] of Object.entries(ids)) {
      const a = await firstAttempt(strict, id);
      seen[name] = { status_code: a.status_code, error: a.error };
    }
    expect(seen).toEqual({
      refused: { status_code: null, error: 'connection failed' },
      reset: { status_code: null, error: 'connection failed' },
      silent: { status_code: null, error: 'timed out' },
      denied: { status_code: 401, error: 'HTTP 401' },
    });
    hang.releaseHanging();
  });
});
