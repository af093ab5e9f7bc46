/**
 * `tenantctl tenant get|update|delete`, `members`, `invitations` and `webhooks` as users run
 * them: the compiled binary against a listening server in multi-tenant mode on the test database
 * (the platform admin token is minted from the test data dir's local key). Every JSON output is
 * checked against the contract, and every change against the database.
 */
import { spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { CreatedWebhook, Invitation, InvitationWithToken, Member, Tenant, TenantDeletionPreview, Webhook } from '../../generated/types.gen';
import { contractProblem } from '../helpers/contract';
import { startTestApp, TEST_DATA_DIR, type TestApp } from '../helpers/app';
import { buildOnce } from '../helpers/server-process';
import { closeOwnerConnection, createTenant, createUser, ownerConnection, tokenFor, unique, type TenantFixture } from '../helpers/factories';

jest.setTimeout(180_000);

const ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');

let t: TestApp;
let server: http.Server;
let receiver: http.Server;
let baseUrl: string;
let hookUrl: string;
const createdSlugs: string[] = [];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cliEnv(env: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', SERVICE_URL: baseUrl, SERVICE_DATA_DIR: TEST_DATA_DIR, ...env };
}

function collect(proc: ReturnType<typeof spawn>): Promise<Run> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    proc.stdout!.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    proc.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    proc.on('error', reject);
    proc.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The binary with no terminal: stdin is /dev/null, stdout and stderr are pipes. */
function tenantctl(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return collect(spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] }));
}

// util-linux `script` gives the binary a terminal; Debian always has it (bsdutils, essential).
const HAS_SCRIPT = spawnSync('script', ['--version']).status === 0;
if (!HAS_SCRIPT) process.stderr.write('test/cli/cli-admin.test.ts: the typed-confirmation test is SKIPPED, `script` not found (apt-get install bsdutils)\n');

/** The binary on a pseudo-terminal (util-linux `script`), typing `input` at its prompt. */
function tenantctlOnTerminal(args: string[], input: string, newline = true): Promise<Run> {
  const command = [process.execPath, CLI, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const proc = spawn('script', ['-qec', command, '/dev/null'], { cwd: ROOT, env: { ...cliEnv({}), NO_COLOR: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
  proc.stdin!.end(newline ? `${input}\n` : input);
  return collect(proc);
}

function expectContract(method: string, url: string, status: number, body: unknown): void {
  expect(contractProblem(method, url, { status, headers: { 'content-type': 'application/json' }, body })).toBeNull();
}

async function tenant(opts: Parameters<typeof createTenant>[0] = {}): Promise<TenantFixture> {
  const created = await createTenant({ slug: unique('cli-adm'), ...opts });
  createdSlugs.push(created.slug);
  return created;
}

beforeAll(async () => {
  await buildOnce();
  // Private networks allowed: webhook endpoints point at the local receiver below.
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  server = http.createServer(t.app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
}, 180_000);

afterAll(async () => {
  if (createdSlugs.length) await ownerConnection()('tenants').whereIn('slug', createdSlugs).del();
  await closeOwnerConnection();
  await new Promise<void>((r) => server.close(() => r()));
  await new Promise<void>((r) => receiver.close(() => r()));
  await t.close();
});

describe('tenant get', () => {
  it('shows a tenant by slug (table) and by id (JSON, the contract Tenant)', async () => {
    const x = await tenant({ name: 'Get Corp', settings: { billing_plan: 'pro' } });
    const table = await tenantctl(['tenant', 'get', x.slug]);
    expect({ code: table.code, stderr: table.stderr }).toEqual({ code: 0, stderr: '' });
    expect(table.stdout).toMatch(new RegExp(`^tenant_id +${x.id}$`, 'm'));
    expect(table.stdout).toMatch(/^name +Get Corp$/m);
    expect(table.stdout).toMatch(/^settings +\{"billing_plan":"pro"\}$/m);
    expect(table.stdout).toMatch(/^status +active$/m);

    const json = await tenantctl(['tenant', 'get', x.id, '--format', 'json']);
    expect(json.code).toBe(0);
    const body = JSON.parse(json.stdout) as Tenant;
    expectContract('GET', `/api/setup/tenant/${x.id}`, 200, body);
    expect(body).toMatchObject({ tenant_id: x.id, slug: x.slug, name: 'Get Corp', settings: { billing_plan: 'pro' } });
  });

  it('unknown slug or id: exit 1 with the error line; bad flag: exit 2', async () => {
    const slug = unique('cli-none');
    const bySlug = await tenantctl(['tenant', 'get', slug]);
    expect(bySlug).toEqual({ code: 1, stdout: '', stderr: `error: no tenant with slug '${slug}'\n` });
    const byId = await tenantctl(['tenant', 'get', '00000000-0000-4000-8000-000000000000']);
    expect(byId.code).toBe(1);
    expect(byId.stderr).toMatch(/^error: Tenant not found: .+\n$/);
    const bad = await tenantctl(['tenant', 'get', slug, '--format', 'yaml']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Allowed choices are table, json/);
  });
});

describe('tenant update (name, slug, settings, status)', () => {
  it('renames, re-slugs, replaces settings and approves a pending tenant in one call', async () => {
    const x = await tenant({ status: 'pending_approval', settings: { billing_plan: 'trial', features: ['a'] } });
    const newSlug = unique('cli-renamed');
    createdSlugs.push(newSlug);
    const r = await tenantctl(['tenant', 'update', x.slug, '--name', 'Renamed Corp', '--slug', newSlug, '--settings', '{"billing_plan":"pro"}', '--status', 'active', '--format', 'json']);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    const body = JSON.parse(r.stdout) as Tenant;
    expectContract('PUT', `/api/setup/tenant/${x.id}`, 200, body);
    expect(body).toMatchObject({ tenant_id: x.id, name: 'Renamed Corp', slug: newSlug, status: 'active', settings: { billing_plan: 'pro' } });
    const row = await ownerConnection()('tenants').where({ id: x.id }).first('name', 'slug', 'status', 'settings', 'provision_from_claims');
    // Settings are replaced, not merged; the membership policy is untouched.
    expect(row).toEqual({ name: 'Renamed Corp', slug: newSlug, status: 'active', settings: { billing_plan: 'pro' }, provision_from_claims: true });

    const table = await tenantctl(['tenant', 'update', newSlug, '--status', 'pending_approval']);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain(`Tenant 'Renamed Corp' (${newSlug}) updated.`);
    expect(table.stdout).toMatch(/^status +pending_approval$/m);
  });

  it("a taken slug is the server's Conflict (exit 1) and changes nothing; bad --status or --settings exit 2", async () => {
    const a = await tenant();
    const b = await tenant();
    const taken = await tenantctl(['tenant', 'update', a.slug, '--slug', b.slug, '--name', 'Never']);
    expect(taken.code).toBe(1);
    expect(taken.stdout).toBe('');
    expect(taken.stderr).toMatch(/^error: Conflict: .+\n$/);
    expect(await ownerConnection()('tenants').where({ id: a.id }).first('slug', 'name')).toEqual({ slug: a.slug, name: a.name });

    const status = await tenantctl(['tenant', 'update', a.slug, '--status', 'closed']);
    expect(status.code).toBe(2);
    expect(status.stderr).toMatch(/Allowed choices are active, pending_approval/);
    const settings = await tenantctl(['tenant', 'update', a.slug, '--settings', '[1]']);
    expect(settings.code).toBe(2);
    expect(settings.stderr).toMatch(/--settings must be a JSON object/);
    const name = await tenantctl(['tenant', 'update', a.slug, '--name', ' ']);
    expect(name.code).toBe(2);
    expect(name.stderr).toMatch(/--name must be 1-255 characters/);
  });
});

describe('tenant delete', () => {
  it('without --yes and without a terminal: refuses with exit 2 and deletes nothing', async () => {
    const x = await tenant();
    const r = await tenantctl(['tenant', 'delete', x.slug]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`error: refusing to delete tenant '${x.slug}' without confirmation: there is no terminal to ask on; pass --yes to delete it\n`);
    expect(await ownerConnection()('tenants').where({ id: x.id }).first('id')).toEqual({ id: x.id });
  });

  it('--yes: prints the deletion preview (rows per table), then deletes', async () => {
    const x = await tenant({ name: 'Doomed Corp' });
    await createUser(x.id, { role: 'admin' });
    await createUser(x.id);
    const r = await tenantctl(['tenant', 'delete', x.slug, '--yes']);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toContain(`Deleting tenant 'Doomed Corp' (${x.slug}, ${x.id}) removes:`);
    expect(r.stdout).toMatch(/^TABLE +ROWS$/m);
    expect(r.stdout).toMatch(/^users +2$/m);
    expect(r.stdout).toContain(`Tenant 'Doomed Corp' (${x.slug}) deleted.`);
    expect(await ownerConnection()('tenants').where({ id: x.id }).first('id')).toBeUndefined();
    expect(await ownerConnection()('users').where({ tenant_id: x.id }).first('id')).toBeUndefined();
  });

  it('--yes --format json: one document with the preview and the result; an unknown tenant is exit 1', async () => {
    const x = await tenant();
    await createUser(x.id);
    const r = await tenantctl(['tenant', 'delete', x.id, '--yes', '--format', 'json']);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    const body = JSON.parse(r.stdout) as { preview: TenantDeletionPreview; deleted: unknown };
    expectContract('GET', `/api/setup/tenant/${x.id}/deletion-preview`, 200, body.preview);
    expectContract('DELETE', `/api/setup/tenant/${x.id}`, 200, body.deleted);
    expect(body.preview.rows.users).toBe(1);
    expect(body.deleted).toMatchObject({ tenant_id: x.id });
    expect(await ownerConnection()('tenants').where({ id: x.id }).first('id')).toBeUndefined();

    const again = await tenantctl(['tenant', 'delete', x.id, '--yes']);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toMatch(/^error: Tenant not found: .+\n$/);
  });

  (HAS_SCRIPT ? it : it.skip)('on a terminal: deletes only when the slug is typed', async () => {
    const x = await tenant();
    const wrong = await tenantctlOnTerminal(['tenant', 'delete', x.slug], 'y');
    expect(wrong.code).toBe(2);
    expect(wrong.stdout).toContain("Type the tenant's slug");
    expect(wrong.stdout).toContain(`error: not deleted: 'y' is not the slug '${x.slug}'`);
    expect(await ownerConnection()('tenants').where({ id: x.id }).first('id')).toEqual({ id: x.id });

    // End of input (Ctrl-D) cancels.
    const eof = await tenantctlOnTerminal(['tenant', 'delete', x.slug, '--format', 'json'], '\u0004', false);
    expect(eof.code).toBe(2);
    expect(eof.stdout).toContain('error: not deleted: cancelled');
    expect(await ownerConnection()('tenants').where({ id: x.id }).first('id')).toEqual({ id: x.id });

    const right = await tenantctlOnTerminal(['tenant', 'delete', x.slug], x.slug);
    expect(right.code).toBe(0);
    expect(right.stdout).toMatch(/^TABLE +ROWS\r?$/m);
    expect(right.stdout).toContain(`(${x.slug}) deleted.`);
    expect(await ownerConnection()('tenants').where({ id: x.id }).first('id')).toBeUndefined();
  });
});

describe('members', () => {
  it('list (JSON and table), add, set-role by email, remove by id', async () => {
    const x = await tenant();
    const admin = await createUser(x.id, { role: 'admin', email: `${unique('adm')}@example.test` });
    const member = await createUser(x.id, { email: `${unique('mem')}@example.test` });

    const json = await tenantctl(['members', 'list', '--tenant', x.slug, '--limit', '1', '--format', 'json']);
    expect({ code: json.code, stderr: json.stderr }).toEqual({ code: 0, stderr: '' });
    const listed = JSON.parse(json.stdout) as { members: Member[] };
    for (const m of listed.members) expectContract('GET', '/api/tenant/members', 200, { members: [m], next_cursor: null });
    // Page size 1: both members came from following next_cursor.
    expect(listed.members.map((m) => m.user_id).sort()).toEqual([admin.id, member.id].sort());

    const table = await tenantctl(['members', 'list', '--tenant', x.slug]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^USER ID +ROLE +EMAIL +NAME +SUBJECT +ISSUER +JOINED$/m);
    expect(table.stdout).toMatch(new RegExp(`^${admin.id} +admin +${admin.email} `, 'm'));
    expect(table.stdout.trimEnd().split('\n').pop()).toBe('2 members');

    const sub = unique('cli-added');
    const added = await tenantctl(['members', 'add', '--tenant', x.slug, '--subject', sub, '--email', `${sub}@example.test`, '--role', 'member', '--display-name', 'Added', '--format', 'json']);
    expect({ code: added.code, stderr: added.stderr }).toEqual({ code: 0, stderr: '' });
    const addedBody = JSON.parse(added.stdout) as Member;
    expectContract('POST', '/api/tenant/members', 201, addedBody);
    expect(await ownerConnection()('users').where({ id: addedBody.user_id }).first('tenant_id', 'subject', 'role')).toEqual({ tenant_id: x.id, subject: sub, role: 'member' });

    const promoted = await tenantctl(['members', 'set-role', member.email.toUpperCase(), '--role', 'admin', '--tenant', x.slug]);
    expect({ code: promoted.code, stderr: promoted.stderr }).toEqual({ code: 0, stderr: '' });
    expect(promoted.stdout).toContain(`Member ${member.email} is now admin.`);
    expect((await ownerConnection()('users').where({ id: member.id }).first('role')).role).toBe('admin');

    const removed = await tenantctl(['members', 'remove', addedBody.user_id, '--tenant', x.slug, '--format', 'json']);
    expect(removed.code).toBe(0);
    expect(JSON.parse(removed.stdout)).toEqual({ user_id: addedBody.user_id, removed: true });
    expect(await ownerConnection()('users').where({ id: addedBody.user_id }).first('id')).toBeUndefined();
  });

  it("refusals are the server's, exit 1: last admin, a non-admin adding, no tenant named", async () => {
    const x = await tenant();
    const admin = await createUser(x.id, { role: 'admin' });
    const member = await createUser(x.id);

    const demote = await tenantctl(['members', 'set-role', admin.id, '--role', 'member', '--tenant', x.slug]);
    expect(demote.code).toBe(1);
    expect(demote.stdout).toBe('');
    expect(demote.stderr).toMatch(/^error: Conflict: .+\n$/);
    const remove = await tenantctl(['members', 'remove', admin.id, '--tenant', x.slug]);
    expect(remove.code).toBe(1);
    expect(remove.stderr).toMatch(/^error: Conflict: .+\n$/);
    expect((await ownerConnection()('users').where({ id: admin.id }).first('role')).role).toBe('admin');

    // Adding a person directly is not a plain member's right (the server decides; the CLI reports it).
    const sub = unique('cli-stranger');
    const add = await tenantctl(['members', 'add', '--subject', sub, '--email', `${sub}@example.test`, '--role', 'member', '--tenant', x.slug], {
      SERVICE_TOKEN: tokenFor({ sub: member.subject, email: member.email }),
    });
    expect(add.code).toBe(1);
    expect(add.stderr).toMatch(/^error: Forbidden: .+\n$/);
    expect(add.stderr).not.toContain('(the token must carry');
    expect(await ownerConnection()('users').where({ subject: sub }).first('id')).toBeUndefined();

    const unnamed = await tenantctl(['members', 'list']);
    expect(unnamed.code).toBe(1);
    expect(unnamed.stderr).toMatch(/^error: Missing X-Tenant header: .+\n$/);
    const noEmail = await tenantctl(['members', 'remove', 'nobody@example.test', '--tenant', x.slug]);
    expect(noEmail).toEqual({ code: 1, stdout: '', stderr: "error: no member with email 'nobody@example.test'\n" });
  });

  it.each([
    [['members', 'set-role', 'x@example.test', '--role', 'Owner'], /--role must be a role key/],
    [['members', 'list', '--tenant', 'Not_A_Slug'], /--tenant must be a tenant slug/],
    [['members', 'add', '--subject', 's', '--role', 'member'], /required option '--email <email>' not specified/],
    [['members', 'remove', 'not-an-id'], /neither a user id \(UUID\) nor an email/],
  ])('%j → exit 2', async (args, message) => {
    const r = await tenantctl(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
  });
});

describe('invitations', () => {
  it('create prints the one-time token; list, resend (new token) and revoke', async () => {
    const x = await tenant();
    const email = `${unique('inv')}@example.test`;
    const created = await tenantctl(['invitations', 'create', '--email', email, '--role', 'admin', '--tenant', x.slug, '--format', 'json']);
    expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });
    const inv = JSON.parse(created.stdout) as InvitationWithToken;
    expectContract('POST', '/api/tenant/invitations', 201, inv);
    expect(inv).toMatchObject({ email, role: 'admin', status: 'pending', tenant_id: x.id });
    expect(inv.token.length).toBeGreaterThan(20);

    const table = await tenantctl(['invitations', 'create', '--email', `${unique('inv2')}@example.test`, '--tenant', x.slug]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^role +member$/m);
    expect(table.stdout).toMatch(/^token +\S{20,}$/m);
    expect(table.stdout).toMatch(/^accept_url +/m);
    expect(table.stdout).toContain('The token is shown only now');

    const listed = await tenantctl(['invitations', 'list', '--status', 'pending', '--limit', '1', '--tenant', x.slug, '--format', 'json']);
    expect(listed.code).toBe(0);
    const list = JSON.parse(listed.stdout) as { invitations: Invitation[]; total_count: number };
    expectContract('GET', '/api/tenant/invitations', 200, { ...list, next_cursor: null });
    expect(list.total_count).toBe(2);
    expect(list.invitations.map((i) => i.email)).toContain(email);
    expect(JSON.stringify(list)).not.toContain(inv.token);

    const resent = await tenantctl(['invitations', 'resend', inv.invitation_id, '--tenant', x.slug, '--format', 'json']);
    expect(resent.code).toBe(0);
    const again = JSON.parse(resent.stdout) as InvitationWithToken;
    expectContract('POST', `/api/tenant/invitations/${inv.invitation_id}/resend`, 200, again);
    expect(again.token).not.toBe(inv.token);

    const revoked = await tenantctl(['invitations', 'revoke', inv.invitation_id, '--tenant', x.slug]);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain(`Invitation to ${email} revoked.`);
    expect(revoked.stdout).toMatch(/^status +revoked$/m);
    expect((await ownerConnection()('invitations').where({ id: inv.invitation_id }).first('status')).status).toBe('revoked');

    const tableList = await tenantctl(['invitations', 'list', '--tenant', x.slug]);
    expect(tableList.stdout).toMatch(/^INVITATION ID +EMAIL +ROLE +STATUS +DELIVERY +EXPIRES +INVITED BY$/m);
    expect(tableList.stdout.trimEnd().split('\n').pop()).toBe('2 invitations');
  });

  it("a second pending invitation for the same email is the server's Conflict, exit 1; bad flags exit 2", async () => {
    const x = await tenant();
    const email = `${unique('dup')}@example.test`;
    expect((await tenantctl(['invitations', 'create', '--email', email, '--tenant', x.slug])).code).toBe(0);
    const dup = await tenantctl(['invitations', 'create', '--email', email, '--tenant', x.slug]);
    expect(dup.code).toBe(1);
    expect(dup.stdout).toBe('');
    expect(dup.stderr).toMatch(/^error: Conflict: .+\n$/);
    const [{ n }] = await ownerConnection()('invitations').where({ tenant_id: x.id }).count({ n: '*' });
    expect(Number(n)).toBe(1);

    for (const [args, message] of [
      [['invitations', 'resend', 'not-a-uuid', '--tenant', x.slug], /expected an invitation id/],
      [['invitations', 'list', '--status', 'lost', '--tenant', x.slug], /Allowed choices are pending, accepted, revoked, expired/],
      [['invitations', 'create', '--tenant', x.slug], /required option '--email <email>' not specified/],
    ] as Array<[string[], RegExp]>) {
      const r = await tenantctl(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  });
});

describe('webhooks', () => {
  it('create prints the secret once with a warning; list; delete', async () => {
    const description = unique('cli-hook');
    const created = await tenantctl(['webhooks', 'create', hookUrl, '--events', 'tenant.*,member.*', '--description', description]);
    expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });
    expect(created.stdout).toMatch(/^secret +whsec_\S+$/m);
    expect(created.stdout).toMatch(/^events +tenant\.\*,member\.\*$/m);
    expect(created.stdout).toContain('Store this secret now: it is shown only once');
    const id = /^webhook_id +(\S+)$/m.exec(created.stdout)![1]!;

    const json = await tenantctl(['webhooks', 'create', hookUrl, '--events', '*', '--format', 'json']);
    expect({ code: json.code, stderr: json.stderr }).toEqual({ code: 0, stderr: '' });
    const hook = JSON.parse(json.stdout) as CreatedWebhook;
    expectContract('POST', '/api/setup/webhooks', 201, hook);
    expect(hook.secret).toMatch(/^whsec_/);

    const listed = await tenantctl(['webhooks', 'list', '--format', 'json']);
    expect(listed.code).toBe(0);
    const list = JSON.parse(listed.stdout) as { webhooks: Webhook[] };
    expectContract('GET', '/api/setup/webhooks', 200, list);
    expect(list.webhooks.find((w) => w.webhook_id === id)).toMatchObject({ url: hookUrl, events: ['tenant.*', 'member.*'], description });
    expect(listed.stdout).not.toContain(hook.secret);

    for (const w of [id, hook.webhook_id]) {
      const del = await tenantctl(['webhooks', 'delete', w]);
      expect(del).toEqual({ code: 0, stdout: `Webhook ${w} deleted.\n`, stderr: '' });
      expect(await ownerConnection()('webhook_endpoints').where({ id: w }).first('id')).toBeUndefined();
    }
    const gone = await tenantctl(['webhooks', 'delete', id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/^error: Not found: .+\n$/);
  });

  it("an unknown event is the server's Validation error, exit 1; bad flags exit 2", async () => {
    const description = unique('cli-bad-hook');
    const r = await tenantctl(['webhooks', 'create', hookUrl, '--events', 'tenant.exploded', '--description', description]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error: Validation error: .+\n$/);
    expect(await ownerConnection()('webhook_endpoints').where({ description }).first('id')).toBeUndefined();

    for (const [args, message] of [
      [['webhooks', 'delete', 'nope'], /expected a webhook id/],
      [['webhooks', 'create', '--events', '*'], /missing required argument 'url'/],
      [['webhooks', 'create', hookUrl, '--events', ','], /--events must list at least one/],
    ] as Array<[string[], RegExp]>) {
      const bad = await tenantctl(args);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(message);
    }
  });
});

it.each([
  [['tenant', 'get']],
  [['tenant', 'delete']],
  [['members']],
  [['members', 'list']],
  [['members', 'add']],
  [['members', 'set-role']],
  [['members', 'remove']],
  [['invitations']],
  [['invitations', 'list']],
  [['invitations', 'create']],
  [['invitations', 'resend']],
  [['invitations', 'revoke']],
  [['webhooks']],
  [['webhooks', 'list']],
  [['webhooks', 'create']],
  [['webhooks', 'delete']],
])('%j --help → usage, exit 0', async (args) => {
  const r = await tenantctl([...args, '--help']);
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(new RegExp(`^Usage: tenantctl ${args.join(' ')} `));
});
