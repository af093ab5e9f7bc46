/**
 * The console's built-in client of the service's own provider (docs/console.md#signing-in-through-the-services-own-provider):
 * - every boot makes sure it exists, public, with the console's URIs on SERVICE_PUBLIC_URL
 *   (the tenant-token issuer, the loopback URL, when unset), the provider's issuer's base;
 * - a boot with another public URL moves its URIs; instances booting together make one row;
 * - the clients API lists it as built in and refuses to change or delete it (409);
 * - the console's settings point at the own provider unless an external one is configured.
 */
import request from 'supertest';
import { CONSOLE_CLIENT_ID, ensureConsoleClient } from '../../../src/domain/sign-in/console-client';
import { consoleSettings } from '../../../src/http/console';
import { oidcIssuer } from '../../../src/oidc/issuer';
import { startTestApp, type TestApp } from '../../helpers/app';
import { adminToken, closeOwnerConnection, ownerConnection, unique } from '../../helpers/factories';

const admin = `Bearer ${adminToken(unique('console-client-admin'))}`;
const apps: TestApp[] = [];

async function boot(env: Record<string, string | undefined> = {}): Promise<TestApp> {
  const t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', ...env });
  apps.push(t);
  return t;
}

afterAll(async () => {
  for (const t of apps) await t.close();
  await closeOwnerConnection();
});

async function storedRows(): Promise<Array<{ client_id: string; type: string; built_in: boolean; redirect_uris: string[]; post_logout_redirect_uris: string[]; client_secret: string | null }>> {
  return (await ownerConnection()('oidc_clients').where({ client_id: CONSOLE_CLIENT_ID })) as never;
}

it('exists after boot: public, built in, the console callback on the public URL; listed with built_in: true; PATCH and DELETE are 409', async () => {
  const t = await boot({ SERVICE_PUBLIC_URL: 'https://tenants.example.test' });
  const rows = await storedRows();
  expect(rows).toHaveLength(1);
  expect(rows[0]).toMatchObject({
    type: 'public',
    built_in: true,
    client_secret: null,
    redirect_uris: ['https://tenants.example.test/console/callback'],
    post_logout_redirect_uris: ['https://tenants.example.test/console/'],
  });
  const list = await request(t.app).get('/api/setup/clients').set('Authorization', admin).expect(200);
  expect((list.body.clients as Array<{ client_id: string }>).find((c) => c.client_id === CONSOLE_CLIENT_ID)).toMatchObject({ type: 'public', built_in: true });
  const patch = await request(t.app).patch(`/api/setup/clients/${CONSOLE_CLIENT_ID}`).set('Authorization', admin).send({ redirect_uris: ['https://evil.example/cb'] }).expect(409);
  expect(patch.body.detail).toContain('built in');
  await request(t.app).delete(`/api/setup/clients/${CONSOLE_CLIENT_ID}`).set('Authorization', admin).expect(409);
  expect((await storedRows())[0]!.redirect_uris).toEqual(['https://tenants.example.test/console/callback']);
  // The settings the page carries: the own provider on the same base URL, this client.
  expect(consoleSettings(t.config).oidc).toEqual({
    issuer: 'https://tenants.example.test/oidc',
    clientId: CONSOLE_CLIENT_ID,
    scopes: 'openid email profile offline_access',
    resource: 'https://tenants.example.test/api',
    audience: null,
    own: true,
  });
  // The provider's issuer (what createOidc serves) is on the same base.
  expect(oidcIssuer(t.config)).toBe('https://tenants.example.test/oidc');
});

it('a boot with another public URL moves the URIs; without one, the loopback URL the provider uses as its base', async () => {
  await boot({ SERVICE_PUBLIC_URL: 'https://moved.example.test/' });
  expect((await storedRows())[0]).toMatchObject({ redirect_uris: ['https://moved.example.test/console/callback'], post_logout_redirect_uris: ['https://moved.example.test/console/'] });
  const loopback = await boot({ SERVICE_PUBLIC_URL: undefined, SERVICE_PORT: '18123' });
  expect(loopback.config.tenantTokenIssuer).toBe('http://127.0.0.1:18123');
  expect((await storedRows())[0]).toMatchObject({ redirect_uris: ['http://127.0.0.1:18123/console/callback'], built_in: true });
  expect((consoleSettings(loopback.config).oidc as { issuer: string }).issuer).toBe('http://127.0.0.1:18123/oidc');
});

it('instances booting together make one client, each finding it as it should be', async () => {
  const t = apps[0]!;
  await ownerConnection()('oidc_clients').where({ client_id: CONSOLE_CLIENT_ID }).delete();
  const config = { ...t.config, publicUrl: 'https://race.example.test', tenantTokenIssuer: t.config.tenantTokenIssuer };
  const outcomes = await Promise.all(Array.from({ length: 6 }, () => ensureConsoleClient(t.db, config)));
  expect(outcomes.map((o) => o.outcome).sort()).toEqual(['created', 'unchanged', 'unchanged', 'unchanged', 'unchanged', 'unchanged']);
  expect(await storedRows()).toHaveLength(1);
});

it('an external provider configured for the console takes precedence; the built-in client still exists', async () => {
  const t = await boot({
    SERVICE_PUBLIC_URL: 'https://tenants.example.test',
    SERVICE_OIDC_ISSUER: 'https://login.example.test',
    SERVICE_CONSOLE_CLIENT_ID: 'their-console',
    SERVICE_AUTH_PROVIDER: 'oidc',
  });
  expect(consoleSettings(t.config).oidc).toMatchObject({ issuer: 'https://login.example.test', clientId: 'their-console', own: false });
  expect(await storedRows()).toHaveLength(1);
});
