/**
 * Tenant tokens (docs/tenant-tokens.md#the-token): POST /api/tenant/token mints an ES256 `at+jwt`
 * that a product verifies with jose against the served /.well-known/jwks.json; the key set lives in
 * PostgreSQL, shared by instances, encrypted at rest with SERVICE_KEY_ENCRYPTION_SECRET, rotated
 * without a failed verification; the service refuses its own tenant tokens as bearer tokens.
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import type { Express } from 'express';
import { createLocalJWKSet, createRemoteJWKSet, decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTVerifyResult } from 'jose';
import request from 'supertest';
import { LOCAL_ISSUER } from '../../../src/auth/local-keys';
import { insertTenantTokenKey } from '../../../src/db/queries/tenant-tokens';
import { withService, withTenant } from '../../../src/db/tenant-scope';
import { privateKeyOf } from '../../../src/domain/tenant-tokens';
import type { TenantTokenKey } from '../../../src/context/records';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createFreshDatabase, type FreshDatabase } from '../../helpers/fresh-database';
import { adminToken, closeOwnerConnection, createTenant, tenantWithMember, tokenFor, unique } from '../../helpers/factories';
import { SYSTEM_PERMISSIONS } from '../../../src/context/permissions';

jest.setTimeout(120_000);

const run = promisify(execFile);
const SECRET = 'test-key-encryption-secret-0123456789abcdef';

interface Listening {
  url: string;
  close(): Promise<void>;
}

/** Serves `app` (or whatever `handler()` returns at request time) on a spare port. */
async function listen(handler: () => Express | null): Promise<Listening> {
  const server = http.createServer((req, res) => {
    const app = handler();
    if (!app) {
      res.statusCode = 503;
      res.end();
      return;
    }
    app(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

async function mint(app: Express, token: string, tenantSlug?: string): Promise<request.Response> {
  const r = request(app).post('/api/tenant/token').set('Authorization', `Bearer ${token}`);
  if (tenantSlug) r.set('X-Tenant', tenantSlug);
  return r;
}

async function verify(jwt: string, keys: Parameters<typeof jwtVerify>[1], t: TestApp, currentDate?: Date): Promise<JWTVerifyResult> {
  return jwtVerify(jwt, keys as never, { issuer: t.config.tenantTokenIssuer, audience: t.config.tenantTokenAudience, typ: 'at+jwt', algorithms: ['ES256'], currentDate });
}

async function keyRows(t: TestApp): Promise<TenantTokenKey[]> {
  return withService(t.db, async (trx) => (await trx('tenant_token_keys').select('*').orderBy('created_at')) as TenantTokenKey[]);
}

afterAll(async () => {
  await closeOwnerConnection();
});

describe('POST /api/tenant/token on the shared database (local provider, multi-tenant)', () => {
  let t: TestApp;
  let server: Listening;

  beforeAll(async () => {
    t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
    server = await listen(() => t.app);
  });
  afterAll(async () => {
    await server.close();
    await t.close();
  });

  it('mints a token a product verifies with jose against the served JWKS, with the documented claims', async () => {
    const { tenant, user, token } = await tenantWithMember('admin');
    const r = await mint(t.app, token, tenant.slug);
    expect(r.status).toBe(200);
    expect(r.headers['cache-control']).toBe('no-store');
    expect(r.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 300, tenant_id: tenant.id, tenant_slug: tenant.slug, role: 'admin', permissions: [...SYSTEM_PERMISSIONS] });

    const jwks = createRemoteJWKSet(new URL(`${server.url}/.well-known/jwks.json`));
    const { payload, protectedHeader } = await verify(r.body.access_token, jwks, t);
    expect(protectedHeader).toEqual({ alg: 'ES256', typ: 'at+jwt', kid: expect.any(String) });
    expect(payload).toEqual({
      iss: t.config.tenantTokenIssuer,
      aud: 'tenant-service-products',
      sub: user.subject,
      idp_iss: LOCAL_ISSUER,
      client_id: 'tenant-service',
      tenant_id: tenant.id,
      tenant_slug: tenant.slug,
      tenant_role: 'admin',
      permissions: [...SYSTEM_PERMISSIONS],
      user_id: user.id,
      iat: expect.any(Number),
      exp: expect.any(Number),
      jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(payload.exp! - payload.iat!).toBe(300);
    // Another audience or issuer is refused by the product's check.
    await expect(jwtVerify(r.body.access_token, jwks, { audience: 'another-product' })).rejects.toBeInstanceOf(joseErrors.JWTClaimValidationFailed);
    await expect(jwtVerify(r.body.access_token, jwks, { issuer: 'https://someone.else' })).rejects.toBeInstanceOf(joseErrors.JWTClaimValidationFailed);
  });

  it('gives a member the member role, and each token its own jti', async () => {
    const { tenant, token } = await tenantWithMember('member');
    const [a, b] = [await mint(t.app, token, tenant.slug), await mint(t.app, token, tenant.slug)];
    expect(a.body.role).toBe('member');
    const jwks = createRemoteJWKSet(new URL(`${server.url}/.well-known/jwks.json`));
    const [pa, pb] = [(await verify(a.body.access_token, jwks, t)).payload, (await verify(b.body.access_token, jwks, t)).payload];
    expect(pa.tenant_role).toBe('member');
    expect(pa.jti).not.toBe(pb.jti);
  });

  it('refuses strangers, platform admins who are not members, bad tenants and missing tokens, like GET /api/tenant', async () => {
    const tenant = await createTenant();
    const stranger = await mint(t.app, tokenFor(), tenant.slug);
    expect(stranger.status).toBe(403);
    expect(stranger.body.error).toBe('Access denied');
    const admin = await mint(t.app, adminToken(), tenant.slug);
    expect(admin.status).toBe(403);
    expect(admin.body.detail).toMatch(/members only/);
    expect((await mint(t.app, tokenFor(), 'no-such-tenant-' + unique())).status).toBe(404);
    expect((await mint(t.app, tokenFor(), 'Not A Slug!')).status).toBe(400);
    expect((await request(t.app).post('/api/tenant/token').set('X-Tenant', tenant.slug)).status).toBe(401);
  });

  it('refuses its own tenant token as a bearer token (401), here in `local` mode', async () => {
    const { tenant, token } = await tenantWithMember();
    const tenantToken = (await mint(t.app, token, tenant.slug)).body.access_token as string;
    const r = await request(t.app).get('/api/tenant').set('Authorization', `Bearer ${tenantToken}`).set('X-Tenant', tenant.slug);
    expect(r.status).toBe(401);
    expect(r.headers['www-authenticate']).toMatch(/^Bearer /);
  });

  it('keeps the keys out of tenant transactions (row-level security)', async () => {
    await request(t.app).get('/.well-known/jwks.json').expect(200);
    const tenant = await createTenant();
    expect((await keyRows(t)).length).toBeGreaterThan(0);
    const seen = await withTenant(t.db, tenant.id, async (trx) => trx('tenant_token_keys').select('kid'));
    expect(seen).toEqual([]);
  });

  it('rotation is for platform admins and records tenant_token.key_rotated without key material', async () => {
    const { tenant, token } = await tenantWithMember('admin');
    expect((await request(t.app).post('/api/setup/tenant-token-keys/rotate').set('Authorization', `Bearer ${token}`).set('X-Tenant', tenant.slug)).status).toBe(403);

    const r = await request(t.app).post('/api/setup/tenant-token-keys/rotate').set('Authorization', `Bearer ${adminToken()}`).expect(200);
    expect(r.body).toEqual({ kid: expect.any(String), signs_from: expect.any(String), previous_kid: expect.any(String), previous_published_until: expect.any(String) });
    // Published at once, signing only after the publish delay (15 minutes by default).
    expect(Date.parse(r.body.signs_from) - Date.now()).toBeGreaterThan(10 * 60_000);
    const jwks = await request(t.app).get('/.well-known/jwks.json').expect(200);
    expect(jwks.body.keys.map((k: { kid: string }) => k.kid)).toEqual(expect.arrayContaining([r.body.kid, r.body.previous_kid]));
    const minted = await mint(t.app, token, tenant.slug);
    expect(decodeProtectedHeader(minted.body.access_token).kid).not.toBe(r.body.kid);

    const events = await request(t.app).get('/api/setup/events').query({ action: 'tenant_token.key_rotated', limit: 20 }).set('Authorization', `Bearer ${adminToken()}`).expect(200);
    const event = events.body.events.find((e: { target: { id: string } }) => e.target.id === r.body.kid);
    expect(event).toEqual(expect.objectContaining({ action: 'tenant_token.key_rotated', tenant_id: null, target: { type: 'tenant_token_key', id: r.body.kid } }));
    expect(event.data).toEqual(expect.objectContaining({ kid: r.body.kid, previous_kid: r.body.previous_kid, signs_from: expect.any(String) }));

    // No private half anywhere: not in the event, the answer, the JWKS or the log.
    const rows = await keyRows(t);
    const secrets = rows.filter((k) => [r.body.kid, r.body.previous_kid].includes(k.kid)).map((k) => privateKeyOf(k, t.config.keyEncryptionSecret).export({ format: 'jwk' }).d!);
    expect(secrets).toHaveLength(2);
    const everything = JSON.stringify([event, r.body, jwks.body, t.logs]);
    for (const d of secrets) expect(everything).not.toContain(d);
    expect(everything).not.toMatch(/PRIVATE KEY|"d":/);
  });

  it('a failed key insert reports the database error without the statement that carries the private key', async () => {
    await request(t.app).get('/.well-known/jwks.json').expect(200);
    const [existing] = await keyRows(t);
    const privateKey = { kty: 'EC', crv: 'P-256', x: 'x', y: 'y', d: 'private-material-must-not-leak' };
    const err = await withService(t.db, (trx) => insertTenantTokenKey(trx, { kid: existing!.kid, publicJwk: existing!.public_jwk, privateKey, encryption: 'none' }, 0)).catch((e: unknown) => e);
    expect(err).toEqual(expect.objectContaining({ code: '23505', message: expect.stringMatching(/^insert into tenant_token_keys failed - duplicate key value/) }));
    expect(`${(err as Error).message} ${(err as Error).stack}`).not.toContain('private-material-must-not-leak');
  });

  it('counts the tokens it issues in /metrics (no tenant label)', async () => {
    const { tenant, token } = await tenantWithMember();
    const count = async () => Number(/^tenant_service_tenant_tokens_issued_total (\d+)$/m.exec((await request(t.app).get('/metrics')).text)?.[1]);
    const before = await count();
    await mint(t.app, token, tenant.slug).then((r) => expect(r.status).toBe(200));
    expect(await count()).toBe(before + 1);
  });
});

describe('its own tenant tokens are refused even where the JWKS it trusts is its own (jwks provider)', () => {
  let minter: TestApp;
  let self: TestApp | null = null;
  let server: Listening;

  beforeAll(async () => {
    minter = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
    server = await listen(() => self?.app ?? null);
    // A jwks-provider instance on the same database whose SERVICE_JWKS_URI is its own JWKS: it
    // trusts the tenant-token keys, so only the tenant-token check stands between them and a caller.
    self = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_AUTH_PROVIDER: 'jwks', SERVICE_JWKS_URI: `${server.url}/.well-known/jwks.json` });
  });
  afterAll(async () => {
    await server.close();
    await self?.close();
    await minter.close();
  });

  it('answers 401 to a tenant token signed by a key it publishes', async () => {
    const { tenant, token } = await tenantWithMember();
    const tenantToken = (await mint(minter.app, token, tenant.slug)).body.access_token as string;
    // The token is good for a product verifying against this instance's JWKS…
    await verify(tenantToken, createRemoteJWKSet(new URL(`${server.url}/.well-known/jwks.json`)), self!);
    // …and refused as a bearer token by the instance itself.
    const r = await request(self!.app).get('/api/tenants/mine').set('Authorization', `Bearer ${tenantToken}`);
    expect(r.status).toBe(401);
    expect(r.body.detail).toMatch(/tenant token/);
  });
});

describe('expiry', () => {
  let t: TestApp;
  afterAll(async () => {
    await t?.close();
  });

  it('a token past its exp is refused by jose', async () => {
    t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_TENANT_TOKEN_TTL: '1' });
    const { tenant, token } = await tenantWithMember();
    const r = await mint(t.app, token, tenant.slug);
    expect(r.body.expires_in).toBe(1);
    const keys = createLocalJWKSet((await request(t.app).get('/.well-known/jwks.json')).body);
    // Valid at the moment it was issued (checked at its iat, so a slow machine cannot make the
    // second-long token expire before this first check)…
    const { payload } = await verify(r.body.access_token, keys, t, new Date(decodeJwt(r.body.access_token).iat! * 1000));
    expect(payload.exp! - payload.iat!).toBe(1);
    // …and refused once the clock is past exp.
    while (Date.now() / 1000 < payload.exp! + 1) await new Promise((res) => setTimeout(res, 250));
    await expect(verify(r.body.access_token, keys, t)).rejects.toBeInstanceOf(joseErrors.JWTExpired);
  });
});

describe('on a database of its own', () => {
  let fresh: FreshDatabase;
  const apps: TestApp[] = [];
  const servers: Listening[] = [];

  beforeEach(async () => {
    fresh = await createFreshDatabase('tenant_service_tokens');
  });
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
    for (const a of apps.splice(0)) await a.close();
    await fresh.drop();
  });

  async function app(env: Record<string, string> = {}, opts: Parameters<typeof startTestApp>[1] = {}): Promise<TestApp> {
    const a = await startTestApp({ SERVICE_DATABASE_URL: fresh.url, ...env }, opts);
    apps.push(a);
    return a;
  }

  /** A member of the fresh database's default tenant (single-tenant mode) and their token. */
  async function member(t: TestApp): Promise<string> {
    const tenantId = (await withService(t.db, (trx) => trx('tenants').where({ is_default: true }).first('id')))!.id as string;
    const subject = unique('member');
    await withTenant(t.db, tenantId, (trx) => trx('users').insert({ tenant_id: tenantId, issuer: LOCAL_ISSUER, subject, email: `${subject}@example.test`, role: 'member' }));
    return tokenFor({ sub: subject });
  }

  async function dumpKeys(): Promise<string> {
    const { stdout } = await run('pg_dump', ['--data-only', '--table=tenant_token_keys', fresh.url], { maxBuffer: 16 * 1024 * 1024 });
    expect(stdout).toContain('COPY public.tenant_token_keys');
    return stdout;
  }

  it('two instances starting at once end with one key, and each verifies the other\'s tokens', async () => {
    const [a, b] = await Promise.all([app(), app()]);
    const [ja, jb] = await Promise.all([request(a.app).get('/.well-known/jwks.json'), request(b.app).get('/.well-known/jwks.json')]);
    expect((await keyRows(a)).length).toBe(1);
    expect(ja.body.keys).toEqual(jb.body.keys);

    const token = await member(a);
    const fromA = (await mint(a.app, token)).body.access_token as string;
    const fromB = (await mint(b.app, token)).body.access_token as string;
    const [sa, sb] = [await listen(() => a.app), await listen(() => b.app)];
    servers.push(sa, sb);
    await verify(fromB, createRemoteJWKSet(new URL(`${sa.url}/.well-known/jwks.json`)), a);
    await verify(fromA, createRemoteJWKSet(new URL(`${sb.url}/.well-known/jwks.json`)), b);
    expect(decodeProtectedHeader(fromA).kid).toBe(decodeProtectedHeader(fromB).kid);
  });

  it('a rotation in the middle of a stream of verifications fails none', async () => {
    // Production timing scaled down: instances reload the key set every 200 ms, the next key
    // signs 3 s after it is published, and the product's jose cache keeps the JWKS for 1 s.
    const timing = { tenantTokenKeys: { refreshMs: 200, publishDelaySeconds: 3 } };
    const [a, b] = [await app({}, timing), await app({}, timing)];
    const sa = await listen(() => a.app);
    servers.push(sa);
    const token = await member(a);
    const jwks = createRemoteJWKSet(new URL(`${sa.url}/.well-known/jwks.json`), { cacheMaxAge: 1_000 });

    const failures: string[] = [];
    const kids: string[] = [];
    let rotated: { kid: string; previous_kid: string } | null = null;
    let afterSwitch = 0;
    for (let i = 0; afterSwitch < 20; i++) {
      if (i > 2000) throw new Error(`the new key never signed; kids seen: ${[...new Set(kids)].join(', ')}`);
      if (i === 5) rotated = (await request(a.app).post('/api/setup/tenant-token-keys/rotate').set('Authorization', `Bearer ${adminToken()}`).expect(200)).body;
      const r = await mint(i % 2 ? b.app : a.app, token);
      const kid = decodeProtectedHeader(r.body.access_token).kid!;
      kids.push(kid);
      await verify(r.body.access_token, jwks, a).catch((err: Error) => failures.push(`${kid}: ${err.name}`));
      if (rotated && kid === rotated.kid) afterSwitch++;
      await new Promise((res) => setTimeout(res, 20));
    }
    expect(failures).toEqual([]);
    // The stream began on an older key and ended on the rotated one. Other suites share the
    // database's key set and may rotate it too, so no exact list of key ids is asserted.
    expect(kids[0]).not.toBe(rotated!.kid);
  });

  it('with SERVICE_KEY_ENCRYPTION_SECRET a database dump holds no usable private key; without it, it does', async () => {
    const encrypted = await app({ SERVICE_KEY_ENCRYPTION_SECRET: SECRET });
    const token = await member(encrypted);
    const minted = await mint(encrypted.app, token);
    expect(minted.status).toBe(200);
    const [row] = await keyRows(encrypted);
    expect(row!.private_key_encryption).toBe('aes-256-gcm');
    const d = privateKeyOf(row!, SECRET).export({ format: 'jwk' }).d!;
    // The key really signed the token, so `d` is the material a thief would want.
    await verify(minted.body.access_token, createLocalJWKSet((await request(encrypted.app).get('/.well-known/jwks.json')).body), encrypted);
    const dump = await dumpKeys();
    expect(dump).toContain(row!.kid);
    expect(dump).not.toContain(d);
    expect(dump).not.toMatch(/"d":|PRIVATE KEY/);
    expect(() => privateKeyOf(row!, 'another-secret-of-at-least-32-bytes-long')).toThrow(/does not decrypt/);

    // An instance with another secret cannot sign (503, nothing secret in its answer or log).
    const other = await app({ SERVICE_KEY_ENCRYPTION_SECRET: 'another-secret-of-at-least-32-bytes-long' });
    const refused = await mint(other.app, token);
    expect(refused.status).toBe(503);
    expect(JSON.stringify([refused.body, other.logs])).not.toContain(d);
    expect(other.logs.some((l) => l.msg === 'Tenant-token signing key unusable')).toBe(true);

    // Setup status recommends the secret only while it is unset.
    const status = async (t: TestApp) => (await request(t.app).get('/api/setup/status').set('Authorization', `Bearer ${adminToken()}`).expect(200)).body.recommendations.join('\n') as string;
    expect(await status(encrypted)).not.toMatch(/SERVICE_KEY_ENCRYPTION_SECRET/);

    // The control: without the secret the same dump carries the private key.
    for (const a of apps.splice(0)) await a.close();
    await fresh.drop();
    fresh = await createFreshDatabase('tenant_service_tokens');
    const plain = await app();
    expect((await mint(plain.app, await member(plain))).status).toBe(200);
    const [plainRow] = await keyRows(plain);
    const plainD = privateKeyOf(plainRow!, null).export({ format: 'jwk' }).d!;
    expect(await dumpKeys()).toContain(plainD);
    expect(await status(plain)).toMatch(/set SERVICE_KEY_ENCRYPTION_SECRET/);
  });
});
