/**
 * `tenantctl sso connections …` and `tenantctl sso show|set` (docs/sso.md): the compiled binary
 * against a listening server; an OIDC issuer discovered for real (a crafted provider on a port),
 * secrets and certificates read from files.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SsoConnection } from '../../generated/types.gen';
import { startCraftedIdp, type CraftedIdp } from '../api/sso/helpers/crafted-idp';
import { idpMetadataXml, makeKeyAndCert } from '../api/sso/helpers/certs';
import { startCliServer, type CliServer } from '../helpers/cli';
import { closeOwnerConnection, createTenant, ownerConnection } from '../helpers/factories';

jest.setTimeout(180_000);

let cli: CliServer;
let idp: CraftedIdp;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-sso-'));
const tenantctl = (args: string[]) => cli.tenantctl(args);
const json = <T>(r: { stdout: string }) => JSON.parse(r.stdout) as T;

beforeAll(async () => {
  idp = await startCraftedIdp('cli-client');
  cli = await startCliServer({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_PUBLIC_URL: 'https://tenants.example.com', SERVICE_SSO_ALLOW_PRIVATE_NETWORKS: 'true' });
}, 180_000);
afterAll(async () => {
  await cli.close();
  await idp.close();
  await closeOwnerConnection();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('creates OIDC and SAML connections from files, lists, gets, deactivates, requires SSO, refuses to delete the last active one, deletes', async () => {
  const tenant = await createTenant();
  const scope = ['--tenant', tenant.slug];
  const secretFile = path.join(dir, 'secret');
  fs.writeFileSync(secretFile, 'cli-secret-value\n');
  const oidc = await tenantctl(['sso', 'connections', 'create-oidc', '--name', 'Okta', '--issuer', idp.issuer, '--client-id', 'cli-client', '--client-secret-file', secretFile, ...scope]);
  expect(oidc.code).toBe(0);
  expect(oidc.stdout).toContain('Register this redirect URI at the provider: https://tenants.example.com/sso/oidc/callback');
  expect(oidc.stdout).not.toContain('cli-secret-value');
  const row = await ownerConnection()('sso_connections').where({ tenant_id: tenant.id, type: 'oidc' }).first('oidc_client_secret');
  expect(row.oidc_client_secret).toBe('cli-secret-value'); // no SERVICE_KEY_ENCRYPTION_SECRET here: stored as given, trimmed

  const cert = makeKeyAndCert();
  const metadata = path.join(dir, 'metadata.xml');
  fs.writeFileSync(metadata, idpMetadataXml({ entityId: 'http://adfs.acme.test/adfs/services/trust', ssoUrl: 'https://adfs.acme.test/adfs/ls/', certBase64: cert.certBase64 }));
  const saml = await tenantctl(['sso', 'connections', 'create-saml', '--name', 'ADFS', '--metadata-file', metadata, ...scope, '--format', 'json']);
  expect(saml.code).toBe(0);
  const s = json<SsoConnection>(saml);
  expect(s.acs_url).toBe(`https://tenants.example.com/sso/saml/${s.connection_id}/acs`);
  expect((await tenantctl(['sso', 'connections', 'create-saml', '--name', 'x', '--entity-id', 'e', ...scope])).code).toBe(2);

  const list = await tenantctl(['sso', 'connections', 'list', ...scope]);
  expect(list.stdout).toMatch(/oidc\s+Okta\s+active/);
  expect(list.stdout).toMatch(/saml\s+ADFS\s+active\s+http:\/\/adfs\.acme\.test\/adfs\/services\/trust/);
  const got = await tenantctl(['sso', 'connections', 'get', s.connection_id, ...scope]);
  expect(got.stdout).toMatch(/^acs_url\s+https:\/\/tenants\.example\.com\/sso\/saml\/.+\/acs$/m);
  expect(got.stdout).toContain('CN=test-idp');

  const oidcId = json<{ connections: SsoConnection[] }>(await tenantctl(['sso', 'connections', 'list', ...scope, '--format', 'json'])).connections.find((c) => c.type === 'oidc')!.connection_id;
  expect((await tenantctl(['sso', 'connections', 'update', oidcId, '--status', 'inactive', ...scope])).stdout).toContain('(inactive)');
  const set = await tenantctl(['sso', 'set', '--required=true', ...scope]);
  expect(set.code).toBe(0);
  expect(set.stdout).toMatch(/^sso_required\s+true$/m);
  expect(set.stdout).toContain(s.connection_id);
  const refused = await tenantctl(['sso', 'connections', 'delete', s.connection_id, ...scope]);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain('lock every member out');
  expect((await tenantctl(['sso', 'set', '--required=false', ...scope])).code).toBe(0);
  expect((await tenantctl(['sso', 'connections', 'delete', s.connection_id, ...scope])).code).toBe(0);
  expect((await tenantctl(['sso', 'show', ...scope, '--format', 'json'])).stdout).toContain('"sso_required": false');
  expect((await tenantctl(['sso', 'set', '--required=maybe', ...scope])).code).toBe(2);
});
