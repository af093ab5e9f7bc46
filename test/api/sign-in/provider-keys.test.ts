/**
 * The provider's signing keys (docs/sign-in.md#signing-keys): encrypted at rest under
 * SERVICE_KEY_ENCRYPTION_SECRET (on a database of its own: the shared one keeps plain secrets for
 * the other suites), refused rather than written in plain beside encrypted ones, rotated with the
 * tenant-token keys (published before they sign, the previous key published until its tokens
 * expire).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RequestListener } from 'node:http';
import { Client } from 'pg';
import { withService } from '../../../src/db/tenant-scope';
import { OIDC_TTL } from '../../../src/oidc/configuration';
import { OIDC_KEEP_PUBLISHED_SECONDS, rotateOidcKeys } from '../../../src/oidc/keys';
import { createFreshDatabase, type FreshDatabase } from '../../helpers/fresh-database';
import { adminToken, closeOwnerConnection, createTenant, createUser, unique } from '../../helpers/factories';
import { createAccount, discover, payloadOf, registerClient, signIn, startProviderApp, type ProviderApp } from './provider-harness';

jest.setTimeout(180_000);

const SECRET = 'test-key-encryption-secret-0123456789abcdef';

/** One public address in front of instances started one after another. */
async function balancer() {
  let active: RequestListener = (_req, res) => res.end();
  const server = http.createServer((req, res) => active(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const instances: ProviderApp[] = [];
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async start(env: Record<string, string> = {}): Promise<ProviderApp> {
      const p = await startProviderApp({ SERVICE_PUBLIC_URL: this.url, ...env }, { server });
      instances.push(p);
      active = p.app as unknown as RequestListener;
      return p;
    },
    async close() {
      for (const p of instances) await p.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function jwks(issuer: string): Promise<Array<Record<string, unknown>>> {
  const res = await fetch(`${issuer}/jwks`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { keys: Array<Record<string, unknown>> }).keys;
}

function kidOf(jwt: string): string {
  return (JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString('utf8')) as { kid: string }).kid;
}

afterAll(async () => {
  await closeOwnerConnection();
});

describe('at rest', () => {
  let fresh: FreshDatabase;
  let lb: Awaited<ReturnType<typeof balancer>>;
  beforeEach(async () => {
    fresh = await createFreshDatabase('tenant_service_oidc_keys');
    lb = await balancer();
  });
  afterEach(async () => {
    await lb.close();
    await fresh.drop();
  });

  it('with the secret, the private key is stored encrypted and the provider signs with it; without it, the provider is unavailable (503), never plain', async () => {
    const p = await lb.start({ SERVICE_DATABASE_URL: fresh.url, SERVICE_KEY_ENCRYPTION_SECRET: SECRET });
    const published = await jwks(p.issuer);
    expect(published).toHaveLength(1);
    expect(published[0]).not.toHaveProperty('d');

    const owner = new Client({ connectionString: fresh.url });
    await owner.connect();
    try {
      const { rows } = await owner.query<{ kid: string; private_key_encryption: string; private_key: Record<string, unknown> }>('select kid, private_key_encryption, private_key from oidc_signing_keys');
      expect(rows).toHaveLength(1);
      expect(rows[0]!.kid).toBe(published[0]!.kid);
      expect(rows[0]!.private_key_encryption).toBe('aes-256-gcm');
      expect(Object.keys(rows[0]!.private_key).sort()).toEqual(['ciphertext', 'iv', 'kdf', 'salt', 'tag', 'v']);
      expect(JSON.stringify(rows[0]!.private_key)).not.toContain(String(published[0]!.n).slice(0, 40));
      // The cookie keys derive from the secret: nothing stored.
      expect((await owner.query('select name from oidc_provider_secrets')).rows).toEqual([]);
    } finally {
      await owner.end();
    }

    const [account] = (await withService(p.db, (trx) => trx('sign_in_accounts').insert({ email: `${unique('p')}@example.test`, email_verified: true }).returning(['id']))) as Array<{ id: string }>;
    const { clientId, redirectUri } = await registerClient(p);
    const { tokens } = await signIn(p, await discover(p, clientId), redirectUri, { accountId: account!.id, tenantId: null, method: 'email', connectionId: null });
    expect(kidOf(tokens.id_token!)).toBe(published[0]!.kid);
    expect(tokens.claims()!).not.toHaveProperty('tenant_id');

    const without = await lb.start({ SERVICE_DATABASE_URL: fresh.url });
    const res = await fetch(`${without.issuer}/.well-known/openid-configuration`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual(expect.objectContaining({ error: 'temporarily_unavailable' }));
  });

  it('without the secret, the cookie-signing secret is made once and shared', async () => {
    const p = await lb.start({ SERVICE_DATABASE_URL: fresh.url });
    expect((await jwks(p.issuer)).length).toBe(1);
    await lb.start({ SERVICE_DATABASE_URL: fresh.url });
    expect((await jwks(p.issuer)).length).toBe(1);
    const owner = new Client({ connectionString: fresh.url });
    await owner.connect();
    try {
      expect((await owner.query('select name from oidc_provider_secrets')).rows).toEqual([{ name: 'cookie_keys' }]);
      expect((await owner.query("select private_key_encryption from oidc_signing_keys")).rows).toEqual([{ private_key_encryption: 'none' }]);
    } finally {
      await owner.end();
    }
  });
});

describe('rotation', () => {
  it('a retired key stays published longer than anything it signed lives', () => {
    expect(OIDC_KEEP_PUBLISHED_SECONDS).toBeGreaterThanOrEqual(Math.max(OIDC_TTL.AccessToken, OIDC_TTL.IdToken) + 60);
  });

  it('rotates with the tenant-token keys: the next key is published before it signs; once it signs, the previous one stays published and its tokens stay valid', async () => {
    const lb = await balancer();
    try {
      const a = await lb.start();
      const tenant = await createTenant();
      const account = await createAccount();
      await createUser(tenant.id, { issuer: a.issuer, subject: account.id, email: account.email });
      const choice = { accountId: account.id, tenantId: tenant.id, method: 'email' as const, connectionId: null };
      const { clientId, redirectUri } = await registerClient(a);
      const before = await signIn(a, await discover(a, clientId), redirectUri, choice);
      const oldKid = kidOf(before.tokens.access_token);

      const rotated = await fetch(`${lb.url}/api/setup/tenant-token-keys/rotate`, { method: 'POST', headers: { authorization: `Bearer ${adminToken()}` } });
      expect(rotated.status).toBe(200);
      // A new instance reads the set: the next key is published, the current one still signs.
      const b = await lb.start();
      const published = (await jwks(b.issuer)).map((k) => k.kid);
      expect(published).toContain(oldKid);
      expect(published.length).toBeGreaterThanOrEqual(2);
      const during = await signIn(b, await discover(b, clientId), redirectUri, choice);
      expect(kidOf(during.tokens.access_token)).toBe(oldKid);

      // The next key signs now (no publication delay): new tokens carry it, the old key stays published.
      const next = await rotateOidcKeys(b.db, null, { publishDelaySeconds: 0, keepPublishedSeconds: OIDC_KEEP_PUBLISHED_SECONDS });
      const c = await lb.start();
      const after = await signIn(c, await discover(c, clientId), redirectUri, choice);
      expect(kidOf(after.tokens.access_token)).toBe(next.kid);
      expect(kidOf(after.tokens.id_token!)).toBe(next.kid);
      expect((await jwks(c.issuer)).map((k) => k.kid)).toEqual(expect.arrayContaining([oldKid, next.kid]));
      // The token the old key signed is still a bearer token of the service.
      const res = await fetch(`${lb.url}/api/tenant`, { headers: { authorization: `Bearer ${before.tokens.access_token}` } });
      expect(res.status).toBe(200);
      expect(payloadOf(before.tokens.access_token).tenant_id).toBe(tenant.id);
    } finally {
      await lb.close();
    }
  });
});
