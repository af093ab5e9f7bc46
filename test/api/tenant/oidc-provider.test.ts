/**
 * The organization shapes of docs/identity-providers.md in tokens issued by a real OpenID provider
 * (oidc-provider, started by the test as a child process: it is ESM-only): client-credentials
 * grants whose access tokens carry Keycloak's array and map forms and Clerk's `o` object. The
 * service finds the provider by discovery (SERVICE_OIDC_ISSUER) and its keys over HTTP.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import request from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { adminToken, closeOwnerConnection, unique } from '../../helpers/factories';

let provider: ChildProcess;
let issuer: string;
let local: TestApp;
let keycloak: TestApp;
let clerk: TestApp;
const slugs = { a: unique('oa'), b: unique('ob'), c: unique('oc'), map: unique('om'), clerk: unique('ocl') };
const ids = { map: unique('kc-id'), clerk: unique('org_') };

/** The provider's clients: each one's access tokens carry these claims. */
const CLIENTS: Record<string, Record<string, unknown>> = {
  'keycloak-one': { organization: [slugs.a] },
  'keycloak-two': { organization: [slugs.a, slugs.b] },
  'keycloak-map': { organization: { [slugs.map]: { id: ids.map } } },
  'keycloak-map-unlinked': { organization: { [slugs.map]: { id: `${ids.map}-unlinked` } } },
  'clerk-v2': { o: { id: ids.clerk, slg: slugs.clerk, rol: 'admin', per: '' } },
};

async function startProvider(): Promise<void> {
  provider = spawn(process.execPath, [path.join(__dirname, '..', '..', 'helpers', 'oidc-provider.mjs'), JSON.stringify(CLIENTS)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = readline.createInterface({ input: provider.stdout! });
  issuer = await new Promise<string>((resolve, reject) => {
    provider.once('exit', (code) => reject(new Error(`oidc-provider exited with ${code}`)));
    lines.once('line', (line) => resolve((JSON.parse(line) as { issuer: string }).issuer));
  });
}

async function accessToken(clientId: string): Promise<string> {
  const r = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${clientId}:test-secret`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'api', resource: 'urn:tenant-api' }),
  });
  expect(r.status).toBe(200);
  return ((await r.json()) as { access_token: string }).access_token;
}

beforeAll(async () => {
  await startProvider();
  local = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
  keycloak = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_OIDC_ISSUER: issuer, SERVICE_IDP_PRESET: 'keycloak' });
  clerk = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_OIDC_ISSUER: issuer, SERVICE_IDP_PRESET: 'clerk' });
  const links: Record<string, string | undefined> = { map: ids.map, clerk: ids.clerk };
  for (const [k, slug] of Object.entries(slugs)) {
    const id = links[k];
    await request(local.app)
      .post('/api/setup/tenant')
      .set('Authorization', `Bearer ${adminToken()}`)
      .send({ name: slug, slug, ...(id ? { identity_links: [{ issuer, organization_id: id }] } : {}) })
      .expect(201);
  }
}, 120_000);
afterAll(async () => {
  await Promise.all([local, keycloak, clerk].map((a) => a?.close()));
  provider?.kill('SIGTERM');
  await closeOwnerConnection();
});

const current = (app: TestApp, token: string, header?: string) => {
  const r = request(app.app).get('/api/tenant').set('Authorization', `Bearer ${token}`);
  return header === undefined ? r : r.set('X-Tenant', header);
};

describe('Keycloak preset, tokens from a real OpenID provider', () => {
  it('an array of one alias resolves that tenant', async () => {
    const r = await current(keycloak, await accessToken('keycloak-one')).expect(200);
    expect(r.body).toMatchObject({ tenant: { slug: slugs.a }, source: 'custom_claim', membership: { issuer, subject: 'keycloak-one' } });
  });

  it('an array of two: no header 400, the header chooses, a tenant outside the set 403', async () => {
    const token = await accessToken('keycloak-two');
    expect((await current(keycloak, token).expect(400)).body.detail).toMatch(/names several tenants/);
    expect((await current(keycloak, token, slugs.b).expect(200)).body.tenant.slug).toBe(slugs.b);
    expect((await current(keycloak, token, slugs.c).expect(403)).body.detail).toContain('does not list');
  });

  it('the map form with ids resolves the linked tenant by id; an unlinked id is 404 naming it', async () => {
    const r = await current(keycloak, await accessToken('keycloak-map')).expect(200);
    expect(r.body).toMatchObject({ tenant: { slug: slugs.map }, source: 'organization_id_claim' });
    const missing = await current(keycloak, await accessToken('keycloak-map-unlinked')).expect(404);
    expect(missing.body.detail).toContain(`'${ids.map}-unlinked'`);
  });
});

describe('Clerk preset, tokens from a real OpenID provider', () => {
  it('the `o` object resolves the tenant linked to o.id', async () => {
    const r = await current(clerk, await accessToken('clerk-v2')).expect(200);
    expect(r.body).toMatchObject({ tenant: { slug: slugs.clerk }, source: 'organization_id_claim', membership: { role: 'member' } });
  });
});
