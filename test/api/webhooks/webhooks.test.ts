/**
 * Webhooks on a real HTTP receiver, with the delivery worker in-process on a database of its own
 * (so no other test file's worker claims these deliveries), its backoff scaled down to
 * milliseconds (the schedule is injectable; nothing sleeps minutes):
 * - one change → exactly one delivery that `new Webhook(secret).verify` accepts, naming the actor
 *   and the target;
 * - 500, 500, 200 → three attempts, all shown by the deliveries endpoint;
 * - retries exhausted → failed; no answer in time → a timeout attempt; redirects not followed;
 * - endpoint validation (http/https only, no credentials, known event types), the secret shown once;
 * - stop() lets the attempt in flight finish and record it.
 */
import request from 'supertest';
import knexFactory from 'knex';
import { Webhook } from 'standardwebhooks';
import { purgeExpired } from '../../../src/db/queries/retention';
import { startWebhookWorker, type WebhookWorker } from '../../../src/workers/webhook-delivery';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createFreshDatabase, type FreshDatabase } from '../../helpers/fresh-database';
import { startReceiver, type Receiver } from '../../helpers/webhook-receiver';
import { adminToken, tokenFor, unique } from '../../helpers/factories';

jest.setTimeout(90_000);

let fresh: FreshDatabase;
let t: TestApp;
let receiver: Receiver;
let worker: WebhookWorker | null = null;
const adminSub = unique('hook-admin');
const admin = `Bearer ${adminToken(adminSub)}`;
const FAST_BACKOFF = [100, 100, 100, 100, 100, 100, 100, 100];

beforeAll(async () => {
  fresh = await createFreshDatabase('tenant_service_webhooks');
  // The receiver listens on 127.0.0.1: private networks are allowed here (webhooks-network.test.ts checks the rule).
  t = await startTestApp({ SERVICE_DATABASE_URL: fresh.url, SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  receiver = await startReceiver();
}, 60_000);
afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  await t?.close();
  await fresh?.drop();
});
beforeEach(() => {
  receiver.received.length = 0;
  receiver.respond(() => 200);
});
afterEach(async () => {
  await worker?.stop();
  worker = null;
  // Endpoints of one test never receive the next test's events.
  const owner = t.db;
  await owner('webhook_endpoints').update({ enabled: false });
});

function startWorker(opts: { backoffMs?: number[]; timeoutMs?: number } = {}): void {
  worker = startWebhookWorker({
    db: t.db,
    logger: t.services.logger,
    pollIntervalMs: 50,
    backoffMs: opts.backoffMs ?? FAST_BACKOFF,
    timeoutMs: opts.timeoutMs ?? 5_000,
    allowPrivateNetworks: true,
  });
}

async function createEndpoint(events: string[], path = '/hook'): Promise<{ id: string; secret: string }> {
  const r = await request(t.app).post('/api/setup/webhooks').set('Authorization', admin).send({ url: `${receiver.url}${path}`, events, description: 'test receiver' });
  expect(r.status).toBe(201);
  expect(r.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
  return { id: r.body.webhook_id, secret: r.body.secret };
}

async function deliveries(id: string) {
  const r = await request(t.app).get(`/api/setup/webhooks/${id}/deliveries`).set('Authorization', admin).expect(200);
  return r.body.deliveries as Array<{
    event_id: string;
    event_type: string;
    status: string;
    attempt_count: number;
    next_attempt_at: string | null;
    attempts: Array<{ attempt: number; status_code: number | null; duration_ms: number; error: string | null; next_retry_at: string | null }>;
  }>;
}

async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, boundMs = 60_000): Promise<T> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('delivery', () => {
  it('one change → exactly one delivery, verified by standardwebhooks, naming actor and target', async () => {
    const { id, secret } = await createEndpoint(['tenant.*']);
    startWorker();
    const slug = unique('hooked');
    const created = await request(t.app).post('/api/setup/tenant').set('Authorization', admin).send({ name: 'Hooked', slug }).expect(201);
    await receiver.waitFor(1);
    await until('delivered', async () => (await deliveries(id))[0]?.status === 'delivered');
    // A few more polling rounds: nothing is sent twice.
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.received.length).toBe(1);
    const [msg] = receiver.received;
    const verified = new Webhook(secret).verify(msg!.body, msg!.headers) as {
      type: string;
      timestamp: string;
      data: { event_id: string; action: string; tenant_id: string; actor: Record<string, unknown>; target: Record<string, unknown>; data: { tenant: { slug: string } } };
    };
    expect(verified.type).toBe('tenant.created');
    expect(verified.data).toMatchObject({
      action: 'tenant.created',
      tenant_id: created.body.tenant_id,
      actor: { subject: adminSub, platform_admin: true },
      target: { type: 'tenant', id: created.body.tenant_id },
      data: { tenant: { slug } },
    });
    expect(msg!.headers['webhook-id']).toBe(verified.data.event_id);
    expect(msg!.headers['content-type']).toBe('application/json');
    // A wrong secret does not verify.
    expect(() => new Webhook(`whsec_${Buffer.from('x'.repeat(32)).toString('base64')}`).verify(msg!.body, msg!.headers)).toThrow();
    const [d] = await deliveries(id);
    expect(d).toMatchObject({ event_id: verified.data.event_id, event_type: 'tenant.created', status: 'delivered', attempt_count: 1, next_attempt_at: null });
    expect(d!.attempts).toEqual([expect.objectContaining({ attempt: 1, status_code: 200, error: null, next_retry_at: null })]);
  });

  it('only matching event types are sent (member.added, not board.created)', async () => {
    const { id } = await createEndpoint(['member.added']);
    startWorker();
    const slug = unique('typed');
    await request(t.app).post('/api/setup/tenant').set('Authorization', admin).send({ name: 'Typed', slug }).expect(201);
    const h = { Authorization: admin, 'X-Tenant': slug };
    await request(t.app).post('/api/boards').set(h).send({ name: 'not sent' }).expect(201);
    await request(t.app).post('/api/tenant/members').set(h).send({ subject: unique('m'), email: 'm@example.test', role: 'member' }).expect(201);
    await until('delivered', async () => (await deliveries(id))[0]?.status === 'delivered');
    expect((await deliveries(id)).map((d) => d.event_type)).toEqual(['member.added']);
    expect(receiver.received.length).toBe(1);
  });

  it('500, 500, 200 → three attempts, all in the deliveries endpoint', async () => {
    const { id, secret } = await createEndpoint(['tenant.created']);
    receiver.respond((n) => (n < 2 ? 500 : 200));
    startWorker();
    await request(t.app).post('/api/setup/tenant').set('Authorization', admin).send({ name: 'Flaky', slug: unique('flaky') }).expect(201);
    await receiver.waitFor(3);
    const [d] = await until('delivered', async () => {
      const list = await deliveries(id);
      return list[0]?.status === 'delivered' ? list : null;
    });
    expect(receiver.received.length).toBe(3);
    // Every attempt carries the same message id and a valid signature.
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([d!.event_id]));
    for (const r of receiver.received) expect(() => new Webhook(secret).verify(r.body, r.headers)).not.toThrow();
    expect(d!.attempt_count).toBe(3);
    expect(d!.attempts.map((a) => [a.attempt, a.status_code, a.error])).toEqual([
      [1, 500, 'HTTP 500'],
      [2, 500, 'HTTP 500'],
      [3, 200, null],
    ]);
    expect(d!.attempts[0]!.next_retry_at).not.toBeNull();
    expect(d!.attempts[1]!.next_retry_at).not.toBeNull();
    expect(d!.attempts[2]!.next_retry_at).toBeNull();
    for (const a of d!.attempts) expect(a.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it('after the last backoff step the delivery is failed', async () => {
    const { id } = await createEndpoint(['tenant.created']);
    receiver.respond(() => 503);
    startWorker({ backoffMs: [50, 50] });
    await request(t.app).post('/api/setup/tenant').set('Authorization', admin).send({ name: 'Down', slug: unique('down') }).expect(201);
    const [d] = await until('failed', async () => {
      const list = await deliveries(id);
      return list[0]?.status === 'failed' ? list : null;
    });
    expect(d!.attempts.map((a) => a.status_code)).toEqual([503, 503, 503]);
    expect(d!.next_attempt_at).toBeNull();
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received.length).toBe(3);
  });

  it('no answer within the timeout is a failed attempt, retried', async () => {
    const { id } = await createEndpoint(['tenant.created']);
    receiver.respond((n) => (n === 0 ? 'hang' : 200));
    startWorker({ timeoutMs: 300 });
    await request(t.app).post('/api/setup/tenant').set('Authorization', admin).send({ name: 'Slow', slug: unique('slow') }).expect(201);
    const [d] = await until('delivered', async () => {
      const list = await deliveries(id);
      return list[0]?.status === 'delivered' ? list : null;
    });
    expect(d!.attempts[0]).toMatchObject({ attempt: 1, status_code: null, error: 'timed out' });
    expect(d!.attempts[1]).toMatchObject({ attempt: 2, status_code: 200 });
  });

  it('redirects are not followed', async () => {
    const { id } = await createEndpoint(['tenant.created']);
    receiver.respond((n) => (n === 0 ? 302 : 200));
    startWorker();
    await request(t.app).post('/api/setup/tenant').set('Authorization', admin).send({ name: 'Moved', slug: unique('moved') }).expect(201);
    const [d] = await until('delivered', async () => {
      const list = await deliveries(id);
      return list[0]?.status === 'delivered' ? list : null;
    });
    expect(d!.attempts[0]).toMatchObject({ status_code: 302, error: expect.stringMatching(/redirects are not followed/) });
    expect(receiver.received.map((r) => r.path)).toEqual(['/hook', '/hook']); // never /elsewhere
  });

  it('stop() lets the attempt in flight finish and records it', async () => {
    const { id } = await createEndpoint(['tenant.created']);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    receiver.respond(() => 'hang');
    startWorker({ timeoutMs: 5_000 });
    await request(t.app).post('/api/setup/tenant').set('Authorization', admin).send({ name: 'Stopping', slug: unique('stopping') }).expect(201);
    await receiver.waitFor(1);
    const stopped = worker!.stop().then(() => release());
    worker = null;
    await gate;
    await stopped;
    // Timed out (no answer) and recorded as a failed attempt to retry: nothing lost, nothing half-done.
    const [d] = await deliveries(id);
    expect(d).toMatchObject({ status: 'pending', attempt_count: 1 });
    expect(d!.attempts[0]).toMatchObject({ status_code: null, error: 'timed out' });
  });
});

describe('endpoints', () => {
  it('validates URL and event types, shows the secret only once, and updates and deletes', async () => {
    const bad = [
      { url: 'ftp://127.0.0.1/x', events: ['tenant.*'] },
      { url: 'http://user:pw@127.0.0.1/x', events: ['tenant.*'] },
      { url: 'not a url', events: ['tenant.*'] },
      { url: 'http://127.0.0.1/x', events: ['tenant.exploded'] },
      { url: 'http://127.0.0.1/x', events: [] },
    ];
    for (const body of bad) {
      const r = await request(t.app).post('/api/setup/webhooks').set('Authorization', admin).send(body);
      expect({ body, status: r.status }).toEqual({ body, status: 400 });
    }
    await request(t.app).post('/api/setup/webhooks').set('Authorization', `Bearer ${tokenFor()}`).send({ url: 'http://127.0.0.1/x', events: ['*'] }).expect(403);

    const { id, secret } = await createEndpoint(['*']);
    const got = await request(t.app).get(`/api/setup/webhooks/${id}`).set('Authorization', admin).expect(200);
    expect(got.body).not.toHaveProperty('secret');
    const list = await request(t.app).get('/api/setup/webhooks').set('Authorization', admin).expect(200);
    expect(JSON.stringify(list.body)).not.toContain(secret);
    const updated = await request(t.app).put(`/api/setup/webhooks/${id}`).set('Authorization', admin).send({ events: ['member.*'], enabled: false }).expect(200);
    expect(updated.body).toMatchObject({ events: ['member.*'], enabled: false });
    const events = await request(t.app).get(`/api/setup/events?action=webhook.updated`).set('Authorization', admin).expect(200);
    const ev = events.body.events.find((e: { target: { id: string } }) => e.target.id === id);
    expect(ev.data).toEqual({ before: { events: ['*'], enabled: true }, after: { events: ['member.*'], enabled: false } });
    expect(JSON.stringify(events.body)).not.toContain(secret);
    await request(t.app).delete(`/api/setup/webhooks/${id}`).set('Authorization', admin).expect(204);
    await request(t.app).get(`/api/setup/webhooks/${id}`).set('Authorization', admin).expect(404);
    await request(t.app).get(`/api/setup/webhooks/${id}/deliveries`).set('Authorization', admin).expect(404);
  });
});

describe('retention', () => {
  it('the purge drops delivered deliveries after a day and failed ones after the retention period, never pending ones', async () => {
    const { id } = await createEndpoint(['tenant.created']);
    // No worker runs in this test: the deliveries stay pending unless the test moves them.
    for (let i = 0; i < 4; i++) await request(t.app).post('/api/setup/tenant').set('Authorization', admin).send({ name: 'Kept', slug: unique('kept') }).expect(201);
    const owner = knexFactory({ client: 'pg', connection: fresh.url, pool: { min: 0, max: 2 } });
    try {
      const rows = (await owner('webhook_deliveries').where({ webhook_id: id }).orderBy('created_at').pluck('id')) as string[];
      const day = 86_400_000;
      await owner('webhook_deliveries').where({ id: rows[0] }).update({ status: 'delivered', finished_at: new Date(Date.now() - 2 * day) });
      await owner('webhook_deliveries').where({ id: rows[1] }).update({ status: 'delivered', finished_at: new Date(Date.now() - 3_600_000) });
      await owner('webhook_deliveries').where({ id: rows[2] }).update({ status: 'failed', finished_at: new Date(Date.now() - 40 * day) });
      const r = await purgeExpired(owner, { retentionDays: 30 });
      expect(r.ran).toBe(true);
      const left = (await owner('webhook_deliveries').where({ webhook_id: id }).pluck('id')) as string[];
      expect(left.sort()).toEqual([rows[1], rows[3]].sort());
    } finally {
      await owner.destroy();
    }
  });
});
