/**
 * Logs as docs/operations.md#metrics-and-logs says: every line one JSON object with unique keys,
 * library output through pino, 4xx access lines carrying the body's `error`, probes at debug, audit
 * violations at warn, a 401's reason (never the token) at info. Three realistic runs, every line
 * checked with a duplicate-key-aware reader (test/helpers/strict-json.ts):
 * A. requests of every kind (successes, each error status, rate limiting, an audit that finds a
 *    planted violation) against an app logging at debug;
 * B. a database outage: a private PostgreSQL cluster stopped under a running app and started again;
 * C. the compiled server on the embedded PostgreSQL at debug level (PostgreSQL's own lines).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { Express } from 'express';
import type { Knex } from 'knex';
import pino from 'pino';
import request from 'supertest';
import { createApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { migrate, openDatabase } from '../../src/db/database';
import { createLogger } from '../../src/logger';
import { buildServices, closeServices } from '../../src/build-services';
import { testEnv } from '../helpers/app';
import { createThrowawayCluster, freePort, type ThrowawayCluster } from '../helpers/pg-cluster';
import { buildOnce, startServerProcess, stopServer, waitUntilReady } from '../helpers/server-process';
import { logProblems } from '../helpers/strict-json';
import { adminToken, closeOwnerConnection, ownerConnection, tenantWithMember, tokenFor, unique } from '../helpers/factories';

jest.setTimeout(300_000);

interface RawApp {
  app: Express;
  db: Knex;
  raw(): string;
  lines(): Array<Record<string, unknown>>;
  close(): Promise<void>;
}

/** An app whose logger writes raw text into memory (parsed only when asked). */
async function rawApp(env: Record<string, string>): Promise<RawApp> {
  const config = loadConfig(testEnv({ SERVICE_LOG_LEVEL: 'debug', ...env }));
  let text = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      text += chunk.toString('utf8');
      cb();
    },
  });
  const logger = createLogger(config.logLevel, sink);
  const db = openDatabase({ url: config.databaseUrl!, poolMax: 5, logger });
  const services = await buildServices(config, { db, logger });
  const app = await createApp(config, services);
  return {
    app,
    db,
    raw: () => text,
    lines: () =>
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    async close() {
      await closeServices(services);
      await db.destroy();
    },
  };
}

/** console.log/warn/error calls made by libraries (knex prints through console when given no logger). */
function spyConsole(): { calls: () => string[]; restore: () => void } {
  const spies = (['log', 'warn', 'error', 'info'] as const).map((m) => jest.spyOn(console, m).mockImplementation(() => undefined));
  return {
    calls: () => spies.flatMap((s) => s.mock.calls.map((c) => c.map(String).join(' '))),
    restore: () => spies.forEach((s) => s.mockRestore()),
  };
}

afterAll(async () => {
  await closeOwnerConnection();
});

describe('A. requests of every kind', () => {
  let t: RawApp;
  const tokensSent: string[] = [];
  const requestIds: Record<string, string> = {};

  beforeAll(async () => {
    t = await rawApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_RATE_LIMIT_ENABLED: 'true' });
    const admin = adminToken();
    const { tenant, token: member } = await tenantWithMember('admin');
    tokensSent.push(admin, member);
    const auth = (tok: string) => ({ Authorization: `Bearer ${tok}` });
    const a = request(t.app);

    // Probes, the contract, the docs, an unknown path.
    for (const p of ['/healthz', '/readyz', '/metrics', '/.well-known/jwks.json', '/openapi.json', '/docs', '/no-such-path']) await a.get(p);
    // Platform admin: create (201), the same slug (409), an invalid body (400), reads, an update.
    const slug = unique('logs');
    const created = await a.post('/api/setup/tenant').set(auth(admin)).send({ name: 'Log Co', slug, include_sample_data: true });
    expect(created.status).toBe(201);
    expect((await a.post('/api/setup/tenant').set(auth(admin)).send({ name: 'Log Co', slug })).status).toBe(409);
    expect((await a.post('/api/setup/tenant').set(auth(admin)).send({ name: '' })).status).toBe(400);
    await a.get('/api/setup/tenants?limit=2').set(auth(admin));
    await a.get('/api/setup/status').set(auth(admin));
    await a.put(`/api/setup/tenant/${created.body.tenant_id}`).set(auth(admin)).send({ name: 'Log Co 2' });
    expect((await a.get(`/api/setup/tenant/${crypto.randomUUID()}`).set(auth(admin))).status).toBe(404);
    // 401s: no token, a bad token (its text must never reach the logs).
    const badToken = `${member.slice(0, -4)}AAAA`;
    tokensSent.push(badToken);
    const noToken = await a.get('/api/tenant');
    expect(noToken.status).toBe(401);
    requestIds.noToken = noToken.headers['x-request-id'];
    const bad = await a.get('/api/tenant').set(auth(badToken)).set('X-Tenant', tenant.slug);
    expect(bad.status).toBe(401);
    requestIds.badToken = bad.headers['x-request-id'];
    // Tenant resolution: header (200), claim provisioning (200), none (400), unknown (404),
    // claim/header mismatch (403), malformed header (400); a member on a setup endpoint (403).
    expect((await a.get('/api/tenant').set(auth(member)).set('X-Tenant', tenant.slug)).status).toBe(200);
    const claimed = tokenFor({ sub: unique('claimed'), tenant: slug } as never);
    tokensSent.push(claimed);
    expect((await a.get('/api/boards').set(auth(claimed))).status).toBe(200);
    expect((await a.post('/api/boards').set(auth(claimed)).send({ name: 'A board' })).status).toBe(201);
    expect((await a.get(`/api/boards/${crypto.randomUUID()}`).set(auth(claimed))).status).toBe(404);
    expect((await a.get('/api/tenant').set(auth(tokenFor({ sub: unique('none') })))).status).toBe(400);
    expect((await a.get('/api/tenant').set(auth(member)).set('X-Tenant', unique('absent'))).status).toBe(404);
    expect((await a.get('/api/tenant').set(auth(claimed)).set('X-Tenant', tenant.slug)).status).toBe(403);
    expect((await a.get('/api/tenant').set(auth(member)).set('X-Tenant', 'Not A Slug')).status).toBe(400);
    expect((await a.get('/api/setup/tenants').set(auth(member))).status).toBe(403);
    // A tenant token (minted, then refused as a bearer token) and a key rotation.
    const tenantToken = (await a.post('/api/tenant/token').set(auth(member)).set('X-Tenant', tenant.slug)).body.access_token as string;
    tokensSent.push(tenantToken);
    expect((await a.get('/api/tenant').set(auth(tenantToken)).set('X-Tenant', tenant.slug)).status).toBe(401);
    expect((await a.post('/api/setup/tenant-token-keys/rotate').set(auth(admin))).status).toBe(200);
    // A console sign-in code (a secret like a token), exchanged, then refused.
    const signIn = (await a.post('/api/console/codes').set(auth(member))).body.code as string;
    tokensSent.push(signIn);
    expect((await a.post('/api/console/sessions').send({ code: signIn })).status).toBe(200);
    expect((await a.post('/api/console/sessions').send({ code: signIn })).status).toBe(400);
    // Body errors: wrong content type (415), too large (413), bad JSON (400); a wrong method (405).
    expect((await a.post('/api/boards').set(auth(claimed)).set('Content-Type', 'text/plain').send('x')).status).toBe(415);
    expect((await a.post('/api/boards').set(auth(claimed)).set('Content-Type', 'application/json').send(`{"name":"${'x'.repeat(1_100_000)}"}`)).status).toBe(413);
    expect((await a.post('/api/boards').set(auth(claimed)).set('Content-Type', 'application/json').send('{"name":')).status).toBe(400);
    expect((await a.patch('/api/setup/tenants').set(auth(admin)).send({})).status).toBe(405);
    // Registration, then its limit (3 per hour per caller): 429.
    const registrant = tokenFor({ sub: unique('registrant'), email: `${unique('r')}@example.com` });
    tokensSent.push(registrant);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await a.post('/api/tenants/register').set(auth(registrant)).send({ organization_name: `Log Org ${unique('o')}`, admin_email: 'x@example.com', include_sample_data: false })).status);
    }
    expect(statuses).toEqual([201, 201, 201, 429]);
    // An audit that finds a planted violation: a credit balance that does not follow from the amounts.
    await ownerConnection()('credit_transactions').insert({ tenant_id: created.body.tenant_id, kind: 'usage', amount: -1, balance_after: 999_999 });
    const audit = await a.get(`/api/setup/audit?tenant_slug=${slug}`).set(auth(admin));
    expect(audit.body.total_violations).toBeGreaterThan(0);
  });

  afterAll(async () => {
    await t?.close();
  });

  it('writes only JSON objects with unique keys, one per line', () => {
    expect(t.raw().split('\n').filter(Boolean).length).toBeGreaterThan(40);
    expect(logProblems(t.raw())).toEqual([]);
  });

  it('never logs a token', () => {
    for (const tok of tokensSent) expect(t.raw().includes(tok) ? 'a token is in the logs' : null).toBeNull();
  });

  it('logs "Tenant resolved for authenticated request" with tenant_slug, tenant_id, subject and source', () => {
    const resolved = t.lines().filter((l) => l.msg === 'Tenant resolved for authenticated request');
    expect(resolved.length).toBeGreaterThanOrEqual(3);
    for (const l of resolved) expect(l).toEqual(expect.objectContaining({ tenant_slug: expect.any(String), tenant_id: expect.any(String), subject: expect.any(String), source: expect.any(String) }));
  });

  it('4xx access lines carry the `error` of the body', () => {
    const access4xx = t.lines().filter((l) => l.msg === 'request completed' && typeof l.status === 'number' && l.status >= 400 && l.status < 500);
    expect(access4xx.length).toBeGreaterThanOrEqual(15);
    const without = access4xx.filter((l) => typeof l.error !== 'string').map((l) => `${l.method} ${l.path} ${l.status}`);
    expect(without).toEqual([]);
  });

  it('probes (/healthz, /readyz, /metrics) log at debug', () => {
    const probes = t.lines().filter((l) => l.msg === 'request completed' && ['/healthz', '/readyz', '/metrics'].includes(String(l.path)));
    expect(probes.length).toBe(3);
    expect(probes.filter((l) => l.level !== 20).map((l) => `${l.path} at level ${l.level}`)).toEqual([]);
  });

  it("a 401's reason is logged at info, never the token", () => {
    for (const id of [requestIds.noToken, requestIds.badToken]) {
      const lines = t.lines().filter((l) => l.request_id === id);
      // The field's name is the pipeline's choice (reason, auth_reason, detail…); its value explains the 401.
      const reasoned = lines.filter((l) => l.level === 30 && Object.entries(l).some(([k, v]) => /reason|detail/.test(k) && typeof v === 'string' && v.length > 0));
      expect(reasoned.length ? 'ok' : `no info line with a reason for request ${id}: ${JSON.stringify(lines)}`).toBe('ok');
    }
  });

  it('an audit that finds violations logs at warn', () => {
    const audits = t.lines().filter((l) => typeof l.total_violations === 'number' && (l.total_violations as number) > 0);
    expect(audits.length).toBe(1);
    expect(audits[0]!.level).toBe(40);
  });
});

describe('B. a database outage', () => {
  let cluster: ThrowawayCluster;
  let t: RawApp;
  let consoleSpy: ReturnType<typeof spyConsole>;

  beforeAll(async () => {
    cluster = await createThrowawayCluster();
    await cluster.start();
    await migrate(cluster.url, 'default', pino({ level: 'silent' }));
    consoleSpy = spyConsole();
    t = await rawApp({ SERVICE_DATABASE_URL: cluster.url });
  });

  afterAll(async () => {
    consoleSpy?.restore();
    await t?.close();
    await cluster?.destroy();
  });

  it('logs the outage and the recovery as JSON lines, knex included, nothing through console', async () => {
    const member = tokenFor({ sub: unique('outage') });
    const a = request(t.app);
    expect((await a.get('/api/tenant').set('Authorization', `Bearer ${member}`)).status).toBe(200);
    await Promise.all([0, 1, 2].map(() => a.get('/readyz')));
    await cluster.stop();
    for (let i = 0; i < 3; i++) {
      expect((await a.get('/api/tenant').set('Authorization', `Bearer ${member}`)).status).toBe(503);
      expect((await a.get('/readyz')).status).toBe(503);
    }
    await cluster.start();
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      status = (await a.get('/readyz')).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(200);

    expect(logProblems(t.raw())).toEqual([]);
    expect(consoleSpy.calls()).toEqual([]);
    // knex's own complaints arrive as pino lines with one line of text, no stack.
    const knexLines = t.lines().filter((l) => l.component === 'knex');
    for (const l of knexLines) {
      expect(String(l.knex_message)).not.toContain('\n');
      expect(l.level).toBeGreaterThanOrEqual(40);
    }
  });
});

describe('C. the compiled server on the embedded PostgreSQL at debug level', () => {
  let dataDir: string;

  beforeAll(async () => {
    await buildOnce();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenant-service-logs-'));
    fs.chmodSync(dataDir, 0o755); // the postgres system user must reach <dataDir>/pg
  });

  afterAll(() => {
    const pidFile = path.join(dataDir, 'pg', 'postmaster.pid');
    if (fs.existsSync(pidFile)) {
      const pid = Number.parseInt(fs.readFileSync(pidFile, 'utf8').split('\n')[0] ?? '', 10);
      try {
        if (pid > 0) process.kill(pid, 'SIGINT');
      } catch {
        /* gone */
      }
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints only JSON lines with unique keys, PostgreSQL’s own lines in a `postgres` field', async () => {
    const port = await freePort();
    const server = startServerProcess(port, { SERVICE_DATA_DIR: dataDir, SERVICE_LOG_LEVEL: 'debug' });
    let raw = '';
    server.proc.stdout!.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    try {
      const status = await waitUntilReady(server, 120_000);
      expect({ status, stderr: server.stderr() }).toEqual({ status: 200, stderr: '' });
      await fetch(`http://127.0.0.1:${port}/api/tenant`).then((r) => r.arrayBuffer());
      await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.arrayBuffer());
    } finally {
      expect(await stopServer(server, 'SIGTERM')).toEqual({ code: 0, signal: null });
    }
    expect(logProblems(raw)).toEqual([]);
    expect(server.stderr()).toBe('');
    const lines = raw
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const pgLines = lines.filter((l) => l.msg === 'PostgreSQL output');
    expect(pgLines.length).toBeGreaterThan(3);
    for (const l of pgLines) {
      expect(typeof l.postgres).toBe('string');
      expect(l.postgres).not.toContain('\n');
    }
    expect(lines.some((l) => l.msg === 'Stopped')).toBe(true);
  });
});
