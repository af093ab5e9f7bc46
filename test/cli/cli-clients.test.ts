/**
 * `tenantctl clients list|create|get|update|delete` (docs/tenantctl.md,
 * docs/sign-in.md#clients): the compiled binary against a listening server. The secret is printed
 * once, with the reminder to store it, and in no later output.
 */
import type { CreatedOidcClient, OidcClient } from '../../generated/types.gen';
import { startCliServer, type CliServer } from '../helpers/cli';
import { closeOwnerConnection, ownerConnection, unique } from '../helpers/factories';

jest.setTimeout(180_000);

let cli: CliServer;
const tenantctl = (args: string[]) => cli.tenantctl(args);
const json = <T>(r: { stdout: string }) => JSON.parse(r.stdout) as T;

beforeAll(async () => {
  cli = await startCliServer({ SERVICE_MULTI_TENANT_MODE: 'true' });
}, 180_000);
afterAll(async () => {
  await cli.close();
  await closeOwnerConnection();
});

it('creates a confidential client printing its secret once, lists, gets, updates, rotates and deletes it', async () => {
  const name = unique('Invoices');
  const made = await tenantctl(['clients', 'create', name, '--type', 'confidential', '--redirect-uri', 'https://invoices.example.com/cb', '--redirect-uri', 'http://127.0.0.1:3000/cb']);
  expect(made.code).toBe(0);
  const secret = /^client_secret\s+(\S+)$/m.exec(made.stdout)![1]!;
  const id = /^client_id\s+(\S+)$/m.exec(made.stdout)![1]!;
  expect(made.stdout).toContain('Store this secret now');
  expect(made.stdout).toMatch(/^redirect_uris\s+https:\/\/invoices\.example\.com\/cb http:\/\/127\.0\.0\.1:3000\/cb$/m);

  const list = await tenantctl(['clients', 'list']);
  expect(list.stdout).toMatch(new RegExp(`^${id}\\s+${name}\\s+confidential\\s+`, 'm'));
  const listed = json<{ clients: OidcClient[] }>(await tenantctl(['clients', 'list', '--format', 'json']));
  expect(listed.clients.find((c) => c.client_id === id)).toMatchObject({ name, type: 'confidential', built_in: false });
  const got = await tenantctl(['clients', 'get', id]);
  expect(got.stdout).toContain(name);
  for (const out of [list.stdout, JSON.stringify(listed), got.stdout]) expect(out).not.toContain(secret);

  const renamed = json<OidcClient>(await tenantctl(['clients', 'update', id, '--name', 'Billing', '--post-logout-redirect-uri', 'https://invoices.example.com/', '--format', 'json']));
  expect(renamed).toMatchObject({ name: 'Billing', post_logout_redirect_uris: ['https://invoices.example.com/'], redirect_uris: ['https://invoices.example.com/cb', 'http://127.0.0.1:3000/cb'] });
  expect(renamed).not.toHaveProperty('client_secret');
  const cleared = json<OidcClient>(await tenantctl(['clients', 'update', id, '--no-post-logout-redirect-uris', '--format', 'json']));
  expect(cleared.post_logout_redirect_uris).toEqual([]);

  const rotated = await tenantctl(['clients', 'update', id, '--rotate-secret', '--format', 'json']);
  expect(rotated.code).toBe(0);
  const fresh = json<CreatedOidcClient>(rotated).client_secret!;
  expect(fresh).toBeTruthy();
  expect(fresh).not.toBe(secret);

  expect((await tenantctl(['clients', 'update', id])).code).toBe(2);
  // No terminal to ask on and no --yes: refused before any request.
  const unasked = await tenantctl(['clients', 'delete', id]);
  expect(unasked.code).toBe(2);
  expect(unasked.stderr).toContain('--yes');
  expect(await ownerConnection()('oidc_clients').where({ client_id: id }).first('client_id')).toBeDefined();
  const deleted = await tenantctl(['clients', 'delete', id, '--yes']);
  expect(deleted).toMatchObject({ code: 0 });
  expect(deleted.stdout).toContain(`Client ${id} deleted.`);
  const gone = await tenantctl(['clients', 'get', id]);
  expect(gone.code).toBe(1);
  expect(gone.stderr).toContain('Not found');
});

it('a public client has no secret; a refused redirect URI is exit 1 with the server naming the field; a bad --type is exit 2', async () => {
  const made = await tenantctl(['clients', 'create', 'Mobile', '--type', 'public', '--redirect-uri', 'com.example.mobile:/cb', '--format', 'json']);
  expect(made.code).toBe(0);
  expect(json<CreatedOidcClient>(made)).not.toHaveProperty('client_secret');
  expect(made.stderr).not.toContain('Store this secret');

  const refused = await tenantctl(['clients', 'create', 'Web', '--type', 'confidential', '--redirect-uri', 'http://web.example.com/cb']);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain('body.redirect_uris[0]');
  expect((await tenantctl(['clients', 'create', 'Web', '--type', 'spa', '--redirect-uri', 'https://web.example.com/cb'])).code).toBe(2);
  expect((await tenantctl(['clients', 'create', 'Web', '--type', 'public'])).code).toBe(2);
});
