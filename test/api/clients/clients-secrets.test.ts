/**
 * Client secrets at rest (docs/sign-in.md#clients, docs/security.md#secrets-at-rest), on a
 * database of its own (its rows are counted and its secrets sealed):
 * - with SERVICE_KEY_ENCRYPTION_SECRET, a confidential client's secret is stored sealed (what a
 *   dump shows holds no secret), and the provider's lookup opens it again;
 * - a secret stored in plain text before the secret was set is sealed at the next boot;
 * - an instance without the secret, on a database holding sealed secrets, refuses to register a
 *   confidential client or rotate a secret (503), and still registers a public one;
 * - at most 100 registered clients (409 beyond; built-in ones do not count).
 */
import request from 'supertest';
import { clientMetadata } from '../../../src/domain/sign-in/clients';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createFreshDatabase, type FreshDatabase } from '../../helpers/fresh-database';
import { adminToken } from '../../helpers/factories';

jest.setTimeout(120_000);

const SECRET = 'test-key-encryption-secret-clients-0123456789';
const admin = `Bearer ${adminToken()}`;
const APP = 'https://app.example.com/callback';
let fresh: FreshDatabase;
const apps: TestApp[] = [];

beforeEach(async () => {
  fresh = await createFreshDatabase('tenant_service_clients');
});
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
  await fresh.drop();
});

async function app(env: Record<string, string> = {}): Promise<TestApp> {
  const a = await startTestApp({ SERVICE_DATABASE_URL: fresh.url, ...env });
  apps.push(a);
  return a;
}

const register = (a: TestApp, type: 'confidential' | 'public') => request(a.app).post('/api/setup/clients').set('Authorization', admin).send({ name: 'App', type, redirect_uris: [APP] });

async function storedSecret(a: TestApp, clientId: string): Promise<string | null> {
  return ((await a.db('oidc_clients').where({ client_id: clientId }).first('client_secret')) as { client_secret: string | null }).client_secret;
}

it('with SERVICE_KEY_ENCRYPTION_SECRET the secret is stored sealed, and the provider lookup opens it', async () => {
  const a = await app({ SERVICE_KEY_ENCRYPTION_SECRET: SECRET });
  const made = (await register(a, 'confidential').expect(201)).body as { client_id: string; client_secret: string };
  const stored = (await storedSecret(a, made.client_id))!;
  expect(stored.startsWith('enc1.')).toBe(true);
  const everything = JSON.stringify(await a.db('oidc_clients').select('*'));
  expect(everything).not.toContain(made.client_secret);
  const meta = await clientMetadata(a.db, a.config, made.client_id);
  expect(meta!.clientSecret).toBe(made.client_secret);

  const rotated = (await request(a.app).patch(`/api/setup/clients/${made.client_id}`).set('Authorization', admin).send({ rotate_secret: true }).expect(200)).body as { client_secret: string };
  expect((await storedSecret(a, made.client_id))!.startsWith('enc1.')).toBe(true);
  expect((await clientMetadata(a.db, a.config, made.client_id))!.clientSecret).toBe(rotated.client_secret);
});

it('a plain secret is sealed at the next boot with the secret; without it, confidential writes are 503', async () => {
  const plainApp = await app();
  const made = (await register(plainApp, 'confidential').expect(201)).body as { client_id: string; client_secret: string };
  expect(await storedSecret(plainApp, made.client_id)).toBe(made.client_secret);

  const sealing = await app({ SERVICE_KEY_ENCRYPTION_SECRET: SECRET });
  expect((await storedSecret(sealing, made.client_id))!.startsWith('enc1.')).toBe(true);
  expect(sealing.logs.some((l) => l.msg === 'Client secrets stored in plain text were encrypted with SERVICE_KEY_ENCRYPTION_SECRET' && l.count === 1)).toBe(true);
  expect((await clientMetadata(sealing.db, sealing.config, made.client_id))!.clientSecret).toBe(made.client_secret);

  // The first instance, still without the secret, now sits beside a sealed secret.
  const refused = await register(plainApp, 'confidential').expect(503);
  expect(refused.body.detail).toContain('SERVICE_KEY_ENCRYPTION_SECRET');
  await request(plainApp.app).patch(`/api/setup/clients/${made.client_id}`).set('Authorization', admin).send({ rotate_secret: true }).expect(503);
  expect((await storedSecret(plainApp, made.client_id))!.startsWith('enc1.')).toBe(true);
  await register(plainApp, 'public').expect(201);
  // Besides the console's built-in client, which every boot registers.
  expect(await plainApp.db('oidc_clients').where({ built_in: false }).count<Array<{ n: string }>>({ n: '*' }).first()).toEqual({ n: '2' });
});

it('at most 100 registered clients: the 101st is 409; built-in clients do not count', async () => {
  const a = await app();
  const rows = Array.from({ length: 100 }, (_, i) => ({ client_id: `c${i}`, name: `c${i}`, type: 'public', redirect_uris: [APP] }));
  await a.db('oidc_clients').insert([...rows, { client_id: 'console-x', name: 'Console', type: 'public', redirect_uris: [APP], built_in: true }]);
  const res = await register(a, 'public').expect(409);
  expect(res.body.detail).toContain('100');
  await request(a.app).delete('/api/setup/clients/c0').set('Authorization', admin).expect(204);
  await register(a, 'public').expect(201);
  const list = await request(a.app).get('/api/setup/clients').set('Authorization', admin).expect(200);
  // 100 registered, console-x and the console's own built-in client.
  expect(list.body.clients).toHaveLength(102);
});
