/**
 * Webhook endpoints cannot hurt other tenants or each other (docs/events.md#webhooks), on a
 * database of its own with real HTTP receivers and the delivery worker in-process:
 * - deleting or disabling an endpoint while another tenant writes, with a receiver that never
 *   answers (the worker holding one of the endpoint's deliveries) and with a healthy one: every
 *   write succeeds and the DELETE/PUT answers; a deleted endpoint's deliveries are never sent
 *   and are removed;
 * - an endpoint that never answers holds only its own slot: a healthy endpoint's deliveries all
 *   arrive in far less time than serial 10 s timeouts would take;
 * - one delivery in flight per endpoint, across two workers sharing the database.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import knexFactory, { type Knex } from 'knex';
import request from 'supertest';
import { sweepDeletedEndpointDeliveries } from '../../src/domain/webhooks';
import { startWebhookWorker, type WebhookWorker } from '../../src/workers/webhook-delivery';
import { startTestApp, type TestApp } from '../helpers/app';
import { createFreshDatabase, type FreshDatabase } from '../helpers/fresh-database';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver';
import { adminToken, unique } from '../helpers/factories';

jest.setTimeout(180_000);

let fresh: FreshDatabase;
let t: TestApp;
let owner: Knex;
let server: http.Server;
let base: string;
const receivers: Receiver[] = [];
const workers: WebhookWorker[] = [];
const admin = `Bearer ${adminToken(unique('iso-admin'))}`;
let writerSlug: string;

beforeAll(async () => {
  fresh = await createFreshDatabase('tenant_service_hook_iso');
  t = await startTestApp(
    { SERVICE_DATABASE_URL: fresh.url, SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
    { poolMax: 10 },
  );
  owner = knexFactory({ client: 'pg', connection: fresh.url, pool: { min: 0, max: 2 } });
  server = http.createServer(t.app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The other tenant, whose writes must not notice any webhook change.
  writerSlug = unique('writer');
  await request(t.app).post('/api/setup/tenant').set('Authorization', admin).send({ name: 'Writer', slug: writerSlug }).expect(201);
}, 120_000);

afterAll(async () => {
  for (const r of receivers) r.releaseHanging();
  await Promise.all(workers.map((w) => w.stop()));
  for (const r of receivers) await r.close();
  await new Promise<void>((r) => server?.close(() => r()));
  await owner?.destroy();
  await t?.close();
  await fresh?.drop();
});

afterEach(async () => {
  for (const r of receivers) r.releaseHanging();
  await Promise.all(workers.splice(0).map((w) => w.stop()));
  // Endpoints of one test never receive the next test's events.
  await owner('webhook_endpoints').update({ enabled: false });
});

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

function worker(opts: { timeoutMs?: number; concurrency?: number; db?: Knex } = {}): WebhookWorker {
  const w = startWebhookWorker({
    db: opts.db ?? t.db,
    logger: t.services.logger,
    pollIntervalMs: 50,
    timeoutMs: opts.timeoutMs,
    concurrency: opts.concurrency,
    allowPrivateNetworks: true,
    sweepIntervalMs: 200,
  });
  workers.push(w);
  return w;
}

async function endpoint(url: string, events = ['*']): Promise<string> {
  const r = await request(t.app).post('/api/setup/webhooks').set('Authorization', admin).send({ url, events });
  expect(r.status).toBe(201);
  return r.body.webhook_id as string;
}

/** One board write in the writer tenant, over real HTTP; its status. */
async function write(i: number): Promise<number> {
  const r = await fetch(`${base}/api/boards`, {
    method: 'POST',
    headers: { Authorization: admin, 'X-Tenant': writerSlug, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: `Board ${i}` }),
  });
  await r.arrayBuffer();
  return r.status;
}

async function call(method: string, path: string, body?: unknown): Promise<number> {
  const r = await fetch(`${base}${path}`, {
    method,
    headers: { Authorization: admin, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  await r.arrayBuffer();
  return r.status;
}

function countStatuses(statuses: number[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const s of statuses) out[s] = (out[s] ?? 0) + 1;
  return out;
}

async function until(what: string, fn: () => Promise<boolean>, boundMs = 60_000): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function deliveryCount(webhookId: string): Promise<number> {
  const [row] = (await owner('webhook_deliveries').where({ webhook_id: webhookId }).count({ n: '*' })) as Array<{ n: string }>;
  return Number(row!.n);
}

/** `n` writes at once with `change` issued among them; every status. */
async function writesAround(n: number, change: () => Promise<number>): Promise<{ writes: number[]; change: number }> {
  const first = Array.from({ length: n / 2 }, (_, i) => write(i));
  const changed = change();
  const second = Array.from({ length: n / 2 }, (_, i) => write(n / 2 + i));
  const [writes, status] = await Promise.all([Promise.all([...first, ...second]), changed]);
  return { writes, change: status };
}

describe('deleting or disabling an endpoint never fails another tenant’s writes', () => {
  it('DELETE with a receiver that never answers, while the worker holds one of its deliveries', async () => {
    const dead = await receiver();
    dead.respond(() => 'hang');
    const id = await endpoint(`${dead.url}/never`);
    for (let i = 0; i < 5; i++) expect(await write(i)).toBe(201); // a backlog of pending deliveries
    worker({ timeoutMs: 60_000 });
    await dead.waitFor(1); // the worker now holds one delivery's row lock for up to 60 s

    const r = await writesAround(24, () => call('DELETE', `/api/setup/webhooks/${id}`));
    expect(r.change).toBe(204);
    expect(countStatuses(r.writes)).toEqual({ 201: 24 });
    expect(await call('GET', `/api/setup/webhooks/${id}`)).toBe(404);

    // The held attempt ends; nothing more is sent to the deleted endpoint, and its deliveries go.
    dead.releaseHanging();
    await until('the deleted endpoint’s deliveries are removed', async () => (await deliveryCount(id)) === 0);
    expect(dead.received.length).toBe(1);
  });

  it('DELETE with a healthy receiver under many concurrent writes', async () => {
    const ok = await receiver();
    const id = await endpoint(`${ok.url}/healthy`);
    worker();
    const r = await writesAround(100, () => call('DELETE', `/api/setup/webhooks/${id}`));
    expect(r.change).toBe(204);
    expect(countStatuses(r.writes)).toEqual({ 201: 100 });
    // Outbox rows written while the delete committed are left to the sweep, and swept.
    await sweepDeletedEndpointDeliveries(t.db);
    await until('the deleted endpoint’s deliveries are removed', async () => (await deliveryCount(id)) === 0);
  });

  it('disabling, with a receiver that never answers and with a healthy one', async () => {
    for (const answer of ['hang', 200] as const) {
      const rcv = await receiver();
      rcv.respond(() => answer);
      const id = await endpoint(`${rcv.url}/disable`);
      for (let i = 0; i < 3; i++) expect(await write(i)).toBe(201);
      const w = worker({ timeoutMs: 60_000 });
      await rcv.waitFor(1);
      const r = await writesAround(40, () => call('PUT', `/api/setup/webhooks/${id}`, { enabled: false }));
      expect({ answer, change: r.change, writes: countStatuses(r.writes) }).toEqual({ answer, change: 200, writes: { 201: 40 } });
      rcv.releaseHanging();
      await w.stop();
      workers.splice(workers.indexOf(w), 1);
    }
  });
});

describe('endpoints are independent', () => {
  it('a healthy endpoint is delivered on time while two endpoints never answer', async () => {
    const dead = [await receiver(), await receiver()];
    for (const d of dead) d.respond(() => 'hang');
    const ok = await receiver();
    for (const d of dead) await endpoint(`${d.url}/dead`, ['board.created']);
    const okId = await endpoint(`${ok.url}/ok`, ['board.created']);
    for (let i = 0; i < 12; i++) expect(await write(i)).toBe(201);
    // The worker's defaults: 10 s timeout, 4 in flight, 1 per endpoint. Serial timeouts would need
    // 24 × 10 s before the last healthy delivery; the bound below is far less.
    worker();
    await ok.waitFor(12, 40_000);
    await until('all 12 recorded as delivered', async () => {
      const [row] = (await owner('webhook_deliveries').where({ webhook_id: okId, status: 'delivered' }).count({ n: '*' })) as Array<{ n: string }>;
      return Number(row!.n) === 12;
    });
    // A dead endpoint never had more than its one slot.
    for (const d of dead) expect(d.maxInFlight()).toBe(1);
    expect(ok.received.length).toBe(12);
  });

  it('two workers on one database keep one delivery in flight per endpoint', async () => {
    const slow = await receiver();
    slow.respond(() => 'hang');
    await endpoint(`${slow.url}/slow`, ['board.created']);
    for (let i = 0; i < 6; i++) expect(await write(i)).toBe(201);
    const second = knexFactory({ client: 'pg', connection: fresh.url, pool: { min: 0, max: 5 } });
    try {
      // Short timeouts so attempts come and go while both workers look for work.
      worker({ timeoutMs: 300 });
      worker({ timeoutMs: 300, db: second });
      await slow.waitFor(6);
      expect(slow.maxInFlight()).toBe(1);
    } finally {
      slow.releaseHanging();
      await Promise.all(workers.splice(0).map((w) => w.stop()));
      await second.destroy();
    }
  });
});
