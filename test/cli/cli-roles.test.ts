/**
 * `tenantctl permissions` and `tenantctl roles` as users run them: the compiled binary against a
 * listening server on the test database (the platform admin token is minted from the test data
 * dir's local key). Rules: docs/roles.md.
 */
import type { Permission, Role } from '../../generated/types.gen';
import { startCliServer, type CliServer } from '../helpers/cli';
import { closeOwnerConnection, createTenant, createUser, ownerConnection, unique } from '../helpers/factories';

jest.setTimeout(180_000);

let cli: CliServer;
const tenantctl = (args: string[]) => cli.tenantctl(args);

beforeAll(async () => {
  cli = await startCliServer({ SERVICE_MULTI_TENANT_MODE: 'true' });
}, 180_000);
afterAll(async () => {
  await cli.close();
  await closeOwnerConnection();
});

it('defines permissions, builds platform and tenant roles, gives one to a member and deletes them', async () => {
  const read = `${unique('cli').replace('-', '')}:read`;
  const write = read.replace(':read', ':write');
  for (const key of [read, write]) expect((await tenantctl(['permissions', 'create', key, '--description', `Lets one ${key}`])).code).toBe(0);
  const listed = JSON.parse((await tenantctl(['permissions', 'list', '--format', 'json'])).stdout) as { permissions: Permission[] };
  expect(listed.permissions.map((p) => p.key)).toEqual(expect.arrayContaining([read, write]));

  const platformKey = unique('cli-auditor');
  const made = await tenantctl(['roles', 'create', platformKey, '--name', 'Auditor', '--permissions', `${write},${read}`, '--format', 'json']);
  expect(made.code).toBe(0);
  expect(JSON.parse(made.stdout)).toMatchObject({ key: platformKey, scope: 'platform', permissions: [read, write] });
  const table = await tenantctl(['roles', 'list']);
  expect(table.stdout).toMatch(new RegExp(`${platformKey}\\s+platform\\s+Auditor\\s+${read} ${write}`));
  const updated = JSON.parse((await tenantctl(['roles', 'update', platformKey, '--permissions', read, '--format', 'json'])).stdout) as Role;
  expect(updated).toMatchObject({ name: 'Auditor', permissions: [read] });

  const tenant = await createTenant();
  const member = await createUser(tenant.id);
  const ownKey = unique('cli-clerk');
  expect((await tenantctl(['roles', 'create', ownKey, '--name', 'Clerk', '--permissions', write, '--tenant', tenant.slug])).code).toBe(0);
  const inTenant = JSON.parse((await tenantctl(['roles', 'list', '--tenant', tenant.slug, '--format', 'json'])).stdout) as { roles: Role[] };
  expect(inTenant.roles.find((r) => r.key === ownKey)).toMatchObject({ scope: 'tenant', permissions: [write] });
  const set = await tenantctl(['members', 'set-role', member.id, '--role', ownKey, '--tenant', tenant.slug, '--format', 'json']);
  expect(set.code).toBe(0);
  expect(JSON.parse(set.stdout)).toMatchObject({ role: ownKey, permissions: [write] });

  // Held: refused, saying how many; then free and deleted.
  const held = await tenantctl(['roles', 'delete', ownKey, '--tenant', tenant.slug]);
  expect(held).toMatchObject({ code: 1, stdout: '' });
  expect(held.stderr).toMatch(/^error: Conflict: Role '.+' is held by 1 member\(s\) and 0 pending invitation\(s\)/);
  expect((await tenantctl(['members', 'set-role', member.id, '--role', 'member', '--tenant', tenant.slug])).code).toBe(0);
  expect((await tenantctl(['roles', 'delete', ownKey, '--tenant', tenant.slug])).code).toBe(0);
  expect(await ownerConnection()('tenant_roles').where({ tenant_id: tenant.id })).toEqual([]);

  const gone = await tenantctl(['permissions', 'delete', read, '--yes']);
  expect(gone.code).toBe(0);
  expect(gone.stdout).toMatch(new RegExp(`^platform roles: ${platformKey}$`, 'm'));
  expect(JSON.parse((await tenantctl(['roles', 'get', platformKey, '--format', 'json'])).stdout).permissions).toEqual([]);
  expect((await tenantctl(['roles', 'delete', platformKey])).code).toBe(0);
});

it('permissions delete asks first: without --yes and without a terminal it refuses (exit 2) and deletes nothing; --yes lists every role it left', async () => {
  const key = `${unique('cliask').replace('-', '')}:read`;
  expect((await tenantctl(['permissions', 'create', key])).code).toBe(0);
  const platformKey = unique('cli-holder');
  expect((await tenantctl(['roles', 'create', platformKey, '--name', 'Holder', '--permissions', key])).code).toBe(0);
  const tenant = await createTenant();
  const ownKey = unique('cli-own');
  expect((await tenantctl(['roles', 'create', ownKey, '--name', 'Own', '--permissions', key, '--tenant', tenant.slug])).code).toBe(0);

  const refused = await tenantctl(['permissions', 'delete', key]);
  expect(refused).toMatchObject({ code: 2, stdout: '' });
  expect(refused.stderr).toMatch(/refusing to delete permission '.+' without confirmation: there is no terminal to ask on; pass --yes/);
  expect(await ownerConnection()('permissions').where({ key })).toHaveLength(1);

  const gone = await tenantctl(['permissions', 'delete', key, '--yes', '--format', 'json']);
  expect(gone.code).toBe(0);
  expect(JSON.parse(gone.stdout)).toMatchObject({ key, removed_from_roles: [{ tenant_id: null, role_key: platformKey }, { tenant_id: tenant.id, role_key: ownKey }] });
  expect((await tenantctl(['roles', 'delete', platformKey])).code).toBe(0);
});

it.each([
  [['permissions', 'create', 'Not A Key'], /expected a permission key/],
  [['roles', 'create', 'Bad_Key', '--name', 'X'], /expected a role key/],
  [['roles', 'create', 'ok-key', '--name', 'X', '--permissions', 'a,B'], /expected a permission key/],
  [['roles', 'create', 'ok-key'], /required option '--name <name>' not specified/],
  [['members', 'set-role', 'x@example.test', '--role', 'Owner'], /--role must be a role key/],
])('%j → exit 2', async (args, message) => {
  const r = await tenantctl(args);
  expect(r.code).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr).toMatch(message);
});

it('the built-in roles cannot be deleted (exit 1, as the server words it)', async () => {
  const r = await tenantctl(['roles', 'delete', 'admin']);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/built-in role 'admin' cannot be deleted/);
});

it('system permissions: listed as such, never deleted, and an "IT admin" tenant role built from them', async () => {
  const table = await tenantctl(['permissions', 'list']);
  expect(table.stdout).toMatch(/^KEY\s+SYSTEM\s+DESCRIPTION/m);
  expect(table.stdout).toMatch(/^tenant:directory:manage\s+yes\s+/m);
  const gone = await tenantctl(['permissions', 'delete', 'tenant:directory:manage', '--yes']);
  expect(gone.code).toBe(1);
  expect(gone.stderr).toMatch(/system permission/);
  expect((await tenantctl(['permissions', 'create', 'tenant:billing:read'])).code).toBe(1);

  const tenant = await createTenant();
  const key = unique('it-admin');
  const perms = 'tenant:directory:manage,tenant:sso:manage,tenant:domains:manage,tenant:members:read';
  const made = await tenantctl(['roles', 'create', key, '--tenant', tenant.slug, '--name', 'IT admin', '--permissions', perms, '--format', 'json']);
  expect(made.code).toBe(0);
  expect(JSON.parse(made.stdout)).toMatchObject({ key, scope: 'tenant', permissions: perms.split(',').sort() });
  const admin = JSON.parse((await tenantctl(['roles', 'get', 'admin', '--format', 'json'])).stdout) as Role;
  expect(admin.permissions).toEqual(expect.arrayContaining(perms.split(',')));
});
