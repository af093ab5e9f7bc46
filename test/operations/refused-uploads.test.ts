/**
 * Refused uploads (docs/operations.md#refused-uploads): a request refused before its body was
 * read is answered at once while its address is within its budget; past it, the refusal is held
 * unread and answered when its delay has passed; a client that goes away meanwhile is not
 * answered; other addresses, a token's requests and the gateway decision never wait. A body
 * declared over 1 MiB is refused before any of it is read, not after reading all of it. The test owns the clock: its budget never refills and the delay passes when it says so.
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import request from 'supertest';
import { DELAY_MS, FREE_PER_SECOND, RefusalDelay, type RefusalClock } from '../../src/http/refusal-delay';
import { startTestApp, type TestApp } from '../helpers/app';
import { closeOwnerConnection, tenantWithMember } from '../helpers/factories';

/** A clock that stands still (budgets never refill) and timers the test fires itself. */
class TestClock implements RefusalClock {
  readonly pending: Array<{ fn: () => void; ms: number; cancelled: boolean }> = [];
  now(): number {
    return 0;
  }
  later(fn: () => void, ms: number): () => void {
    const timer = { fn, ms, cancelled: false };
    this.pending.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }
  /** The delay passes: every timer not cancelled fires. */
  pass(): void {
    for (const timer of this.pending.splice(0)) if (!timer.cancelled) timer.fn();
  }
}

const clock = new TestClock();
const refusals = new RefusalDelay(clock);
let t: TestApp;
let server: http.Server;
let port: number;

beforeAll(async () => {
  t = await startTestApp({ SERVICE_TRUST_PROXY: 'true', SERVICE_MULTI_TENANT_MODE: 'true' }, { refusalDelay: refusals });
  server = http.createServer(t.app).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  await t.close();
  await closeOwnerConnection();
});

/** 1 MiB of JSON: far more than the first read takes, so the refusal leaves it unread. */
const MIB_BODY = `[${'0,'.repeat(512 * 1024)}0]`;

const upload = (ip: string, path = '/api/boards') =>
  request(server).post(path).set('X-Forwarded-For', ip).set('Content-Type', 'application/json').send(MIB_BODY);

/** Refusals within the budget: each must be answered at once (a held one would never be). */
async function spendBudget(ip: string): Promise<void> {
  for (let i = 0; i < FREE_PER_SECOND; i++) await upload(ip).expect(401);
  expect(refusals.held).toBe(0);
}

/** Waits (up to 2 s, in 5 ms steps) for the instance to reach `condition`. */
async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !condition(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(condition()).toBe(true);
}

describe('refused uploads', () => {
  it('past the budget a refusal is held until its delay passes, then answered as before; nobody else waits', async () => {
    const ip = '198.18.210.1';
    await spendBudget(ip);
    let answered = false;
    const late = upload(ip).then((r) => {
      answered = true;
      return r;
    });
    await until(() => refusals.held === 1);
    expect(clock.pending.map((p) => p.ms)).toEqual([DELAY_MS]);

    // Meanwhile: another address, and a member's request from the same address, are answered.
    await upload('198.18.210.2').expect(401);
    const { tenant, token } = await tenantWithMember();
    await request(server).get('/api/tenant').set('X-Forwarded-For', ip).set('Authorization', `Bearer ${token}`).set('X-Tenant', tenant.slug).expect(200);
    expect(answered).toBe(false);

    clock.pass();
    const r = await late;
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ error: 'Unauthorized' });
    expect(r.headers.connection).toBe('close');
    expect(r.headers['www-authenticate']).toMatch(/^Bearer /);
    expect(refusals.held).toBe(0);
    // Operators see it: the access line says how late, and the counter counts it.
    const line = t.logs.find((l) => l.msg === 'request completed' && l.request_id === r.headers['x-request-id']);
    expect(line).toMatchObject({ status: 401, held_ms: DELAY_MS, ip });
    const answeredAtOnce = t.logs.filter((l) => l.msg === 'request completed' && l.ip === ip && l.status === 401 && l.held_ms === undefined);
    expect(answeredAtOnce).toHaveLength(FREE_PER_SECOND);
    const metrics = await request(server).get('/metrics').expect(200);
    expect(metrics.text).toMatch(/^tenant_service_refusals_held_total 1$/m);
  });

  it('a client that goes away while held is not answered, and its connection is let go when the delay passes', async () => {
    const ip = '198.18.210.3';
    await spendBudget(ip);
    const req = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/api/boards',
      headers: { 'X-Forwarded-For': ip, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(MIB_BODY) },
    });
    req.on('error', () => undefined);
    let answered = false;
    req.on('response', () => {
      answered = true;
    });
    req.end(MIB_BODY);
    await until(() => refusals.held === 1);
    // A held connection is not read, so its client's leaving is seen when the answer is written.
    req.destroy();
    clock.pass();
    expect(refusals.held).toBe(0);
    await request(server).get('/healthz').expect(200);
    expect(answered).toBe(false);
  });

  it("the gateway decision's refusals are never held, with a body or without", async () => {
    const ip = '198.18.210.4';
    await spendBudget(ip);
    const r = await upload(ip, '/api/tenant/decision').expect(401);
    expect(r.body.error).toBe('Unauthorized');
    await request(server).get('/api/tenant/decision').set('X-Forwarded-For', ip).expect(401);
    expect(refusals.held).toBe(0);
  });

  it('a body declared over 1 MiB is refused (413) without waiting for it, and the connection closed', async () => {
    const { tenant, token } = await tenantWithMember();
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
    const closed = new Promise((r) => socket.once('close', r));
    // Declares 64 MiB and sends 64 KiB of it: the answer must not wait for the rest.
    socket.write(
      [
        'POST /api/boards HTTP/1.1',
        'Host: x',
        'X-Forwarded-For: 198.18.210.5',
        `Authorization: Bearer ${token}`,
        `X-Tenant: ${tenant.slug}`,
        'Content-Type: application/json',
        `Content-Length: ${64 * 1024 * 1024}`,
        '',
        '',
      ].join('\r\n') + '['.repeat(64 * 1024),
    );
    await closed;
    const [head, body] = text.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 413 /);
    expect(head).toMatch(/\r\nConnection: close\r\n/i);
    expect(JSON.parse(body!)).toMatchObject({ error: 'Payload too large', detail: 'The body is larger than 1 MiB.' });
  });
});
