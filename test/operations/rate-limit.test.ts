/**
 * Rate limits (docs/operations.md#rate-limits) with the in-process store: headers, the 429, one
 * counter per table row and per caller, per client address without a caller, and what is not
 * limited. The Redis store is covered by rate-limit-redis.test.ts.
 */
import crypto from 'node:crypto';
import { Writable } from 'node:stream';
import express, { type NextFunction, type Request, type Response } from 'express';
import request from 'supertest';
import { loadConfig } from '../../src/config';
import { ApiError } from '../../src/errors';
import type { Caller } from '../../src/context/claims';
import { readContractOperations } from '../../src/http/contract';
import { createRateLimiter, ruleFor, rulesFromContract } from '../../src/http/rate-limit';
import { attachState, RequestState } from '../../src/http/request-state';
import type { AppServices, RateLimiter } from '../../src/context/app-services';
import { createLogger } from '../../src/logger';
import { startTestApp, testEnv, type TestApp } from '../helpers/app';
import { adminToken, closeOwnerConnection, ownerConnection, tokenFor, unique } from '../helpers/factories';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ SERVICE_RATE_LIMIT_ENABLED: 'true' });
});
afterAll(async () => {
  await t.close();
  await closeOwnerConnection();
});

const bearer = (token: string) => `Bearer ${token}`;

// The limits come from the contract (openapi.yaml's x-rate-limit), not from this file.
const OPERATIONS = readContractOperations();
const RULES = rulesFromContract(OPERATIONS);
const operation = (id: string) => OPERATIONS.find((o) => o.operationId === id)!;
const limitOf = (id: string) => operation(id).rateLimit!.limit;
const windowSecondsOf = (id: string) => (operation(id).rateLimit!.window === 'hour' ? 3600 : 60);

describe('the table', () => {
  it('is read from x-rate-limit: every /api operation counts against its declared counter', () => {
    for (const op of OPERATIONS) {
      const rule = ruleFor(op, op.path, RULES);
      if (op.path.startsWith('/api/') || op.access === 'scimToken') {
        expect(rule).toMatchObject({ name: op.rateLimit!.counter, limit: op.rateLimit!.limit, window: op.rateLimit!.window });
      } else {
        expect(rule).toBeNull();
      }
    }
    // An /api path that matches no operation, in any spelling, counts against the `api` counter.
    expect(ruleFor(null, '/api/setup/tenant/a/b', RULES)?.name).toBe('api');
    expect(ruleFor(null, '/API/tenant', RULES)?.name).toBe('api');
    expect(ruleFor(null, '/Api', RULES)?.name).toBe('api');
    expect(ruleFor(null, '/apiary', RULES)).toBeNull();
    expect(ruleFor(null, '/nope', RULES)).toBeNull();
  });

  it('the contract states the documented rate limits', () => {
    expect([...RULES.values()].map((r) => [r.name, r.limit, r.window, r.scope]).sort()).toEqual(
      [
        ['setup-create', 10, 'hour', 'POST /api/setup/tenant'],
        ['setup-delete', 5, 'hour', 'DELETE /api/setup/tenant/*'],
        // Undoing a scheduled deletion: its own counter, so spent deletes never block it.
        ['setup-delete-cancel', 60, 'hour', 'DELETE /api/setup/tenant/*'],
        ['register', 3, 'hour', 'POST /api/tenants/register'],
        ['invitations', 50, 'hour', 'POST /api/tenant/invitations and /api/tenant/invitations/*'],
        ['tenant-token', 120, 'minute', 'POST /api/tenant/token'],
        ['key-rotation', 10, 'hour', 'POST /api/setup/tenant-token-keys/rotate'],
        ['setup-read', 100, 'minute', 'GET /api/setup/*'],
        // A tenant export streams every row of a tenant: its own, small counter.
        ['setup-export', 10, 'hour', 'GET /api/setup/tenant/*'],
        ['setup-import', 10, 'hour', 'POST /api/setup/tenants/import'],
        ['api', 600, 'minute', 'any other /api endpoint'],
        // docs/gateways.md#what-it-answers: the gateway decision, asked on every product request, any forwarded method.
        ['decision', 6000, 'minute', 'GET/HEAD/POST/PUT/PATCH/DELETE /api/tenant/decision'],
        // Console sign-in links: making a code (per caller) and exchanging one (per address: the code is the credential).
        ['console-code', 30, 'minute', 'POST /api/console/codes'],
        ['console-session', 10, 'minute', 'POST /api/console/sessions'],
        // docs/directory-sync.md: SCIM, per SCIM token.
        ['scim', 1200, 'minute', 'GET/POST/PUT/DELETE/PATCH /scim/v2/*'],
      ].sort(),
    );
  });
});

describe('headers', () => {
  it('a normal response carries X-RateLimit-* (Reset in Unix seconds) and the IETF headers', async () => {
    const before = Date.now();
    const r = await request(t.app).get('/api/tenants/mine').set('Authorization', bearer(tokenFor())).expect(200);
    const after = Date.now();
    const limit = limitOf('listMyTenants');
    expect(r.headers['x-ratelimit-limit']).toBe(String(limit));
    expect(r.headers['x-ratelimit-remaining']).toBe(String(limit - 1));
    const reset = r.headers['x-ratelimit-reset'] as string;
    expect(reset).toMatch(/^\d+$/);
    // The window (60 s) started with this request: Unix seconds, not milliseconds or a delta.
    const w = windowSecondsOf('listMyTenants');
    expect(Number(reset)).toBeGreaterThanOrEqual(Math.floor(before / 1000) + w);
    expect(Number(reset)).toBeLessThanOrEqual(Math.ceil(after / 1000) + w);
    expect(r.headers['ratelimit']).toMatch(new RegExp(`^"api"; r=${limit - 1}; t=(${w - 1}|${w})$`));
    expect(r.headers['ratelimit-policy']).toMatch(new RegExp(`^"api"; q=${limit}; w=${w}; pk=:[A-Za-z0-9+/=]+:$`));
  });

  it('/healthz, /readyz and the JWKS are not limited (load-balancer probes)', async () => {
    for (const path of ['/healthz', '/readyz', '/.well-known/jwks.json']) {
      const r = await request(t.app).get(path).expect(200);
      expect(r.headers['x-ratelimit-limit']).toBeUndefined();
      expect(r.headers['ratelimit']).toBeUndefined();
    }
    const ready = await request(t.app).get('/readyz').expect(200);
    expect(ready.body.rate_limit_store).toBe('memory');
  });

  it('a malformed X-Tenant under /api is refused before it is counted, in the matched operation\'s style', async () => {
    const token = bearer(tokenFor());
    const plain = await request(t.app).get('/api/tenant').set('Authorization', token).set('X-Tenant', 'Not_A_Slug').expect(400);
    expect({ error: plain.body.error, provided: plain.body.provided_tenant, limit: plain.headers['x-ratelimit-limit'] }).toEqual({
      error: 'Invalid X-Tenant header format',
      provided: 'Not_A_Slug',
      limit: undefined,
    });
    // The gateway decision answers it with its own 403 and X-Tenant-Error (src/http/decision.ts).
    const decision = await request(t.app).get('/api/tenant/decision').set('Authorization', token).set('X-Tenant', 'Not_A_Slug').expect(403);
    expect({ error: decision.body.error, header: decision.headers['x-tenant-error'], limit: decision.headers['x-ratelimit-limit'] }).toEqual({
      error: 'Invalid X-Tenant header format',
      header: 'Invalid X-Tenant header format',
      limit: undefined,
    });
  });

  it('an /api path with no operation counts against the catch-all row', async () => {
    const r = await request(t.app).get('/api/no-such-thing').set('Authorization', bearer(tokenFor())).expect(404);
    expect(r.headers['x-ratelimit-limit']).toBe(String(RULES.get('api')!.limit));
    expect(r.headers['ratelimit']).toMatch(/^"api"; /);
  });
});

describe('POST /api/setup/tenant: its x-rate-limit (10 per hour)', () => {
  const L = limitOf('createTenant');
  const W = windowSecondsOf('createTenant');
  it('the request after the limit is a 429 with the error body, Retry-After and headers, and changes nothing', async () => {
    const token = adminToken();
    // Invalid bodies still count: the limit is taken before validation.
    for (let i = 1; i <= L; i++) {
      const r = await request(t.app).post('/api/setup/tenant').set('Authorization', bearer(token)).send({}).expect(400);
      expect(r.headers['x-ratelimit-limit']).toBe(String(L));
      expect(r.headers['x-ratelimit-remaining']).toBe(String(L - i));
      expect(r.headers['ratelimit-policy']).toMatch(new RegExp(`^"setup-create"; q=${L}; w=${W}; `));
    }
    const slug = unique('refused');
    const r = await request(t.app).post('/api/setup/tenant').set('Authorization', bearer(token)).send({ name: 'Refused', slug }).expect(429);
    expect(r.body).toEqual({
      error: 'Rate limit exceeded',
      detail: expect.stringMatching(new RegExp(`^At most ${L} requests per hour to POST /api/setup/tenant \\(counted per caller\\); retry in \\d+ seconds\\.$`)),
      request_id: r.headers['x-request-id'],
    });
    const retryAfter = Number(r.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(W - 100);
    expect(retryAfter).toBeLessThanOrEqual(W);
    expect(r.body.detail).toContain(`retry in ${retryAfter} seconds`);
    expect(r.headers['x-ratelimit-limit']).toBe(String(L));
    expect(r.headers['x-ratelimit-remaining']).toBe('0');
    expect(r.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
    expect(r.headers['ratelimit']).toMatch(/^"setup-create"; r=0; t=\d+$/);
    expect(r.headers['ratelimit-policy']).toMatch(new RegExp(`^"setup-create"; q=${L}; w=${W}; `));
    // The refused request never reached the handler.
    expect(await ownerConnection()('tenants').where({ slug }).first()).toBeUndefined();
  });
});

describe('one counter per row and per caller', () => {
  it('spending the register limit leaves the other rows and other callers untouched', async () => {
    const alice = tokenFor();
    const bob = tokenFor();
    const registerLimit = limitOf('registerTenant');
    for (let i = 0; i < registerLimit; i++) await request(t.app).post('/api/tenants/register').set('Authorization', bearer(alice)).send({}).expect(400);
    const refused = await request(t.app).post('/api/tenants/register').set('Authorization', bearer(alice)).send({}).expect(429);
    expect(refused.body.detail).toMatch(new RegExp(`^At most ${registerLimit} requests per hour to POST /api/tenants/register`));
    expect(refused.headers['ratelimit']).toMatch(/^"register"; r=0; /);

    // Same caller, other rows: their own counters, still full.
    const mine = await request(t.app).get('/api/tenants/mine').set('Authorization', bearer(alice)).expect(200);
    expect(mine.headers['x-ratelimit-limit']).toBe(String(limitOf('listMyTenants')));
    const create = await request(t.app).post('/api/setup/tenant').set('Authorization', bearer(alice)).send({}).expect(400);
    expect(create.headers['x-ratelimit-limit']).toBe(String(limitOf('createTenant')));
    expect(create.headers['x-ratelimit-remaining']).toBe(String(limitOf('createTenant') - 1));

    // Another caller: their own counter on the same row.
    const other = await request(t.app).post('/api/tenants/register').set('Authorization', bearer(bob)).send({}).expect(400);
    expect(other.headers['x-ratelimit-remaining']).toBe(String(registerLimit - 1));
  });

  it('GET /api/setup/* is its x-rate-limit (100 per minute) per caller', async () => {
    const L = limitOf('getSetupStatus');
    const r = await request(t.app).get('/api/setup/status').set('Authorization', bearer(adminToken())).expect(200);
    expect(r.headers['x-ratelimit-limit']).toBe(String(L));
    expect(r.headers['x-ratelimit-remaining']).toBe(String(L - 1));
    expect(r.headers['ratelimit-policy']).toMatch(new RegExp(`^"setup-read"; q=${L}; w=${windowSecondsOf('getSetupStatus')}; `));
  });

  it('DELETE /api/setup/tenant/{tenant_id} is its x-rate-limit (5 per hour)', async () => {
    const token = adminToken();
    const L = limitOf('deleteTenant');
    for (let i = 0; i < L; i++) {
      await request(t.app).delete('/api/setup/tenant/not-a-uuid').set('Authorization', bearer(token)).expect(400);
    }
    const r = await request(t.app).delete('/api/setup/tenant/not-a-uuid').set('Authorization', bearer(token)).expect(429);
    expect(r.body.detail).toMatch(new RegExp(`^At most ${L} requests per hour to DELETE /api/setup/tenant/\\* `));
  });

  it('cancelling a scheduled deletion has its own counter: deletes that spent theirs (404s) never block the undo', async () => {
    const token = adminToken();
    const slug = unique('undo');
    const made = await request(t.app).post('/api/setup/tenant').set('Authorization', bearer(token)).send({ name: 'Undo', slug }).expect(201);
    const id = made.body.tenant_id as string;
    await request(t.app).post(`/api/setup/tenant/${id}/scheduled-deletion`).set('Authorization', bearer(token)).send({ grace_days: 30 }).expect(200);
    for (let i = 0; i < limitOf('deleteTenant'); i++) {
      await request(t.app).delete(`/api/setup/tenant/${crypto.randomUUID()}`).set('Authorization', bearer(token)).expect(404);
    }
    await request(t.app).delete(`/api/setup/tenant/${crypto.randomUUID()}`).set('Authorization', bearer(token)).expect(429);
    const undo = await request(t.app).delete(`/api/setup/tenant/${id}/scheduled-deletion`).set('Authorization', bearer(token)).expect(200);
    expect(undo.body.status).toBe('active');
    expect(undo.headers['ratelimit-policy']).toMatch(/^"setup-delete-cancel"; /);
  });
});

describe('the key: caller (issuer + subject), else client address', () => {
  let limiter: RateLimiter;
  afterEach(async () => {
    await limiter.close();
  });

  // A small app in front of the real limiter shows the address key and that SERVICE_TRUST_PROXY
  // decides it; it also sets callers the local provider cannot sign for (other issuers). The
  // service itself counts requests without a valid token by address (next describe).
  async function probeApp(trustProxy: boolean) {
    const config = loadConfig(testEnv({ SERVICE_RATE_LIMIT_ENABLED: 'true' }));
    const sink = new Writable({ write: (_c, _e, cb) => cb() });
    limiter = await createRateLimiter(config, createLogger('info', sink));
    const app = express();
    app.set('trust proxy', trustProxy);
    app.use((req: Request, res: Response, next: NextFunction) => {
      const state = new RequestState('probe-request', createLogger('info', sink), {} as AppServices, 0n);
      state.operation = operation('registerTenant');
      const issuer = req.get('X-Test-Issuer');
      if (issuer) state.caller = { issuer, subject: req.get('X-Test-Subject') } as Caller;
      attachState(req, state);
      next();
    });
    app.use(limiter.middleware);
    app.use((_req: Request, _res: Response, next: NextFunction) => next(new ApiError('notFound', 'probe reached the handler')));
    app.use((err: ApiError, _req: Request, res: Response, _next: NextFunction) => {
      for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
      res.status(err.status).json(err.toBody('probe-request'));
    });
    return app;
  }

  it('with SERVICE_TRUST_PROXY the address comes from X-Forwarded-For', async () => {
    const app = await probeApp(true);
    for (let i = 0; i < limitOf('registerTenant'); i++) await request(app).post('/probe').set('X-Forwarded-For', '203.0.113.7').expect(404);
    const r = await request(app).post('/probe').set('X-Forwarded-For', '203.0.113.7').expect(429);
    expect(r.body.detail).toContain('(counted per client address)');
    await request(app).post('/probe').set('X-Forwarded-For', '203.0.113.8').expect(404);
  });

  it('without it X-Forwarded-For is ignored: the socket address counts', async () => {
    const app = await probeApp(false);
    for (let i = 0; i < limitOf('registerTenant'); i++) await request(app).post('/probe').set('X-Forwarded-For', `198.51.100.${i}`).expect(404);
    await request(app).post('/probe').set('X-Forwarded-For', '198.51.100.99').expect(429);
  });

  it('the same subject from another issuer is another caller; a caller is not keyed by address', async () => {
    const app = await probeApp(true);
    const as = (issuer: string, ip: string) => request(app).post('/probe').set({ 'X-Test-Issuer': issuer, 'X-Test-Subject': 'same-sub', 'X-Forwarded-For': ip });
    for (let i = 0; i < limitOf('registerTenant'); i++) await as('https://a.example', `192.0.2.${i}`).expect(404);
    const r = await as('https://a.example', '192.0.2.50').expect(429);
    expect(r.body.detail).toContain('(counted per caller)');
    await as('https://b.example', '192.0.2.1').expect(404);
    // The caller's spent counter is not the address's.
    await request(app).post('/probe').set('X-Forwarded-For', '192.0.2.1').expect(404);
  });
});

describe('requests without a valid token', () => {
  it('are counted per client address before their 401, so token guessing meets the limit', async () => {
    const app = await startTestApp({ SERVICE_RATE_LIMIT_ENABLED: 'true', SERVICE_TRUST_PROXY: 'true' });
    try {
      const from = (ip: string) =>
        request(app.app).post('/api/tenants/register').set('X-Forwarded-For', ip).set('Authorization', 'Bearer not.a.token').send({});
      for (let i = 0; i < limitOf('registerTenant'); i++) {
        const r = await from('203.0.113.50').expect(401);
        expect(r.headers['x-ratelimit-limit']).toBe(String(limitOf('registerTenant')));
      }
      const refused = await from('203.0.113.50').expect(429);
      expect(refused.body.error).toBe('Rate limit exceeded');
      expect(refused.body.detail).toContain('per client address');
      // another address, and a valid caller from the same address, have their own counters
      await from('203.0.113.51').expect(401);
      await request(app.app).get('/api/tenants/registration/status').set('X-Forwarded-For', '203.0.113.50').set('Authorization', `Bearer ${tokenFor()}`).expect(200);
    } finally {
      await app.close();
    }
  });
});

describe('behind the documented proxy (SERVICE_TRUST_PROXY=true), the client cannot choose its address', () => {
  // nginx's $proxy_add_x_forwarded_for appends the address it saw to whatever X-Forwarded-For
  // the client sent: the left-most entries are the client's own writing.
  const REAL = '203.0.113.60';
  const viaProxy = (spoofed: string) => `${spoofed}, ${REAL}`;
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ SERVICE_RATE_LIMIT_ENABLED: 'true', SERVICE_TRUST_PROXY: 'true' });
  });
  afterAll(async () => {
    await app.close();
  });

  it('36 unauthenticated requests, each with another spoofed address, share the real address counter', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 36; i++) {
      const r = await request(app.app).post('/api/tenants/register').set('X-Forwarded-For', viaProxy(`198.51.100.${i}`)).set('Authorization', 'Bearer not.a.token').send({});
      statuses.push(r.status);
    }
    const limit = limitOf('registerTenant');
    expect(statuses.slice(0, limit)).toEqual(Array(limit).fill(401));
    expect(statuses.slice(limit)).toEqual(Array(36 - limit).fill(429));
    const lines = app.logs.filter((l) => l.msg === 'request completed' && l.path === '/api/tenants/register');
    expect(new Set(lines.map((l) => l.ip))).toEqual(new Set([REAL]));
  });

  it("the event's ip is the address the proxy saw, not the one the client wrote", async () => {
    const slug = unique('proxied');
    const r = await request(app.app)
      .post('/api/setup/tenant')
      .set('X-Forwarded-For', viaProxy('198.51.100.250'))
      .set('Authorization', bearer(adminToken()))
      .send({ name: 'Proxied', slug })
      .expect(201);
    const events = await ownerConnection()('events').where({ request_id: r.headers['x-request-id'] as string }).select('action', 'ip');
    expect(events).toEqual([{ action: 'tenant.created', ip: REAL }]);
  });
});

describe('logs', () => {
  it('normal operation logs no rate-limit warnings or errors (express-rate-limit validations included)', () => {
    const noisy = t.logs.filter((l) => (l.level as number) >= 40 && /rate.?limit/i.test(String(l.msg)));
    expect(noisy).toEqual([]);
  });
});

describe('SERVICE_RATE_LIMIT_ENABLED=false', () => {
  it('builds no limiter and sends no rate-limit headers', async () => {
    const off = await startTestApp({ SERVICE_RATE_LIMIT_ENABLED: 'false' });
    try {
      expect(off.services.rateLimiter).toBeNull();
      const r = await request(off.app).get('/api/tenants/mine').set('Authorization', bearer(tokenFor())).expect(200);
      expect(r.headers['x-ratelimit-limit']).toBeUndefined();
      expect(r.headers['ratelimit']).toBeUndefined();
    } finally {
      await off.close();
    }
  });
});
