/**
 * The delivery worker in real server processes (`node dist/src/server.js`) on a database of
 * their own, with a real HTTP receiver:
 * - two instances on one database deliver each event exactly once;
 * - an instance killed with SIGKILL while deliveries are in flight and queued loses none: they
 *   are delivered after a restart;
 * - SIGTERM stops an instance cleanly (exit 0, worker stopped).
 */
import knexFactory, { type Knex } from 'knex';
import { Webhook } from 'standardwebhooks';
import { TEST_DATA_DIR } from '../../helpers/app';
import { createFreshDatabase, type FreshDatabase } from '../../helpers/fresh-database';
import { freePort } from '../../helpers/pg-cluster';
import { buildOnce, startServerProcess, stopServer, waitUntilReady, type ServerProcess } from '../../helpers/server-process';
import { startReceiver, type Receiver } from '../../helpers/webhook-receiver';
import { adminToken, unique } from '../../helpers/factories';

jest.setTimeout(240_000);

let fresh: FreshDatabase;
let owner: Knex;
let receiver: Receiver;
const started: ServerProcess[] = [];
const admin = { Authorization: `Bearer ${adminToken()}`, 'Content-Type': 'application/json' };

beforeAll(async () => {
  await buildOnce();
  fresh = await createFreshDatabase('tenant_service_hooks_proc');
  owner = knexFactory({ client: 'pg', connection: fresh.url, pool: { min: 0, max: 2 } });
  receiver = await startReceiver();
}, 180_000);

afterAll(async () => {
  for (const s of started) await stopServer(s, 'SIGKILL');
  await receiver?.close();
  await owner?.destroy();
  await fresh?.drop();
});

async function startInstance(): Promise<ServerProcess> {
  const port = await freePort();
  const s = startServerProcess(port, {
    SERVICE_DATABASE_URL: fresh.url,
    SERVICE_DATA_DIR: TEST_DATA_DIR,
    SERVICE_MULTI_TENANT_MODE: 'true',
    SERVICE_RATE_LIMIT_ENABLED: 'false',
    SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', // the receiver listens on 127.0.0.1
  });
  started.push(s);
  expect(await waitUntilReady(s, 60_000)).toBe(200);
  return s;
}

async function api(s: ServerProcess, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`${s.baseUrl}${path}`, { method, headers: admin, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

async function until(what: string, fn: () => Promise<boolean>, boundMs = 90_000): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function statusCounts(webhookId: string): Promise<Record<string, number>> {
  const rows = (await owner('webhook_deliveries').where({ webhook_id: webhookId }).groupBy('status').select('status').count({ n: '*' })) as Array<{ status: string; n: string }>;
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}

it('two instances on one database deliver each event once', async () => {
  receiver.received.length = 0;
  receiver.respond(() => 200);
  const a = await startInstance();
  const b = await startInstance();
  const hook = await api(a, 'POST', '/api/setup/webhooks', { url: `${receiver.url}/two`, events: ['tenant.*'] });
  expect(hook.status).toBe(201);
  const secret = hook.body.secret as string;
  const webhookId = hook.body.webhook_id as string;

  const N = 20;
  for (let i = 0; i < N; i++) {
    const r = await api(i % 2 ? a : b, 'POST', '/api/setup/tenant', { name: `Twice ${i}`, slug: unique('twice') });
    expect(r.status).toBe(201);
  }
  await until('every delivery delivered', async () => (await statusCounts(webhookId)).delivered === N);
  await new Promise((r) => setTimeout(r, 2_500)); // a few more polling rounds of both instances
  const ids = receiver.received.filter((r) => r.path === '/two').map((r) => r.headers['webhook-id']);
  expect(ids.length).toBe(N);
  expect(new Set(ids).size).toBe(N);
  for (const r of receiver.received) expect(() => new Webhook(secret).verify(r.body, r.headers)).not.toThrow();
  // One attempt per delivery in the database too: no instance sent a delivery the other held.
  const attempts = await owner('webhook_delivery_attempts').count({ n: '*' });
  expect(Number(attempts[0]!.n)).toBe(N);

  // SIGTERM: both stop cleanly, the worker included.
  for (const s of [a, b]) {
    expect(await stopServer(s, 'SIGTERM')).toEqual({ code: 0, signal: null });
    expect(s.logs.some((l) => l.msg === 'Webhook delivery worker stopped')).toBe(true);
  }
  await owner('webhook_endpoints').where({ id: webhookId }).update({ enabled: false });
});

it('an instance killed with SIGKILL mid-delivery loses nothing: a restart delivers every event', async () => {
  receiver.received.length = 0;
  receiver.respond(() => 'hang'); // the receiver never answers: attempts stay in flight
  const c = await startInstance();
  const hook = await api(c, 'POST', '/api/setup/webhooks', { url: `${receiver.url}/kill`, events: ['tenant.created'] });
  expect(hook.status).toBe(201);
  const secret = hook.body.secret as string;
  const webhookId = hook.body.webhook_id as string;
  const N = 3; // two in flight (the worker's two slots), one queued behind them
  for (let i = 0; i < N; i++) expect((await api(c, 'POST', '/api/setup/tenant', { name: `Killed ${i}`, slug: unique('killed') })).status).toBe(201);
  await receiver.waitFor(2);

  expect(await stopServer(c, 'SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
  // Nothing was recorded for the attempts cut off: every delivery is still pending.
  expect(await statusCounts(webhookId)).toEqual({ pending: N });

  receiver.respond(() => 200);
  const restarted = await startInstance();
  await until('every delivery delivered after the restart', async () => (await statusCounts(webhookId)).delivered === N);
  const answered = receiver.received.filter((r) => r.path === '/kill');
  const eventIds = (await owner('webhook_deliveries').where({ webhook_id: webhookId }).pluck('event_id')) as string[];
  // At least once: every event arrived, the ones in flight at the kill twice.
  expect(new Set(answered.map((r) => r.headers['webhook-id']))).toEqual(new Set(eventIds));
  for (const r of answered) expect(() => new Webhook(secret).verify(r.body, r.headers)).not.toThrow();
  expect(await stopServer(restarted, 'SIGTERM')).toEqual({ code: 0, signal: null });
});
