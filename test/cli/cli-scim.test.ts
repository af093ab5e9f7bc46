/**
 * `tenantctl scim tokens|settings|users` as users run them: the compiled binary against a listening
 * server on the test database, with the minted platform admin token or a tenant admin's own
 * (docs/tenantctl.md). The token is printed once and never listed; another tenant's admin and
 * a plain member are refused; bad flags exit 2 before any request.
 */
import type { DirectoryUser, ScimSettings, ScimToken, ScimTokenCreated } from '../../generated/types.gen';
import { startCliServer, type CliServer } from '../helpers/cli';
import { closeOwnerConnection, createTenant, createUser, ownerConnection, tenantWithMember, tokenFor, unique } from '../helpers/factories';

jest.setTimeout(180_000);

let cli: CliServer;
const tenantctl = (args: string[], env: Record<string, string> = {}) => cli.tenantctl(args, env);
const json = <T>(r: { stdout: string }) => JSON.parse(r.stdout) as T;

beforeAll(async () => {
  cli = await startCliServer({ SERVICE_MULTI_TENANT_MODE: 'true' });
}, 180_000);
afterAll(async () => {
  await cli.close();
  await closeOwnerConnection();
});

it('mints a token shown once, lists it without the secret, maps groups to roles in order, and revokes it', async () => {
  const tenant = await createTenant();
  const scope = ['--tenant', tenant.slug];
  const before = await tenantctl(['scim', 'settings', ...scope, '--format', 'json']);
  expect(before).toMatchObject({ code: 0, stderr: '' });
  expect(json<ScimSettings>(before)).toEqual({ base_url: expect.stringMatching(/\/scim\/v2$/), enabled: false, group_roles: [], external_id_claim: null });
  expect((await tenantctl(['scim', 'tokens', 'list', ...scope])).stdout).toBe('No SCIM tokens: directory sync is off.\n');

  const made = await tenantctl(['scim', 'tokens', 'create', '--description', 'Entra ID production', ...scope, '--format', 'json']);
  expect(made.code).toBe(0);
  const created = json<ScimTokenCreated>(made);
  expect(created).toMatchObject({ description: 'Entra ID production', token: expect.stringMatching(/^scim_[A-Za-z0-9_-]{43,}$/) });
  // In a table, the token comes with the reminder that it is shown once.
  const table = await tenantctl(['scim', 'tokens', 'create', ...scope]);
  expect(table.code).toBe(0);
  expect(table.stdout).toMatch(/^token\s+scim_[A-Za-z0-9_-]+$/m);
  expect(table.stdout).toContain('it is shown only once');
  const second = /^token_id\s+(\S+)$/m.exec(table.stdout)![1]!;

  const listed = await tenantctl(['scim', 'tokens', 'list', ...scope, '--format', 'json']);
  const tokens = json<{ tokens: ScimToken[] }>(listed).tokens;
  expect(tokens.map((t) => t.token_id).sort()).toEqual([created.token_id, second].sort());
  expect(tokens.find((t) => t.token_id === created.token_id)).toEqual({ token_id: created.token_id, description: 'Entra ID production', created_at: created.created_at, last_used_at: null });
  expect(listed.stdout).not.toContain('scim_');
  const listTable = (await tenantctl(['scim', 'tokens', 'list', ...scope])).stdout;
  expect(listTable).toMatch(new RegExp(`^${created.token_id}\\s+Entra ID production\\s+\\S+\\s+never$`, 'm'));
  expect(listTable).toContain('2 tokens');
  expect(json<ScimSettings>(await tenantctl(['scim', 'settings', 'get', ...scope, '--format', 'json'])).enabled).toBe(true);
  // A directory's request with the token: the list says when it was used.
  const used = await fetch(`${cli.baseUrl}/scim/v2/Users?count=1`, { headers: { Authorization: `Bearer ${created.token}` } });
  expect(used.status).toBe(200);
  const afterUse = json<{ tokens: ScimToken[] }>(await tenantctl(['scim', 'tokens', 'list', ...scope, '--format', 'json'])).tokens;
  expect(afterUse.find((t) => t.token_id === created.token_id)!.last_used_at).toEqual(expect.any(String));
  expect(afterUse.find((t) => t.token_id === second)!.last_used_at).toBeNull();

  // The group's display name may hold '=': the last one separates the role key.
  const set = await tenantctl(['scim', 'settings', 'set', '--group-role', 'R&D = Labs=admin', '--group-role', 'All staff=member', '--external-id-claim', 'oid', ...scope, '--format', 'json']);
  expect(set).toMatchObject({ code: 0, stderr: '' });
  const mapped = [
    { group: 'R&D = Labs', role: 'admin' },
    { group: 'All staff', role: 'member' },
  ];
  expect(json<ScimSettings>(set)).toMatchObject({ enabled: true, group_roles: mapped, external_id_claim: 'oid' });
  const shown = (await tenantctl(['scim', 'settings', ...scope])).stdout;
  expect(shown).toMatch(/^external_id_claim\s+oid$/m);
  expect(shown).toMatch(/^\s*1\s+R&D = Labs\s+admin\n\s*2\s+All staff\s+member$/m);

  // A role key the tenant lacks: refused by the server as it words it, nothing changed.
  const unknown = await tenantctl(['scim', 'settings', 'set', '--group-role', `Ops=${unique('no-such-role')}`, ...scope]);
  expect(unknown).toMatchObject({ code: 1, stdout: '' });
  expect(unknown.stderr).toMatch(/^error: /);
  // Only the field given changes.
  const cleared = await tenantctl(['scim', 'settings', 'set', '--clear-external-id-claim', ...scope, '--format', 'json']);
  expect(json<ScimSettings>(cleared)).toMatchObject({ group_roles: mapped, external_id_claim: null });
  const emptied = await tenantctl(['scim', 'settings', 'set', '--clear-group-roles', ...scope, '--format', 'json']);
  expect(json<ScimSettings>(emptied).group_roles).toEqual([]);

  const revoked = await tenantctl(['scim', 'tokens', 'revoke', created.token_id, ...scope, '--format', 'json']);
  expect(revoked).toMatchObject({ code: 0, stderr: '' });
  expect(json(revoked)).toEqual({ token_id: created.token_id, revoked: true });
  const again = await tenantctl(['scim', 'tokens', 'revoke', created.token_id, ...scope]);
  expect(again).toMatchObject({ code: 1, stdout: '' });
  // Revoked: the directory is refused at once.
  expect((await fetch(`${cli.baseUrl}/scim/v2/Users?count=1`, { headers: { Authorization: `Bearer ${created.token}` } })).status).toBe(401);
  expect((await tenantctl(['scim', 'tokens', 'revoke', second.toUpperCase(), ...scope])).code).toBe(0);
  expect(json<{ tokens: ScimToken[] }>(await tenantctl(['scim', 'tokens', 'list', ...scope, '--format', 'json'])).tokens).toEqual([]);
  expect(json<ScimSettings>(await tenantctl(['scim', 'settings', ...scope, '--format', 'json'])).enabled).toBe(false);
});

it("a tenant admin's own token works; another tenant's admin and a member are refused and change nothing", async () => {
  const { tenant, token: adminOfA } = await tenantWithMember('admin');
  const made = await tenantctl(['scim', 'tokens', 'create', '--tenant', tenant.slug, '--format', 'json'], { SERVICE_TOKEN: adminOfA });
  expect(made.code).toBe(0);
  const { token_id } = json<ScimTokenCreated>(made);

  const other = await createTenant();
  const adminOfB = await createUser(other.id, { role: 'admin' });
  const asB = { SERVICE_TOKEN: tokenFor({ sub: adminOfB.subject, email: adminOfB.email }) };
  // B's admin naming A is not a member of A; naming B, A's token id is unknown there.
  const named = await tenantctl(['scim', 'tokens', 'revoke', token_id, '--tenant', tenant.slug], asB);
  expect(named).toMatchObject({ code: 1, stdout: '' });
  const crossed = await tenantctl(['scim', 'tokens', 'revoke', token_id, '--tenant', other.slug], asB);
  expect(crossed).toMatchObject({ code: 1, stdout: '' });
  expect(json<{ tokens: ScimToken[] }>(await tenantctl(['scim', 'tokens', 'list', '--tenant', other.slug, '--format', 'json'], asB)).tokens).toEqual([]);

  const member = await createUser(tenant.id, { role: 'member' });
  const asMember = { SERVICE_TOKEN: tokenFor({ sub: member.subject, email: member.email }) };
  for (const args of [
    ['scim', 'tokens', 'list'],
    ['scim', 'tokens', 'create'],
    ['scim', 'settings'],
    ['scim', 'settings', 'set', '--external-id-claim', 'oid'],
  ]) {
    const r = await tenantctl([...args, '--tenant', tenant.slug], asMember);
    expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 1, stdout: '' });
    expect(r.stderr).toMatch(/^error: Access denied: .*tenant:directory:manage/);
  }
  const rows = await ownerConnection()('scim_tokens').where({ tenant_id: tenant.id }).select('id');
  expect(rows.map((r: { id: string }) => r.id)).toEqual([token_id]);
  const settings = json<ScimSettings>(await tenantctl(['scim', 'settings', '--tenant', tenant.slug, '--format', 'json'], { SERVICE_TOKEN: adminOfA }));
  expect(settings).toMatchObject({ enabled: true, external_id_claim: null });
});

it('scim users lists every directory user, following the pages: active or deactivated, signed in or not yet', async () => {
  const tenant = await createTenant();
  const scope = ['--tenant', tenant.slug];
  expect((await tenantctl(['scim', 'users', ...scope])).stdout).toBe('No directory users.\n');
  const { token } = json<ScimTokenCreated>(await tenantctl(['scim', 'tokens', 'create', ...scope, '--format', 'json']));
  const scim = (method: string, path: string, body: unknown) =>
    fetch(`${cli.baseUrl}/scim/v2${path}`, { method, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/scim+json' }, body: JSON.stringify(body) });
  const names = [`${unique('ann')}@example.com`, `${unique('ben')}@example.com`, `${unique('col')}@example.com`];
  const ids: string[] = [];
  for (const userName of names) ids.push(((await (await scim('POST', '/Users', { userName, active: true })).json()) as { id: string }).id);
  expect((await scim('POST', '/Groups', { displayName: 'Support', members: [{ value: ids[0] }] })).status).toBe(201);
  expect((await scim('PATCH', `/Users/${ids[2]}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'active', value: false }] })).status).toBe(200);

  const listed = await tenantctl(['scim', 'users', ...scope, '--limit', '2', '--format', 'json']);
  expect(listed).toMatchObject({ code: 0, stderr: '' });
  const users = json<{ users: DirectoryUser[] }>(listed).users;
  expect(users.map((u) => [u.user_name, u.active, u.groups.map((g) => g.display_name), u.member_id])).toEqual([
    [names[0], true, ['Support'], null],
    [names[1], true, [], null],
    [names[2], false, [], null],
  ]);
  const table = (await tenantctl(['scim', 'users', ...scope])).stdout;
  expect(table).toMatch(new RegExp(`^${names[0]!.replace(/[.]/g, '\\.')}\\s+yes\\s+member\\s+Support\\s+not signed in yet\\s+${ids[0]}$`, 'm'));
  expect(table).toMatch(new RegExp(`^${names[2]!.replace(/[.]/g, '\\.')}\\s+no \\(deactivated\\)`, 'm'));
  expect(table).toContain('3 directory users');

  const member = await createUser(tenant.id, { role: 'member' });
  const refused = await tenantctl(['scim', 'users', ...scope], { SERVICE_TOKEN: tokenFor({ sub: member.subject, email: member.email }) });
  expect(refused).toMatchObject({ code: 1, stdout: '' });
  expect(refused.stderr).toMatch(/^error: Access denied: .*tenant:directory:manage/);
});

it.each([
  [['scim', 'users', '--limit', '0'], /--limit must be an integer from 1 to 1000/],
  [['scim', 'tokens', 'revoke', 'not-a-uuid'], /expected a token id \(UUID\)/],
  [['scim', 'settings', 'set', '--group-role', 'no-equals-sign'], /expected <group>=<role>/],
  [['scim', 'settings', 'set', '--group-role', '=admin'], /expected <group>=<role>/],
  [['scim', 'settings', 'set', '--group-role', 'Ops=Not_A_Role'], /expected <group>=<role>/],
  [['scim', 'settings', 'set', '--tenant', 'acme'], /nothing to change/],
  [['scim', 'settings', 'set', '--group-role', 'Ops=admin', '--clear-group-roles'], /contradict each other/],
  [['scim', 'settings', 'set', '--external-id-claim', 'oid', '--clear-external-id-claim'], /contradict each other/],
  [['scim', 'tokens', 'list', '--tenant', 'Not A Slug'], /--tenant must be a tenant slug/],
])('%j → exit 2, nothing sent', async (args, message) => {
  const r = await tenantctl(args, { SERVICE_URL: 'http://127.0.0.1:9' });
  expect(r.code).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr).toMatch(message);
});
