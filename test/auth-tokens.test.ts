/**
 * Token verification for every provider. Every broken token is a 401 with the error body and
 * WWW-Authenticate, and none reaches a handler (no row is provisioned, no tenant resolved).
 */
import crypto from 'node:crypto';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { LOCAL_ISSUER, loadOrCreateLocalKeys } from '../src/auth/local-keys';
import { startTestApp, TEST_DATA_DIR, type TestApp } from './helpers/app';
import { startJwksServer, type JwksServer } from './helpers/jwks-server';
import { closeOwnerConnection, createTenant, ownerConnection, tokenFor, unique } from './factories';

const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

let jwks: JwksServer;
let tenantSlug: string;
beforeAll(async () => {
  jwks = await startJwksServer();
  tenantSlug = (await createTenant()).slug;
});
afterAll(async () => {
  await jwks.close();
  await closeOwnerConnection();
});

async function expect401(t: TestApp, token: string | null, authHeader?: string) {
  const logsBefore = t.logs.length;
  const req = request(t.app).get('/api/tenant').set('X-Tenant', tenantSlug);
  if (authHeader !== undefined) req.set('Authorization', authHeader);
  else if (token !== null) req.set('Authorization', `Bearer ${token}`);
  const r = await req;
  expect(r.status).toBe(401);
  expect(r.body.error).toBe('Unauthorized');
  expect(typeof r.body.detail).toBe('string');
  expect(r.headers['www-authenticate']).toMatch(/^Bearer/);
  expect(t.logs.slice(logsBefore).some((l) => l.msg === 'Tenant resolved for authenticated request')).toBe(false);
  return r;
}

describe('local provider', () => {
  let t: TestApp;
  const keys = () => loadOrCreateLocalKeys(TEST_DATA_DIR);
  beforeAll(async () => {
    t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
  });
  afterAll(() => t.close());

  const sign = (claims: Record<string, unknown>, opts: jwt.SignOptions = {}) => {
    const options: jwt.SignOptions = { algorithm: 'RS256', keyid: keys().kid, issuer: LOCAL_ISSUER, expiresIn: 300, ...opts };
    if ('exp' in claims || ('expiresIn' in opts && opts.expiresIn === undefined)) delete options.expiresIn;
    return jwt.sign(claims, keys().privateKey, options);
  };

  it('accepts a good token (control)', async () => {
    const sub = unique('ok');
    const r = await request(t.app).get('/api/tenant').set('Authorization', `Bearer ${sign({ sub, tenant: tenantSlug })}`);
    expect(r.status).toBe(200);
  });

  it('publishes the local key at /.well-known/jwks.json', async () => {
    const r = await request(t.app).get('/.well-known/jwks.json').expect(200);
    expect(r.body.keys).toEqual([expect.objectContaining({ kid: keys().kid, kty: 'RSA', alg: 'RS256', use: 'sig' })]);
    expect(r.body.keys[0].d).toBeUndefined();
  });

  it('no Authorization header', () => expect401(t, null));
  it('missing Bearer scheme', () => expect401(t, null, sign({ sub: 'x' })));
  it('Basic scheme', () => expect401(t, null, 'Basic dXNlcjpwYXNz'));
  it('garbage', () => expect401(t, 'not.a.jwt'));
  it('empty bearer', () => expect401(t, null, 'Bearer '));
  it('expired', () => expect401(t, sign({ sub: 'x', exp: now() - 3600 }, { expiresIn: undefined })));
  it('not yet valid', () => expect401(t, sign({ sub: 'x', nbf: now() + 3600 })));
  it('no exp', () => expect401(t, sign({ sub: 'x' }, { expiresIn: undefined })));
  it('missing sub', () => expect401(t, sign({ tenant: tenantSlug })));
  it('empty sub', () => expect401(t, sign({ sub: '' })));
  it('wrong issuer', () => expect401(t, sign({ sub: 'x' }, { issuer: 'https://evil.example' })));
  it('wrong signature (another key)', () => {
    const other = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    return expect401(t, jwt.sign({ sub: 'x' }, other, { algorithm: 'RS256', keyid: keys().kid, issuer: LOCAL_ISSUER, expiresIn: 300 }));
  });
  it('tampered payload', () => {
    const [h, , s] = sign({ sub: 'x', tenant: tenantSlug }).split('.');
    return expect401(t, `${h}.${b64({ sub: 'root', tenant: tenantSlug, iss: LOCAL_ISSUER, exp: now() + 300, roles: ['admin'] })}.${s}`);
  });
  it('alg: none', () => expect401(t, `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: 'x', iss: LOCAL_ISSUER, exp: now() + 300 })}.`));
  it('HS256 signed with the public key (algorithm confusion)', () => {
    const pem = keys().publicKey.export({ format: 'pem', type: 'spki' }) as string;
    const header = b64({ alg: 'HS256', typ: 'JWT', kid: keys().kid });
    const payload = b64({ sub: 'x', iss: LOCAL_ISSUER, exp: now() + 300 });
    const sig = crypto.createHmac('sha256', pem).update(`${header}.${payload}`).digest('base64url');
    return expect401(t, `${header}.${payload}.${sig}`);
  });
  it('refuses a token minted with another data dir', () => {
    const otherDir = `${TEST_DATA_DIR}-other-${unique()}`;
    const other = loadOrCreateLocalKeys(otherDir);
    return expect401(t, jwt.sign({ sub: 'x' }, other.privateKey, { algorithm: 'RS256', keyid: other.kid, issuer: LOCAL_ISSUER, expiresIn: 300 }));
  });

  it('never provisions a member for a refused token', async () => {
    const sub = unique('refused');
    await expect401(t, sign({ sub, tenant: tenantSlug, exp: now() - 3600 }, { expiresIn: undefined }));
    const rows = await ownerConnection()('users').where({ subject: sub });
    expect(rows).toEqual([]);
  });
});

describe('jwks provider (real JWKS over HTTP)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_JWKS_URI: jwks.jwksUri, SERVICE_JWT_AUDIENCE: 'tenant-api', SERVICE_JWT_ISSUER: jwks.issuer });
  });
  afterAll(() => t.close());

  const good = (claims: Record<string, unknown> = {}) => jwks.sign({ sub: unique('j'), tenant: tenantSlug, ...claims }, { audience: 'tenant-api', issuer: jwks.issuer });

  it('accepts a token signed by the JWKS key with the right issuer and audience', async () => {
    expect(t.config.authProvider).toBe('jwks');
    await request(t.app).get('/api/tenant').set('Authorization', `Bearer ${good()}`).expect(200);
  });
  it('wrong audience', () => expect401(t, jwks.sign({ sub: 'x' }, { audience: 'other', issuer: jwks.issuer })));
  it('no audience', () => expect401(t, jwks.sign({ sub: 'x' }, { issuer: jwks.issuer })));
  it('wrong issuer', () => expect401(t, jwks.sign({ sub: 'x' }, { audience: 'tenant-api', issuer: 'https://evil.example' })));
  it('HS256 token against RS256 keys', () => expect401(t, jwt.sign({ sub: 'x', aud: 'tenant-api', iss: jwks.issuer }, 'a-shared-secret-that-is-long-enough-32', { algorithm: 'HS256', expiresIn: 300 })));
  it('a local-provider token is refused', () => expect401(t, tokenFor({ sub: 'x', tenant: tenantSlug })));

  it('unknown key ids: 401, and the key server is not hammered', async () => {
    const other = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const before = jwks.requests.jwks;
    for (let i = 0; i < 30; i++) {
      const token = jwks.sign({ sub: 'x' }, { audience: 'tenant-api', issuer: jwks.issuer, key: other, kid: `unknown-${i}` });
      const r = await request(t.app).get('/api/tenant').set('X-Tenant', tenantSlug).set('Authorization', `Bearer ${token}`);
      expect(r.status).toBe(401);
    }
    // jwks-rsa rate-limits key fetches (10 per minute): 30 unknown kids cannot cause 30 fetches.
    expect(jwks.requests.jwks - before).toBeLessThanOrEqual(10);
    // and known keys keep working from the cache
    await request(t.app).get('/api/tenant').set('Authorization', `Bearer ${good()}`).expect(200);
  });

  it('platform admin from a dot-path role claim', async () => {
    const t2 = await startTestApp({ SERVICE_JWKS_URI: jwks.jwksUri, SERVICE_ADMIN_ROLE_CLAIM: 'realm_access.roles', SERVICE_ADMIN_ROLE: 'platform-admin' });
    try {
      const admin = jwks.sign({ sub: unique('a'), realm_access: { roles: ['user', 'platform-admin'] } });
      const user = jwks.sign({ sub: unique('u'), realm_access: { roles: ['user'] }, roles: ['platform-admin'] });
      const single = jwks.sign({ sub: unique('s'), realm_access: { roles: 'platform-admin' } });
      // GET /api/tenant in single-tenant mode shows whether the caller is a member; the admin
      // check is observable on /api/setup/*: 403 Forbidden vs anything else.
      const probe = async (token: string) => (await request(t2.app).get('/api/setup/audit').set('Authorization', `Bearer ${token}`)).status;
      expect(await probe(user)).toBe(403);
      expect(await probe(admin)).not.toBe(403);
      expect(await probe(single)).not.toBe(403);
    } finally {
      await t2.close();
    }
  });
});

describe('oidc provider (discovery)', () => {
  it('finds jwks_uri by discovery and checks the issuer', async () => {
    const t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_OIDC_ISSUER: jwks.issuer });
    try {
      expect(t.config.authProvider).toBe('oidc');
      const ok = jwks.sign({ sub: unique('o'), tenant: tenantSlug }, { issuer: jwks.issuer });
      await request(t.app).get('/api/tenant').set('Authorization', `Bearer ${ok}`).expect(200);
      expect(jwks.requests.discovery).toBeGreaterThanOrEqual(1);
      await expect401(t, jwks.sign({ sub: 'x' }, { issuer: 'https://elsewhere.example' }));
    } finally {
      await t.close();
    }
  });

  it('an unreachable identity provider is a 401, not a 500', async () => {
    const t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_OIDC_ISSUER: 'http://127.0.0.1:9' });
    try {
      await expect401(t, jwks.sign({ sub: 'x' }, { issuer: 'http://127.0.0.1:9' }));
    } finally {
      await t.close();
    }
  });
});

describe('jwt provider (HS256)', () => {
  const secret = crypto.randomBytes(32).toString('hex');
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_JWT_SECRET: secret });
  });
  afterAll(() => t.close());

  it('accepts HS256 with the shared secret', async () => {
    const token = jwt.sign({ sub: unique('h'), tenant: tenantSlug }, secret, { algorithm: 'HS256', expiresIn: 300 });
    await request(t.app).get('/api/tenant').set('Authorization', `Bearer ${token}`).expect(200);
  });
  it('refuses another secret', () => expect401(t, jwt.sign({ sub: 'x' }, `${secret}x`, { algorithm: 'HS256', expiresIn: 300 })));
  it('refuses RS256 tokens', () => expect401(t, jwks.sign({ sub: 'x' })));
  it('refuses HS512', () => expect401(t, jwt.sign({ sub: 'x' }, secret, { algorithm: 'HS512', expiresIn: 300 })));
});
