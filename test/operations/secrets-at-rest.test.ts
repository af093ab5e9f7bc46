/**
 * Secrets at rest (docs/security.md#secrets-at-rest), each case on a database of its own (the
 * shared one must keep plain secrets for the other suites):
 * - with SERVICE_KEY_ENCRYPTION_SECRET, webhook secrets are stored encrypted: the table read as
 *   its owner (what pg_dump sees) holds no `whsec_`, and deliveries still verify with
 *   standardwebhooks at a real receiver; plain secrets stored earlier are encrypted at boot;
 * - an instance without the secret on a database holding encrypted secrets never writes a plain
 *   one: tenant tokens and rotation are 503 with a sentence (tenantctl says it), webhook creation
 *   too, it says so at boot and in setup status, and leaves encrypted endpoints' deliveries to
 *   instances that can sign them.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Client } from 'pg';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { LOCAL_ISSUER } from '../../src/auth/local-keys';
import { withService, withTenant } from '../../src/db/tenant-scope';
import { startWebhookWorker, type WebhookWorker } from '../../src/workers/webhook-delivery';
import { startTestApp, type TestApp } from '../helpers/app';
import { startCliServer } from '../helpers/cli';
import { createFreshDatabase, type FreshDatabase } from '../helpers/fresh-database';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver';
import { adminToken, tokenFor, unique } from '../helpers/factories';

jest.setTimeout(180_000);

const run = promisify(execFile);
const SECRET = 'test-key-encryption-secret-0123456789abcdef';
const admin = () => `Bearer ${adminToken()}`;

let fresh: FreshDatabase;
let receiver: Receiver;
const apps: TestApp[] = [];
const workers: WebhookWorker[] = [];

beforeEach(async () => {
  fresh = await createFreshDatabase('tenant_service_secrets');
  receiver = await startReceiver();
});
afterEach(async () => {
  for (const w of workers.splice(0)) await w.stop();
  for (const a of apps.splice(0)) await a.close();
  await receiver.close();
  await fresh.drop();
});

async function app(env: Record<string, string> = {}): Promise<TestApp> {
  const a = await startTestApp({ SERVICE_DATABASE_URL: fresh.url, SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', ...env });
  apps.push(a);
  return a;
}

function worker(a: TestApp, encryptionSecret: string | null): void {
  workers.push(startWebhookWorker({ db: a.db, logger: a.services.logger, pollIntervalMs: 50, backoffMs: [200], timeoutMs: 5_000, allowPrivateNetworks: true, encryptionSecret }));
}

async function createWebhook(a: TestApp): Promise<request.Response> {
  return request(a.app).post('/api/setup/webhooks').set('Authorization', admin()).send({ url: `${receiver.url}/hook`, events: ['tenant.created'] });
}

/** What a database dump holds: pg_dump of the table, and a select of every row as its owner. */
async function dump(table: 'webhook_endpoints' | 'tenant_token_keys'): Promise<string> {
  const { stdout } = await run('pg_dump', ['--data-only', `--table=${table}`, fresh.url], { maxBuffer: 16 * 1024 * 1024 });
  expect(stdout).toContain(`COPY public.${table}`);
  const owner = new Client({ connectionString: fresh.url });
  await owner.connect();
  try {
    return `${stdout}\n${JSON.stringify((await owner.query(`select * from ${table}`)).rows)}`;
  } finally {
    await owner.end();
  }
}

/** A member of the fresh database's default tenant (single-tenant mode) and their token. */
async function member(a: TestApp): Promise<string> {
  const tenantId = (await withService(a.db, (trx) => trx('tenants').where({ is_default: true }).first('id')))!.id as string;
  const subject = unique('member');
  await withTenant(a.db, tenantId, (trx) => trx('users').insert({ tenant_id: tenantId, issuer: LOCAL_ISSUER, subject, email: `${subject}@example.test`, role: 'member' }));
  return tokenFor({ sub: subject });
}

/** Creates a tenant (a `tenant.created` event) and returns the verified delivery's event. */
async function deliveredAndVerified(a: TestApp, secret: string): Promise<{ type: string; data: { action: string } }> {
  const before = receiver.received.length;
  await request(a.app).post('/api/setup/tenant').set('Authorization', admin()).send({ name: 'Hooked', slug: unique('hooked') }).expect(201);
  await receiver.waitFor(before + 1);
  const msg = receiver.received[before]!;
  return new Webhook(secret).verify(msg.body, msg.headers) as { type: string; data: { action: string } };
}

describe('with SERVICE_KEY_ENCRYPTION_SECRET', () => {
  it('a webhook secret is stored encrypted: no whsec_ in a dump, and deliveries verify with standardwebhooks', async () => {
    const a = await app({ SERVICE_KEY_ENCRYPTION_SECRET: SECRET });
    const created = await createWebhook(a);
    expect(created.status).toBe(201);
    const secret = created.body.secret as string;
    expect(secret).toMatch(/^whsec_/);
    const stored = await dump('webhook_endpoints');
    expect(stored).toContain(created.body.webhook_id);
    expect(stored).not.toContain('whsec_');
    expect(stored).not.toContain(secret.slice('whsec_'.length));

    worker(a, SECRET);
    const verified = await deliveredAndVerified(a, secret);
    expect(verified).toMatchObject({ type: 'tenant.created', data: { action: 'tenant.created' } });
  });

  it('plain secrets stored before the secret was set are encrypted at boot, and still sign', async () => {
    const plain = await app();
    const created = await createWebhook(plain);
    expect(created.status).toBe(201);
    // The control: without the secret a dump carries it.
    expect(await dump('webhook_endpoints')).toContain(created.body.secret);

    const encrypted = await app({ SERVICE_KEY_ENCRYPTION_SECRET: SECRET });
    expect(encrypted.logs.some((l) => l.msg === 'Webhook secrets stored in plain text were encrypted with SERVICE_KEY_ENCRYPTION_SECRET' && l.count === 1)).toBe(true);
    expect(await dump('webhook_endpoints')).not.toContain('whsec_');

    worker(encrypted, SECRET);
    expect((await deliveredAndVerified(encrypted, created.body.secret as string)).type).toBe('tenant.created');
  });
});

describe('an instance without the secret, on a database holding encrypted secrets', () => {
  it('refuses to sign, rotate and create webhooks (503 with a sentence), says so at boot and in setup status, and writes nothing plain', async () => {
    const withSecret = await app({ SERVICE_KEY_ENCRYPTION_SECRET: SECRET });
    const token = await member(withSecret);
    expect((await request(withSecret.app).post('/api/tenant/token').set('Authorization', `Bearer ${token}`)).status).toBe(200);
    const hook = await createWebhook(withSecret);
    expect(hook.status).toBe(201);
    const keysBefore = await withService(withSecret.db, (trx) => trx('tenant_token_keys').select('kid', 'private_key_encryption'));
    expect(keysBefore.map((k) => k.private_key_encryption)).toEqual(['aes-256-gcm']);

    const without = await app();
    const bootLine = without.logs.find((l) => l.msg === 'SERVICE_KEY_ENCRYPTION_SECRET is not set but the database holds secrets encrypted with it');
    expect(bootLine).toMatchObject({ level: 50 });

    const sentence = /runs without SERVICE_KEY_ENCRYPTION_SECRET but the database holds secrets encrypted with it, so it refuses to .+; its operator must set SERVICE_KEY_ENCRYPTION_SECRET/;
    const minted = await request(without.app).post('/api/tenant/token').set('Authorization', `Bearer ${token}`);
    expect({ status: minted.status, error: minted.body.error }).toEqual({ status: 503, error: 'Service unavailable' });
    expect(minted.body.detail).toMatch(sentence);
    expect(minted.body.detail).toContain('sign tenant tokens');

    const rotated = await request(without.app).post('/api/setup/tenant-token-keys/rotate').set('Authorization', admin());
    expect({ status: rotated.status, error: rotated.body.error }).toEqual({ status: 503, error: 'Service unavailable' });
    expect(rotated.body.detail).toMatch(sentence);

    const refusedHook = await createWebhook(without);
    expect({ status: refusedHook.status, error: refusedHook.body.error }).toEqual({ status: 503, error: 'Service unavailable' });
    expect(refusedHook.body.detail).toMatch(sentence);
    expect(JSON.stringify(refusedHook.body)).not.toContain('whsec_');

    const status = await request(without.app).get('/api/setup/status').set('Authorization', admin()).expect(200);
    expect((status.body.recommendations as string[]).join('\n')).toMatch(/SERVICE_KEY_ENCRYPTION_SECRET is not set on this instance, but the database holds .* encrypted with it/);

    // Nothing plain was written: the same encrypted key, one endpoint, no whsec_ anywhere.
    expect(await withService(without.db, (trx) => trx('tenant_token_keys').select('kid', 'private_key_encryption'))).toEqual(keysBefore);
    expect(await withService(without.db, (trx) => trx('webhook_endpoints').count('* as n').first())).toEqual({ n: '1' });
    expect(await dump('webhook_endpoints')).not.toContain('whsec_');
    expect(await dump('tenant_token_keys')).not.toMatch(/"d":/);

    // Its worker leaves the encrypted endpoint's delivery to an instance that can sign it.
    worker(without, null);
    await request(without.app).post('/api/setup/tenant').set('Authorization', admin()).send({ name: 'Waiting', slug: unique('waiting') }).expect(201);
    while (!without.logs.some((l) => l.msg === 'Webhook signing secret unusable; its deliveries are left to instances with SERVICE_KEY_ENCRYPTION_SECRET')) await new Promise((r) => setTimeout(r, 50));
    const deliveries = await withService(without.db, (trx) => trx('webhook_deliveries').select('status', 'attempts'));
    expect(deliveries).toEqual([{ status: 'pending', attempts: 0 }]);
    expect(receiver.received).toEqual([]);
  });

  it('tenantctl keys rotate fails with the sentence, not a stack', async () => {
    const seeded = await app({ SERVICE_KEY_ENCRYPTION_SECRET: SECRET });
    await request(seeded.app).get('/.well-known/jwks.json').expect(200);
    const cli = await startCliServer({ SERVICE_DATABASE_URL: fresh.url });
    try {
      const r = await cli.tenantctl(['keys', 'rotate']);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/refuses to rotate the tenant-token signing keys/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    } finally {
      await cli.close();
    }
    // The first CLI suite of a run builds dist/ (several minutes on a loaded machine).
  }, 600_000);
});
