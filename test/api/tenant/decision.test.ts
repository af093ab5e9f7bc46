/**
 * GET /api/tenant/decision (docs/gateways.md#what-it-answers), in-process: the same resolution,
 * membership and provisioning as GET /api/tenant; every forwarded method; a body never read; 200
 * with the decision headers; refusals only 401 or 403 (with X-Tenant-Error); `?role=admin`; its own
 * `decision` rate-limit counter; decisions counted by outcome in /metrics. The gateways
 * themselves (real nginx and Caddy) are test/operations/gateway.test.ts.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import http from 'node:http';
import request from 'supertest';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { startTestApp, type TestApp } from '../../helpers/app';
import { startJwksServer } from '../../helpers/jwks-server';
import { parseExposition, sampleValue } from '../../helpers/prometheus';
import { adminToken, closeOwnerConnection, createTenant, createUser, ownerConnection, tenantWithMember, tokenFor, unique } from '../../helpers/factories';
import { SYSTEM_PERMISSIONS } from '../../../src/context/permissions';

let app: TestApp;
let limited: TestApp;

beforeAll(async () => {
  app = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
  limited = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_RATE_LIMIT_ENABLED: 'true', SERVICE_RATE_LIMIT_DECISION_PER_MINUTE: '3' });
}, 120_000);
afterAll(async () => {
  await Promise.all([app, limited].map((a) => a?.close()));
  await closeOwnerConnection();
});

const bearer = (token: string) => `Bearer ${token}`;
const decide = (t: TestApp = app) => request(t.app).get('/api/tenant/decision');

/** The decision's refusal: status, error and X-Tenant-Error. */
function refusal(r: request.Response) {
  return { status: r.status, error: r.body.error as unknown, header: r.headers['x-tenant-error'] };
}

describe('a member', () => {
  it('is allowed with exactly 200 and the decision headers, the same tenant as GET /api/tenant', async () => {
    const { tenant, user, token } = await tenantWithMember('admin');
    const r = await decide().set('Authorization', bearer(token)).set('X-Tenant', tenant.slug).expect(200);
    expect(r.headers).toMatchObject({
      'x-tenant-id': tenant.id,
      'x-tenant-slug': tenant.slug,
      'x-tenant-role': 'admin',
      'x-user-id': user.id,
      'x-user-subject': user.subject,
      'x-user-issuer': user.issuer,
      'cache-control': 'no-store',
    });
    expect(r.headers['x-tenant-error']).toBeUndefined();
    expect(r.body).toEqual({ tenant_id: tenant.id, tenant_slug: tenant.slug, tenant_role: 'admin', permissions: [...SYSTEM_PERMISSIONS], user_id: user.id, user_subject: user.subject });
    const current = await request(app.app).get('/api/tenant').set('Authorization', bearer(token)).set('X-Tenant', tenant.slug).expect(200);
    expect(current.body.tenant.tenant_id).toBe(tenant.id);
    expect(current.body.membership.user_id).toBe(user.id);
  });

  it('answers every method a gateway forwards the same way, HEAD without a body', async () => {
    const { tenant, user, token } = await tenantWithMember('member');
    for (const method of ['head', 'post', 'put', 'patch', 'delete'] as const) {
      const r = await request(app.app)[method]('/api/tenant/decision').set('Authorization', bearer(token)).set('X-Tenant', tenant.slug);
      expect({ method, status: r.status, id: r.headers['x-tenant-id'], user: r.headers['x-user-id'], role: r.headers['x-tenant-role'] }).toEqual({
        method,
        status: 200,
        id: tenant.id,
        user: user.id,
        role: 'member',
      });
    }
    // Other methods are refused, with the decision's 403 (gateways pass on only 401 and 403).
    const options = await request(app.app).options('/api/tenant/decision').set('Authorization', bearer(token)).set('X-Tenant', tenant.slug);
    expect(refusal(options)).toEqual({ status: 403, error: 'Method not allowed', header: 'Method not allowed' });
  });

  it('ignores a request body, JSON or not, and never waits for one', async () => {
    const { tenant, user, token } = await tenantWithMember('member');
    const json = await request(app.app).post('/api/tenant/decision').set('Authorization', bearer(token)).set('X-Tenant', tenant.slug).send({ query: '{ boards { id } }' });
    expect(json.status).toBe(200);
    expect(json.headers['x-user-id']).toBe(user.id);
    const text = await request(app.app).put('/api/tenant/decision').set('Authorization', bearer(token)).set('X-Tenant', tenant.slug).set('Content-Type', 'text/csv').send('a,b\n1,2');
    expect(text.status).toBe(200);

    // A body announced as 1 GB of which only 64 KiB arrive: the answer comes anyway (the body
    // is not read, let alone buffered), and the connection is closed after it.
    const server = http.createServer(app.app).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const { port } = server.address() as AddressInfo;
      const head = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => {
          socket.write(
            `POST /api/tenant/decision HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nX-Tenant: ${tenant.slug}\r\n` +
              'Content-Type: application/octet-stream\r\nContent-Length: 1000000000\r\n\r\n',
          );
          socket.write(Buffer.alloc(64 * 1024, 0x61));
        });
        let got = '';
        socket.on('data', (d: Buffer) => {
          got += d.toString('latin1');
          if (got.includes('\r\n\r\n')) {
            resolve(got.slice(0, got.indexOf('\r\n\r\n')));
            socket.destroy();
          }
        });
        socket.on('error', reject);
      });
      expect(head).toMatch(/^HTTP\/1\.1 200 /);
      expect(head).toMatch(/\r\nconnection: close\r\n/i);
      expect(head).toMatch(new RegExp(`\\r\\nx-user-id: ${user.id}\\r\\n`, 'i'));
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('accepts and ignores other query parameters (Envoy appends the product path to path_prefix)', async () => {
    const { tenant, user, token } = await tenantWithMember('member');
    const r = await request(app.app).get('/api/tenant/decision?path=/graphql?x=1').set('Authorization', bearer(token)).set('X-Tenant', tenant.slug).expect(200);
    expect(r.headers['x-user-id']).toBe(user.id);
  });

  it('percent-encodes a subject that is not plain ASCII (and one holding %)', async () => {
    const tenant = await createTenant();
    for (const subject of [`jürgen-${unique('s')}`, `100%-${unique('s')}`]) {
      const user = await createUser(tenant.id, { subject });
      const r = await decide().set('Authorization', bearer(tokenFor({ sub: subject }))).set('X-Tenant', tenant.slug).expect(200);
      expect(r.headers['x-user-subject']).toBe(encodeURIComponent(subject));
      expect(decodeURIComponent(r.headers['x-user-subject'])).toBe(subject);
      expect(r.headers['x-user-id']).toBe(user.id);
    }
  });

  it('percent-encodes an issuer the same way: decoding X-User-Issuer gives iss back', async () => {
    const jwks = await startJwksServer();
    const idp = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_JWKS_URI: jwks.jwksUri });
    try {
      const tenant = await createTenant();
      for (const iss of [`${jwks.issuer}/realms/münchen`, `${jwks.issuer}/100%`, jwks.issuer]) {
        const r = await decide(idp).set('Authorization', bearer(jwks.sign({ sub: unique('u'), iss, tenant: tenant.slug }))).expect(200);
        expect(r.headers['x-user-issuer']).toBe(iss === jwks.issuer ? iss : encodeURIComponent(iss));
        expect(decodeURIComponent(r.headers['x-user-issuer'])).toBe(iss);
      }
    } finally {
      await idp.close();
      await jwks.close();
    }
  });

  it('is provisioned from a claim exactly as GET /api/tenant provisions', async () => {
    const tenant = await createTenant(); // created as by a platform admin: provision_from_claims true
    const sub = unique('claimed');
    const r = await decide().set('Authorization', bearer(tokenFor({ sub, claims: { tenant: tenant.slug } }))).expect(200);
    const row = await ownerConnection()('users').where({ tenant_id: tenant.id, subject: sub }).first('id', 'role');
    expect(row).toMatchObject({ id: r.headers['x-user-id'], role: 'member' });
    const event = await ownerConnection()('events').where({ tenant_id: tenant.id, action: 'member.provisioned' }).first('target_id');
    expect(event?.target_id).toBe(row.id);

    // A tenant that admits by invitation only: the claim does not provision, the decision refuses.
    const closed = await createTenant();
    await ownerConnection()('tenants').where({ id: closed.id }).update({ provision_from_claims: false });
    const denied = await decide().set('Authorization', bearer(tokenFor({ sub: unique('claimed'), claims: { tenant: closed.slug } })));
    expect(refusal(denied)).toEqual({ status: 403, error: 'Access denied', header: 'Access denied' });
    expect(await ownerConnection()('users').where({ tenant_id: closed.id }).count('* as n').first()).toEqual({ n: '0' });
  });

  it('?role=admin refuses a member (403 Forbidden) and allows an admin', async () => {
    const member = await tenantWithMember('member');
    const m = await request(app.app).get('/api/tenant/decision?role=admin').set('Authorization', bearer(member.token)).set('X-Tenant', member.tenant.slug);
    expect(refusal(m)).toEqual({ status: 403, error: 'Forbidden', header: 'Forbidden' });
    const admin = await tenantWithMember('admin');
    await request(app.app).get('/api/tenant/decision?role=admin').set('Authorization', bearer(admin.token)).set('X-Tenant', admin.tenant.slug).expect(200);
    await request(app.app).get('/api/tenant/decision?role=member').set('Authorization', bearer(member.token)).set('X-Tenant', member.tenant.slug).expect(200);
    // Any role key is accepted (docs/roles.md): one the caller does not hold is refused.
    const other = await request(app.app).get('/api/tenant/decision?role=owner').set('Authorization', bearer(admin.token)).set('X-Tenant', admin.tenant.slug);
    expect(refusal(other)).toEqual({ status: 403, error: 'Forbidden', header: 'Forbidden' });
    const bad = await request(app.app).get('/api/tenant/decision?role=Not_A_Key').set('Authorization', bearer(admin.token)).set('X-Tenant', admin.tenant.slug);
    expect(refusal(bad)).toEqual({ status: 403, error: 'Validation error', header: 'Validation error' });
  });

  it("a client's query appended after the gateway's (Envoy's path_prefix) cannot lift the role the gateway requires", async () => {
    const member = await tenantWithMember('member');
    const forwarded = '/api/tenant/decision?role=admin&path=/whoami?page=2&role=member';
    const m = await request(app.app).get(forwarded).set('Authorization', bearer(member.token)).set('X-Tenant', member.tenant.slug);
    expect(refusal(m).status).toBe(403);
  });

  it('takes only permission and role: any other parameter before path, or another spelling, is 400 naming it', async () => {
    const { tenant, token } = await tenantWithMember('member');
    for (const query of ['permisson=x', 'Permission=invoices:write', 'permissions=invoices:write', 'permission[]=invoices:write', 'permission%5B%5D=invoices:write', 'role=member&Role=admin', 'x=1&path=/a']) {
      const r = await request(app.app).get(`/api/tenant/decision?${query}`).set('Authorization', bearer(token)).set('X-Tenant', tenant.slug);
      const name = decodeURIComponent(query.split('&').map((p) => p.split('=')[0]!).find((n) => !['role', 'permission'].includes(n))!);
      expect({ query, ...refusal(r) }).toEqual({ query, status: 400, error: 'Bad request', header: 'Bad request' });
      expect(r.body.detail).toContain(`'${name}'`);
    }
    // The same 400 for every forwarded method.
    const post = await request(app.app).post('/api/tenant/decision?permisson=x').set('Authorization', bearer(token)).set('X-Tenant', tenant.slug);
    expect(refusal(post)).toEqual({ status: 400, error: 'Bad request', header: 'Bad request' });
  });

  it('ignores everything from path= on (what Envoy appends), whatever it is', async () => {
    const { tenant, user, token } = await tenantWithMember('member');
    for (const query of ['path=/graphql?x=1&permisson=y&role=admin&permission=nope:nope', 'role=member&path=/a&Permission=x', 'path', 'path=&x[]=1']) {
      const r = await request(app.app).get(`/api/tenant/decision?${query}`).set('Authorization', bearer(token)).set('X-Tenant', tenant.slug);
      expect({ query, status: r.status, user: r.headers['x-user-id'] }).toEqual({ query, status: 200, user: user.id });
    }
    // The gateway's own parameters before path= still count.
    const before = await request(app.app).get('/api/tenant/decision?permission=invoices:write&path=/invoices').set('Authorization', bearer(token)).set('X-Tenant', tenant.slug);
    expect(refusal(before)).toEqual({ status: 403, error: 'Access denied', header: 'Access denied' });
  });
});

describe('X-Tenant-Token (SERVICE_DECISION_TENANT_TOKEN)', () => {
  let withToken: TestApp;
  beforeAll(async () => {
    withToken = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_DECISION_TENANT_TOKEN: 'true' });
  }, 120_000);
  afterAll(async () => {
    await withToken?.close();
  });

  it('is absent by default', async () => {
    const { tenant, token } = await tenantWithMember('member');
    const r = await decide().set('Authorization', bearer(token)).set('X-Tenant', tenant.slug).expect(200);
    expect(r.headers['x-tenant-token']).toBeUndefined();
  });

  it('when on, carries a tenant token for the caller and tenant that verifies against the served key set', async () => {
    const { tenant, user, token } = await tenantWithMember('admin');
    const r = await decide(withToken).set('Authorization', bearer(token)).set('X-Tenant', tenant.slug).expect(200);
    const tenantToken = r.headers['x-tenant-token'] as string;
    expect(tenantToken).toEqual(expect.any(String));
    const jwks = (await request(withToken.app).get('/.well-known/jwks.json').expect(200)).body as JSONWebKeySet;
    const { payload, protectedHeader } = await jwtVerify(tenantToken, createLocalJWKSet(jwks), {
      issuer: withToken.config.tenantTokenIssuer,
      audience: withToken.config.tenantTokenAudience,
      typ: 'at+jwt',
      algorithms: ['ES256'],
    });
    expect(protectedHeader.typ).toBe('at+jwt');
    expect(payload).toMatchObject({ sub: user.subject, tenant_id: tenant.id, tenant_slug: tenant.slug, tenant_role: 'admin', user_id: user.id });
    // A refusal carries none.
    const refused = await decide(withToken).set('Authorization', bearer(token)).set('X-Tenant', unique('nowhere')).expect(403);
    expect(refused.headers['x-tenant-token']).toBeUndefined();
  });
});

describe('refusals are 401 for the token and 403 for everything else', () => {
  it('no token, or a bad one: 401 with WWW-Authenticate and X-Tenant-Error', async () => {
    const { tenant } = await tenantWithMember('member');
    for (const auth of [undefined, 'Bearer not-a-jwt', bearer(tokenFor({ sub: unique('u'), ttlSeconds: -60 }))]) {
      const req = decide().set('X-Tenant', tenant.slug);
      const r = await (auth ? req.set('Authorization', auth) : req);
      expect(refusal(r)).toEqual({ status: 401, error: 'Unauthorized', header: 'Unauthorized' });
      expect(r.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(r.headers['x-tenant-id']).toBeUndefined();
    }
  });

  it('no tenant, a malformed or unknown one, a stranger, a pending tenant, a mismatch: 403 naming the error', async () => {
    const { tenant } = await tenantWithMember('member');
    const stranger = bearer(tokenFor({ sub: unique('stranger') }));
    const pending = await createTenant({ status: 'pending_approval' });
    const pendingMember = await createUser(pending.id);
    const other = await createTenant();
    const cases: Array<[string, request.Test, string]> = [
      ['no tenant', decide().set('Authorization', stranger), 'Missing X-Tenant header'],
      ['malformed X-Tenant', decide().set('Authorization', stranger).set('X-Tenant', 'Not_A_Slug'), 'Invalid X-Tenant header format'],
      ['unknown tenant', decide().set('Authorization', stranger).set('X-Tenant', unique('missing')), 'Tenant not found'],
      ['stranger', decide().set('Authorization', stranger).set('X-Tenant', tenant.slug), 'Access denied'],
      ['pending', decide().set('Authorization', bearer(tokenFor({ sub: pendingMember.subject }))).set('X-Tenant', pending.slug), 'Tenant pending approval'],
      ['mismatch', decide().set('Authorization', bearer(tokenFor({ sub: unique('u'), claims: { tenant: tenant.slug } }))).set('X-Tenant', other.slug), 'Access denied'],
      ['platform admin, not a member', decide().set('Authorization', bearer(adminToken())).set('X-Tenant', tenant.slug), 'Access denied'],
    ];
    for (const [name, send, error] of cases) {
      const r = await send;
      expect({ name, ...refusal(r) }).toEqual({ name, status: 403, error, header: error });
      expect(typeof r.body.detail).toBe('string');
      expect(r.headers['x-tenant-id']).toBeUndefined();
    }
  });

  it('a member removed from the tenant is refused on the next request', async () => {
    const { tenant, user, token } = await tenantWithMember('member');
    const owner = await createUser(tenant.id, { role: 'admin' });
    await decide().set('Authorization', bearer(token)).set('X-Tenant', tenant.slug).expect(200);
    await request(app.app).delete(`/api/tenant/members/${user.id}`).set('Authorization', bearer(tokenFor({ sub: owner.subject }))).set('X-Tenant', tenant.slug).expect(204);
    const r = await decide().set('Authorization', bearer(token)).set('X-Tenant', tenant.slug);
    expect(refusal(r)).toEqual({ status: 403, error: 'Access denied', header: 'Access denied' });
  });

  it('a member deleted from the database behind the service is refused once the change notification arrives', async () => {
    // Another instance's write, or an operator's SQL: honoured when its notification reaches this
    // instance (docs/architecture.md "Decisions from memory"; measured across instances elsewhere).
    const { tenant, user, token } = await tenantWithMember('member');
    await decide().set('Authorization', bearer(token)).set('X-Tenant', tenant.slug).expect(200);
    await ownerConnection()('users').where({ id: user.id }).delete();
    let r = await decide().set('Authorization', bearer(token)).set('X-Tenant', tenant.slug);
    for (let tries = 0; r.status === 200 && tries < 200; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      r = await decide().set('Authorization', bearer(token)).set('X-Tenant', tenant.slug);
    }
    expect(refusal(r)).toEqual({ status: 403, error: 'Access denied', header: 'Access denied' });
  });
});

describe('rate limit and metrics', () => {
  it('counts against its own `decision` counter (SERVICE_RATE_LIMIT_DECISION_PER_MINUTE), not the api counter', async () => {
    const { tenant, token } = await tenantWithMember('member');
    const statuses: number[] = [];
    let last: request.Response | undefined;
    for (let i = 0; i < 4; i++) {
      last = await decide(limited).set('Authorization', bearer(token)).set('X-Tenant', tenant.slug);
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(refusal(last!)).toEqual({ status: 429, error: 'Rate limit exceeded', header: 'Rate limit exceeded' });
    expect(last!.headers['ratelimit-policy']).toMatch(/^"decision"; q=3; w=60/);
    const other = await request(limited.app).get('/api/tenant').set('Authorization', bearer(token)).set('X-Tenant', tenant.slug).expect(200);
    expect(other.headers['x-ratelimit-limit']).toBe('600');
  });

  it('counts decisions by outcome, with no tenant or user label', async () => {
    const { tenant, token } = await tenantWithMember('member');
    const before = parseExposition(await limitedFreeMetrics());
    await decide().set('Authorization', bearer(token)).set('X-Tenant', tenant.slug).expect(200);
    await decide().set('X-Tenant', tenant.slug).expect(401);
    await decide().set('Authorization', bearer(token)).set('X-Tenant', 'Bad_Slug').expect(403);
    await decide().set('Authorization', bearer(token)).set('X-Tenant', unique('missing')).expect(403);
    const after = parseExposition(await limitedFreeMetrics());
    const delta = (outcome: string) => (sampleValue(after, 'tenant_service_tenant_decisions_total', { outcome }) ?? 0) - (sampleValue(before, 'tenant_service_tenant_decisions_total', { outcome }) ?? 0);
    expect({ allowed: delta('allowed'), unauthorized: delta('unauthorized'), forbidden: delta('forbidden') }).toEqual({ allowed: 1, unauthorized: 1, forbidden: 2 });
    const family = after.get('tenant_service_tenant_decisions_total')!;
    expect(family.type).toBe('counter');
    for (const s of family.samples) expect(Object.keys(s.labels)).toEqual(['outcome']);
  });
});

async function limitedFreeMetrics(): Promise<string> {
  const r = await request(app.app).get('/metrics').expect(200);
  return r.text;
}
