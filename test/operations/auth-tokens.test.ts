/**
 * Token verification for every provider. Every broken token is a 401 with the error body and
 * WWW-Authenticate, and none reaches a handler (no row is provisioned, no tenant resolved).
 */
import crypto from 'node:crypto';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { LOCAL_ISSUER, loadOrCreateLocalKeys } from '../../src/auth/local-keys';
import { startTestApp, TEST_DATA_DIR, type TestApp } from '../helpers/app';
import { startJwksServer, type JwksServer } from '../helpers/jwks-server';
import { closeOwnerConnection, createTenant, ownerConnection, tokenFor, unique } from '../helpers/factories';

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
    // With the verified-token cache on: every refusal below must hold with it too.
    t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_JWT_CACHE_SIZE: '1000' });
  });
  afterAll(() => t.close());

  const sign = (claims: Record<string, unknown>, opts: jwt.SignOptions = {}) => {
    const options: jwt.SignOptions = { algorithm: 'RS256', keyid: keys().kid, issuer: LOCAL_ISSUER, expiresIn: 300, ...opts };
    if ('exp' in claims || ('expiresIn' in opts && opts.expiresIn === undefined)) delete options.expiresIn;
    return jwt.sign(claims, keys().privateKey, options);
  };

  // src/auth/token-cache.ts: a token verified once is remembered, but never past its validity.
  it('a remembered token is refused the moment it expires (exp + 30 s tolerance)', async () => {
    const exp = now() - 27; // valid for 2–3 more seconds, thanks to the 30 s tolerance
    const token = sign({ sub: unique('expiring'), tenant: tenantSlug, exp });
    await request(t.app).get('/api/tenant').set('Authorization', `Bearer ${token}`).expect(200);
    await request(t.app).get('/api/tenant').set('Authorization', `Bearer ${token}`).expect(200); // from the cache
    while (now() < exp + 30) await new Promise((r) => setTimeout(r, 100));
    const r = await expect401(t, token);
    expect(r.body.detail).toMatch(/expired/);
  });

  it('a remembered token does not vouch for another text (one changed signature byte)', async () => {
    const token = sign({ sub: unique('cached'), tenant: tenantSlug });
    await request(t.app).get('/api/tenant').set('Authorization', `Bearer ${token}`).expect(200);
    // Not the last character: its low bits are base64url padding, ignored when decoding.
    const i = token.length - 10;
    await expect401(t, `${token.slice(0, i)}${token[i] === 'A' ? 'B' : 'A'}${token.slice(i + 1)}`);
  });

  it('accepts a good token (control)', async () => {
    const sub = unique('ok');
    const r = await request(t.app).get('/api/tenant').set('Authorization', `Bearer ${sign({ sub, tenant: tenantSlug })}`);
    expect(r.status).toBe(200);
  });

  it('publishes the local key at /.well-known/jwks.json', async () => {
    const r = await request(t.app).get('/.well-known/jwks.json').expect(200);
    // Beside it, the tenant-token keys (ES256), published in every auth mode.
    expect(r.body.keys[0]).toEqual(expect.objectContaining({ kid: keys().kid, kty: 'RSA', alg: 'RS256', use: 'sig' }));
    expect(r.body.keys.slice(1).length).toBeGreaterThan(0);
    for (const k of r.body.keys.slice(1)) expect(k).toEqual(expect.objectContaining({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' }));
    for (const k of r.body.keys) expect(k.d).toBeUndefined();
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
  // The subject names the caller exactly (docs/security.md#who-the-caller-is).
  it.each([
    ['surrounding spaces', '  alice  '],
    ['a leading tab', '\talice'],
    ['a trailing newline', 'alice\n'],
    ['a no-break space', '\u00a0alice'],
    ['white space only', '   '],
    ['a NUL inside', 'al\u0000ice'],
    ['an escape inside', 'al\u001bice'],
    ['DEL inside', 'al\u007fice'],
    ['a C1 control inside', 'al\u0085ice'],
  ])('sub with %s', async (_what, subject) => {
    const r = await expect401(t, sign({ sub: subject, tenant: tenantSlug }));
    expect(r.body.detail).toBe("The token's subject (sub) has surrounding white space or control characters.");
    // The decision too: never `X-User-Subject: alice` for a token of "  alice  ".
    const d = await request(t.app).get('/api/tenant/decision').set('Authorization', `Bearer ${sign({ sub: subject, tenant: tenantSlug })}`);
    expect(d.status).toBe(401);
  });
  it('a sub with inner spaces and non-ASCII letters is a subject like any other', async () => {
    await request(t.app).get('/api/tenant').set('Authorization', `Bearer ${sign({ sub: `Jürgen Müller ${unique('s')}`, tenant: tenantSlug })}`).expect(200);
  });
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
  // docs/security.md#security-and-robustness: iat in the future
  it('iat ten years ahead', () => expect401(t, sign({ sub: 'x', iat: now() + 10 * 365 * 86_400 })));
  it('iat two minutes ahead (beyond the clock tolerance)', () => expect401(t, sign({ sub: 'x', iat: now() + 120 })));
  it('accepts an iat within the clock tolerance (control)', async () => {
    const token = sign({ sub: unique('skew'), tenant: tenantSlug, iat: now() + 10 });
    await request(t.app).get('/api/tenant').set('Authorization', `Bearer ${token}`).expect(200);
  });
  it('an unknown crit header parameter (RFC 7515 section 4.1.11)', () =>
    expect401(t, sign({ sub: 'x', tenant: tenantSlug }, { header: { alg: 'RS256', kid: keys().kid, crit: ['exp-ext'], 'exp-ext': 1 } as unknown as jwt.JwtHeader })));
  it('a crit header parameter whose name is written with a JSON escape (\\u0063rit)', async () => {
    const header = Buffer.from(`{"alg":"RS256","typ":"JWT","kid":"${keys().kid}","\\u0063rit":["exp-ext"],"exp-ext":1}`).toString('base64url');
    const payload = Buffer.from(JSON.stringify({ sub: unique('crit'), tenant: tenantSlug, iss: LOCAL_ISSUER, exp: now() + 300 })).toString('base64url');
    const sig = crypto.sign('sha256', Buffer.from(`${header}.${payload}`), keys().privateKey).toString('base64url');
    const r = await expect401(t, `${header}.${payload}.${sig}`);
    expect(r.body.detail).toMatch(/critical header parameter/);
  });
  it('an empty crit list', () => expect401(t, sign({ sub: 'x', tenant: tenantSlug }, { header: { alg: 'RS256', kid: keys().kid, crit: [] } as unknown as jwt.JwtHeader })));
  // docs/security.md#security-and-robustness: identity claims PostgreSQL can index
  it('sub over 1024 UTF-8 bytes', async () => {
    const r = await expect401(t, sign({ sub: '字'.repeat(342), tenant: tenantSlug })); // 1 026 bytes, 342 characters
    expect(r.body.detail).toMatch(/subject \(sub\) is longer than 1024 bytes/);
  });
  it('sub of 6000 characters', () => expect401(t, sign({ sub: 's'.repeat(6000), tenant: tenantSlug })));
  it('iss over 1024 UTF-8 bytes', async () => {
    const r = await expect401(t, sign({ sub: 'x', tenant: tenantSlug }, { issuer: `${LOCAL_ISSUER}${'字'.repeat(400)}` }));
    // The issuer check is not the length check here (the local issuer is fixed), so either reason is a refusal.
    expect(r.body.detail).toMatch(/issuer/);
  });
  it('accepts sub of exactly 1024 bytes of 4-byte characters and provisions the member (control)', async () => {
    const sub = '𝄞'.repeat(256); // 256 × 4 bytes
    const r = await request(t.app).get('/api/tenant').set('Authorization', `Bearer ${sign({ sub, tenant: tenantSlug })}`);
    expect(r.status).toBe(200);
    expect(await ownerConnection()('users').where({ subject: sub }).count({ n: '*' })).toEqual([{ n: '1' }]);
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
      expect(r.body.detail).toBe('The token was signed by an unknown key.');
    }
    // Unknown kids refetch at most once per 30 s cooldown: 30 of them cost at most one fetch.
    expect(jwks.requests.jwks - before).toBeLessThanOrEqual(1);
    // and known keys keep working from the cache
    await request(t.app).get('/api/tenant').set('Authorization', `Bearer ${good()}`).expect(200);
  });

  it('platform admin from a dot-path role claim', async () => {
    const t2 = await startTestApp({ SERVICE_JWKS_URI: jwks.jwksUri, SERVICE_ADMIN_ROLE_CLAIM: 'realm_access.roles', SERVICE_ADMIN_ROLE: 'platform-admin', SERVICE_ADMIN_ISSUER: jwks.issuer });
    try {
      const admin = jwks.sign({ sub: unique('a'), iss: jwks.issuer, realm_access: { roles: ['user', 'platform-admin'] } });
      const user = jwks.sign({ sub: unique('u'), iss: jwks.issuer, realm_access: { roles: ['user'] }, roles: ['platform-admin'] });
      const single = jwks.sign({ sub: unique('s'), iss: jwks.issuer, realm_access: { roles: 'platform-admin' } });
      // A flat claim spelled like the path is not the nested one (docs/configuration.md#claim-names-and-dot-paths).
      const flat = jwks.sign({ sub: unique('f'), iss: jwks.issuer, 'realm_access.roles': ['platform-admin'], realm_access: { roles: ['user'] } });
      const flatOnly = jwks.sign({ sub: unique('f'), iss: jwks.issuer, 'realm_access.roles': ['platform-admin'] });
      // GET /api/tenant in single-tenant mode shows whether the caller is a member; the admin
      // check is observable on /api/setup/*: 403 Forbidden vs anything else.
      const probe = async (token: string) => (await request(t2.app).get('/api/setup/audit').set('Authorization', `Bearer ${token}`)).status;
      expect(await probe(user)).toBe(403);
      expect(await probe(admin)).not.toBe(403);
      expect(await probe(single)).not.toBe(403);
      expect(await probe(flat)).toBe(403);
      expect(await probe(flatOnly)).toBe(403);
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

  it('an unreachable identity provider is a 503 with Retry-After, not a 401 (the token may be fine)', async () => {
    const t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_OIDC_ISSUER: 'http://127.0.0.1:9' });
    try {
      const r = await request(t.app).get('/api/tenant').set('X-Tenant', tenantSlug).set('Authorization', `Bearer ${jwks.sign({ sub: 'x' }, { issuer: 'http://127.0.0.1:9' })}`);
      expect(r.status).toBe(503);
      expect(r.body.error).toBe('Service unavailable');
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    } finally {
      await t.close();
    }
  });
});

// docs/security.md#security-and-robustness: key rotation under a flood of unknown key ids, and a JWKS that is down.
describe('jwks provider: rotation and outages (own JWKS server, short cooldown)', () => {
  const COOLDOWN_MS = 300;
  let idp: JwksServer;
  let t: TestApp;
  const env = () => ({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_JWKS_URI: idp.jwksUri, SERVICE_JWT_ISSUER: idp.issuer, SERVICE_JWT_CACHE_SIZE: '1000' });
  beforeEach(async () => {
    idp = await startJwksServer();
    t = await startTestApp(env(), { authOptions: { jwks: { cooldownMs: COOLDOWN_MS } } });
  });
  afterEach(async () => {
    await t.close();
    await idp.close();
  });

  const get = (token: string) => request(t.app).get('/api/tenant').set('X-Tenant', tenantSlug).set('Authorization', `Bearer ${token}`);
  const flood = (n: number) => {
    const other = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    return Promise.all(
      Array.from({ length: n }, () => get(jwt.sign({ sub: 'x', iss: idp.issuer }, other, { algorithm: 'ES256', keyid: crypto.randomUUID(), expiresIn: 60 })).then((r) => r.status)),
    );
  };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('a key published during a sustained flood of unknown kids is accepted after the cooldown', async () => {
    await get(idp.sign({ sub: unique('r'), tenant: tenantSlug }, { issuer: idp.issuer })).expect(200);
    // 12 unknown kids spent the whole per-minute budget of the old limiter.
    expect(new Set(await flood(12))).toEqual(new Set([401]));
    const rotated = idp.rotate();
    const fresh = idp.sign({ sub: unique('rotated'), tenant: tenantSlug }, { issuer: idp.issuer, key: rotated.key, kid: rotated.kid });
    let accepted = false;
    // The flood never stops; the new key must get through (bounded loop: ~10 s, i.e. many cooldowns).
    for (let i = 0; i < 100 && !accepted; i++) {
      const [statuses, r] = await Promise.all([flood(4), get(fresh)]);
      expect(new Set(statuses)).toEqual(new Set([401]));
      expect([200, 401]).toContain(r.status);
      accepted = r.status === 200;
      if (!accepted) await sleep(COOLDOWN_MS / 3);
    }
    expect(accepted).toBe(true);
  });

  it('unknown kids share one fetch, however many arrive at once (default 30 s cooldown)', async () => {
    const t30 = await startTestApp(env());
    try {
      const other = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
      const statuses = await Promise.all(
        Array.from({ length: 20 }, () =>
          request(t30.app)
            .get('/api/tenant')
            .set('X-Tenant', tenantSlug)
            .set('Authorization', `Bearer ${jwt.sign({ sub: 'x', iss: idp.issuer }, other, { algorithm: 'ES256', keyid: crypto.randomUUID(), expiresIn: 60 })}`)
            .then((r) => r.status),
        ),
      );
      expect(new Set(statuses)).toEqual(new Set([401]));
      expect(idp.requests.jwks).toBe(1);
      // The real key came with that one fetch: no further fetch.
      await request(t30.app).get('/api/tenant').set('Authorization', `Bearer ${idp.sign({ sub: unique('r'), tenant: tenantSlug }, { issuer: idp.issuer })}`).expect(200);
      expect(idp.requests.jwks).toBe(1);
    } finally {
      await t30.close();
    }
  });

  it('JWKS down and the key not cached: 503 Service unavailable with Retry-After; back to 200 when it returns', async () => {
    idp.setDown(true);
    const token = idp.sign({ sub: unique('down'), tenant: tenantSlug }, { issuer: idp.issuer });
    const r = await get(token);
    expect(r.status).toBe(503);
    expect(r.body.error).toBe('Service unavailable');
    expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(r.headers['www-authenticate']).toBeUndefined();
    idp.setDown(false);
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      await sleep(COOLDOWN_MS / 2);
      status = (await get(token)).status;
    }
    expect(status).toBe(200);
    // Once cached, the key keeps working while the JWKS is down again.
    idp.setDown(true);
    await sleep(COOLDOWN_MS + 50);
    await get(token).expect(200);
  });

  it('a remembered token stops working once its key is withdrawn from the JWKS (periodic refresh)', async () => {
    const fast = await startTestApp(env(), { authOptions: { jwks: { cooldownMs: COOLDOWN_MS, refreshMs: 200 } } });
    try {
      const token = idp.sign({ sub: unique('withdrawn'), tenant: tenantSlug }, { issuer: idp.issuer });
      const call = () => request(fast.app).get('/api/tenant').set('Authorization', `Bearer ${token}`);
      await call().expect(200);
      await call().expect(200); // remembered
      // The identity provider rotates and withdraws the old key (e.g. it leaked).
      idp.rotate();
      idp.withdraw(idp.kid);
      let status = 200;
      for (let i = 0; i < 100 && status === 200; i++) {
        await sleep(100);
        status = (await call()).status;
      }
      expect(status).toBe(401);
    } finally {
      await fast.close();
    }
  });

  it('JWKS server gone entirely: 503, not 401', async () => {
    const token = idp.sign({ sub: unique('gone'), tenant: tenantSlug }, { issuer: idp.issuer });
    await idp.close();
    const r = await get(token);
    expect(r.status).toBe(503);
    expect(r.body.error).toBe('Service unavailable');
    idp = await startJwksServer(); // for afterEach
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
  it('refuses iss over 1024 UTF-8 bytes (no issuer configured, so only the bound refuses it)', async () => {
    const r = await expect401(t, jwt.sign({ sub: 'x', iss: `https://idp.example/${'é'.repeat(510)}` }, secret, { algorithm: 'HS256', expiresIn: 300 }));
    expect(r.body.detail).toMatch(/issuer \(iss\) is longer than 1024 bytes/);
  });
  it('refuses HS512', () => expect401(t, jwt.sign({ sub: 'x' }, secret, { algorithm: 'HS512', expiresIn: 300 })));
});
