/**
 * The request pipeline (docs/architecture.md#how-a-request-is-handled): a body is read only for
 * operations that take one and never before the caller has been counted; routing is case-sensitive
 * and every spelling of /api is counted; the tenant's one-statement path runs as the runtime role
 * and fails closed otherwise; access lines and the metrics seam.
 */
import { Writable } from 'node:stream';
import request from 'supertest';
import { createApp } from '../../src/app';
import { readTenantFacts } from '../../src/db/queries/enter-tenant';
import { APP_ROLE } from '../../src/db/schema';
import { scanJson } from '../../src/http/body';
import type { AppServices, ObservedRequest } from '../../src/context/app-services';
import { createLogger } from '../../src/logger';
import { closeOwnerConnection, ownerConnection, tenantWithMember, tokenFor } from '../helpers/factories';
import { startTestApp, type TestApp } from '../helpers/app';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ SERVICE_RATE_LIMIT_ENABLED: 'true', SERVICE_TRUST_PROXY: 'true', SERVICE_MULTI_TENANT_MODE: 'true' });
});
afterAll(async () => {
  await t.close();
  await closeOwnerConnection();
});

let ipCounter = 0;
/** A fresh client address per test, so counters do not leak between tests. */
const freshIp = () => `198.18.${Math.floor(++ipCounter / 250)}.${ipCounter % 250}`;

describe('bodies (17.1)', () => {
  it('a body sent to an operation without a requestBody is refused unread', async () => {
    const ip = freshIp();
    // Not JSON at all: parsing it would answer "The body is not valid JSON."
    const r = await request(t.app)
      .get('/api/tenants/mine')
      .set('X-Forwarded-For', ip)
      .set('Authorization', `Bearer ${tokenFor()}`)
      .set('Content-Type', 'application/json')
      .send('{this is not json')
      .expect(400);
    expect(r.body).toMatchObject({ error: 'Bad request', detail: 'GET /api/tenants/mine takes no request body.' });
    const health = await request(t.app).get('/healthz').set('Content-Type', 'application/json').send('[[[[[').expect(400);
    expect(health.body.detail).toBe('GET /healthz takes no request body.');
    await request(t.app).get('/healthz').set('Content-Type', 'text/plain').send('hello').expect(415);
  });

  it('without a valid token, a POST is counted and refused before its body is read (even over 1 MiB)', async () => {
    const ip = freshIp();
    // 2 MiB of worst-case JSON: reading it would be a 413, parsing a deep one a 400.
    const huge = `[${'0,'.repeat(1024 * 1024)}0]`;
    for (const auth of [undefined, 'Bearer not.a.token']) {
      const req = request(t.app).post('/api/boards').set('X-Forwarded-For', ip).set('Content-Type', 'application/json');
      if (auth) req.set('Authorization', auth);
      const r = await req.send(huge).expect(401);
      expect(r.headers['x-ratelimit-limit']).toBe('600');
      expect(r.body.error).toBe('Unauthorized');
    }
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    const r = await request(t.app).post('/api/tenants/register').set('X-Forwarded-For', ip).set('Content-Type', 'application/json').send(deep).expect(401);
    expect(r.headers['x-ratelimit-remaining']).toBe('2');
  });

  it('a caller with a token gets the depth and NUL checks, before validation', async () => {
    const { tenant, token } = await tenantWithMember();
    const post = (body: string) =>
      request(t.app).post('/api/boards').set('Authorization', `Bearer ${token}`).set('X-Tenant', tenant.slug).set('Content-Type', 'application/json').send(body);
    const deep = await post(`${'['.repeat(33)}${']'.repeat(33)}`).expect(400);
    expect(deep.body.detail).toBe('The JSON body is nested more than 32 levels deep.');
    const nul = await post('{"name":"a\\u0000b"}').expect(400);
    expect(nul.body.detail).toBe('body must not contain the NUL character (U+0000) in any key or string.');
    // An escaped backslash followed by the text u0000 is not a NUL.
    const created = await post('{"name":"a\\\\u0000b"}').expect(201);
    expect(created.body.name).toBe('a\\u0000b');
  });

  it('scanJson: one pass, depth outside strings, the NUL escape inside them', () => {
    const b = (s: string) => Buffer.from(s, 'utf8');
    expect(scanJson(b(`${'['.repeat(32)}${']'.repeat(32)}`))).toBe('ok');
    expect(scanJson(b(`${'['.repeat(33)}${']'.repeat(33)}`))).toBe('tooDeep');
    expect(scanJson(b(`{"a":"${'['.repeat(100)}"}`))).toBe('ok');
    expect(scanJson(b('{"a\\"[[[[":1}'), 3)).toBe('ok');
    expect(scanJson(b('{"k\\u0000":1}'))).toBe('nul');
    expect(scanJson(b('["\\\\u0000"]'))).toBe('ok');
    expect(scanJson(b('["é\\u0000"]'))).toBe('nul');
    expect(scanJson(b(`[${'0,'.repeat(500_000)}0]`))).toBe('ok');
  });
});

describe('routing is case-sensitive and every spelling of /api is counted (17.5)', () => {
  it('700 bad-token requests to /API/tenant meet the limit like /api/tenant', async () => {
    const results: Record<string, number[]> = {};
    for (const path of ['/api/tenant', '/API/tenant']) {
      const ip = freshIp();
      const statuses: number[] = [];
      for (let i = 0; i < 700; i++) {
        const r = await request(t.app).get(path).set('X-Forwarded-For', ip).set('Authorization', 'Bearer not.a.token');
        statuses.push(r.status);
      }
      results[path] = statuses;
    }
    const count = (path: string, status: number) => results[path]!.filter((s) => s === status).length;
    expect(count('/api/tenant', 401)).toBe(600);
    expect(count('/api/tenant', 429)).toBe(100);
    // Counted first, then routed nowhere: 404, never 401, never uncounted.
    expect(count('/API/tenant', 404)).toBe(600);
    expect(count('/API/tenant', 429)).toBe(100);
  }, 300_000);

  it('/API/tenant and /api/Tenant are 404 for a valid caller, after being counted', async () => {
    const { tenant, token } = await tenantWithMember();
    for (const path of ['/API/tenant', '/api/Tenant', '/Api/tenant/members']) {
      const r = await request(t.app).get(path).set('Authorization', `Bearer ${token}`).set('X-Tenant', tenant.slug).expect(404);
      expect(r.body.error).toBe('Not found');
      expect(r.headers['x-ratelimit-limit']).toBe('600');
    }
    await request(t.app).get('/api/tenant').set('Authorization', `Bearer ${token}`).set('X-Tenant', tenant.slug).expect(200);
    await request(t.app).get('/HEALTHZ').expect(404);
  });

  it('a malformed percent-escape in a path parameter is a 400, after being counted', async () => {
    const r = await request(t.app).get('/api/boards/%E0%A4%A').set('Authorization', `Bearer ${tokenFor()}`).expect(400);
    expect(r.body.error).toBe('Bad request');
    expect(r.headers['x-ratelimit-limit']).toBe('600');
  });
});

describe('the runtime role', () => {
  it('the one-statement tenant entry runs as the runtime role', async () => {
    const { tenant, user } = await tenantWithMember();
    const row = await readTenantFacts(t.db, { slug: tenant.slug, issuer: user.issuer, subject: user.subject });
    // Facts come back only when the statement's current_user was APP_ROLE (checkedRow throws otherwise).
    expect(row?.tenant.id).toBe(tenant.id);
  });

  it('a pool connected as the owner (as behind a transaction pooler that lost SET ROLE) still runs every tenant statement as the runtime role', async () => {
    const { tenant, user, token } = await tenantWithMember();
    const row = await readTenantFacts(ownerConnection(), { slug: tenant.slug, issuer: user.issuer, subject: user.subject });
    expect(row?.tenant.id).toBe(tenant.id);
    const services: AppServices = { ...t.services, db: ownerConnection(), rateLimiter: null };
    const app = await createApp(t.config, services);
    for (const path of ['/api/tenant', '/api/boards']) {
      await request(app).get(path).set('Authorization', `Bearer ${token}`).set('X-Tenant', tenant.slug).expect(200);
    }
    // The setting ended with the statement: the owner's next statement is the owner again.
    const after = await ownerConnection().raw<{ rows: Array<{ u: string }> }>('select current_user::text as u');
    expect(after.rows[0]!.u).not.toBe(APP_ROLE);
  });
});

describe('access lines and the metrics seam', () => {
  it('one line per request: error on 4xx, the 401 reason (never the token), probes at debug, the tenant fields once', async () => {
    const raw: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _e, cb) {
        raw.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        cb();
      },
    });
    const observed: ObservedRequest[] = [];
    const services: AppServices = {
      ...t.services,
      logger: createLogger('debug', sink),
      rateLimiter: null,
      metrics: { observeRequest: (o) => observed.push(o) },
    };
    const app = await createApp(t.config, services);
    const { tenant, token } = await tenantWithMember();
    await request(app).get('/healthz').expect(200);
    await request(app).get('/api/tenant').set('Authorization', 'Bearer not.a.token').expect(401);
    await request(app).get('/api/tenant').set('Authorization', `Bearer ${token}`).set('X-Tenant', 'no-such-tenant-xyz').expect(404);
    await request(app).get('/api/tenant').set('Authorization', `Bearer ${token}`).set('X-Tenant', tenant.slug).expect(200);

    const lines = raw.map((l) => JSON.parse(l) as Record<string, unknown>);
    const access = lines.filter((l) => l.msg === 'request completed');
    expect(access.map((l) => [l.path, l.status, l.level])).toEqual([
      ['/healthz', 200, 20],
      ['/api/tenant', 401, 30],
      ['/api/tenant', 404, 30],
      ['/api/tenant', 200, 30],
    ]);
    expect(access[1]).toMatchObject({ error: 'Unauthorized', reason: 'The token is invalid.' });
    expect(access[2]).toMatchObject({ error: 'Tenant not found', operation: 'getCurrentTenant' });
    expect(access[3]!.error).toBeUndefined();
    expect(raw.join('\n')).not.toContain(token);
    const resolved = raw.filter((l) => l.includes('"Tenant resolved for authenticated request"'));
    expect(resolved).toHaveLength(1);
    for (const key of ['tenant_id', 'tenant_slug', 'request_id']) expect(resolved[0]!.split(`"${key}":`).length - 1).toBe(1);
    expect(observed.map((o) => [o.operation, o.status])).toEqual([
      ['getHealth', 200],
      ['getCurrentTenant', 401],
      ['getCurrentTenant', 404],
      ['getCurrentTenant', 200],
    ]);
  });
});
