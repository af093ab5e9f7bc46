/**
 * `tenantctl domains add|verify|list|set|remove` (docs/tenantctl.md, docs/domains.md): the
 * compiled binary against a listening server whose DNS is a real test server.
 */
import type { Domain } from '../../generated/types.gen';
import { startCliServer, type CliServer } from '../helpers/cli';
import { startDnsServer, type DnsServer } from '../helpers/dns-server';
import { closeOwnerConnection, createTenant, unique } from '../helpers/factories';

jest.setTimeout(180_000);

let cli: CliServer;
let dns: DnsServer;
const tenantctl = (args: string[]) => cli.tenantctl(args);
const json = <T>(r: { stdout: string }) => JSON.parse(r.stdout) as T;

beforeAll(async () => {
  dns = await startDnsServer();
  cli = await startCliServer({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_DNS_SERVERS: dns.address });
}, 180_000);
afterAll(async () => {
  await cli.close();
  await dns.close();
  await closeOwnerConnection();
});

it('adds a domain showing the record, fails to verify naming what DNS said, verifies, sets the join policy, lists and removes it', async () => {
  const tenant = await createTenant();
  const scope = ['--tenant', tenant.slug];
  const domain = `${unique('cli')}.example`;
  const added = await tenantctl(['domains', 'add', domain.toUpperCase(), ...scope]);
  expect(added.code).toBe(0);
  expect(added.stdout).toContain(`TXT _tenant-service.${domain}`);
  expect(added.stdout).toMatch(/^value\s+tenant-service-verification=[A-Za-z0-9_-]{43}$/m);
  const d = json<{ domains: Domain[] }>(await tenantctl(['domains', 'list', ...scope, '--format', 'json'])).domains[0]!;

  const missing = await tenantctl(['domains', 'verify', domain, ...scope]);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toContain('Domain not verified');
  expect(missing.stderr).toContain('NXDOMAIN');

  dns.set(d.verification.name, { txt: [d.verification.value] });
  const ok = await tenantctl(['domains', 'verify', domain, ...scope, '--format', 'json']);
  expect(ok.code).toBe(0);
  expect(json<Domain>(ok).status).toBe('verified');

  const set = await tenantctl(['domains', 'set', domain, '--join', 'automatic', '--role', 'member', ...scope]);
  expect(set.code).toBe(0);
  expect(set.stdout).toContain('join automatic as member');
  const refused = await tenantctl(['domains', 'set', domain, '--role', 'admin', ...scope]);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain('never given by a domain');
  expect((await tenantctl(['domains', 'set', domain, '--join', 'sometimes', ...scope])).code).toBe(2);

  const list = await tenantctl(['domains', 'list', ...scope]);
  expect(list.stdout).toMatch(new RegExp(`^${domain.replace(/\./g, '\\.')}\\s+verified\\s+automatic as member\\s+\\S+$`, 'm'));
  expect((await tenantctl(['domains', 'add', 'gmail.com', ...scope])).code).toBe(1);
  const removed = await tenantctl(['domains', 'remove', domain, ...scope]);
  expect(removed).toMatchObject({ code: 0 });
  expect((await tenantctl(['domains', 'list', ...scope])).stdout).toContain('No domains');
});

it('a platform admin adds a domain verified without DNS (--verified, by slug); the tenant is needed', async () => {
  const tenant = await createTenant();
  const domain = `${unique('mark')}.example`;
  const r = await tenantctl(['domains', 'add', domain, '--verified', '--tenant', tenant.slug, '--format', 'json']);
  expect(r.code).toBe(0);
  expect(json<Domain>(r)).toMatchObject({ domain, status: 'verified', verified_by: 'platform_admin' });
  expect(json<{ domains: Domain[] }>(await tenantctl(['domains', 'list', '--tenant', tenant.slug, '--format', 'json'])).domains.map((d) => d.status)).toEqual(['verified']);
  const alone = await tenantctl(['domains', 'add', `${unique('mark')}.example`, '--verified']);
  expect(alone.code).toBe(2);
  expect(alone.stderr).toContain('needs --tenant');
});
