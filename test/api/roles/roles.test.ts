/**
 * Roles and permissions (docs/roles.md) on the real service, every caller's token signed by a key
 * served over HTTP (a local JWKS): the catalogue, platform roles and a tenant's own roles; a
 * member holding a role admitted by the gateway decision for exactly its permissions; role
 * changes applying at the next decision; tenant tokens; isolation between tenants; refusals.
 */
import request from 'supertest';
import { decodeJwt } from 'jose';
import { startTestApp, type TestApp } from '../../helpers/app';
import { startJwksServer, type JwksServer } from '../../helpers/jwks-server';
import { closeOwnerConnection, createTenant, createUser, ownerConnection, unique, type TenantFixture, type UserFixture } from '../../helpers/factories';

let jwks: JwksServer;
let app: TestApp;

beforeAll(async () => {
  jwks = await startJwksServer();
  app = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_JWKS_URI: jwks.jwksUri, SERVICE_ADMIN_ISSUER: jwks.issuer });
}, 120_000);
afterAll(async () => {
  await app?.close();
  await jwks?.close();
  await closeOwnerConnection();
});

const platformAdmin = () => `Bearer ${jwks.sign({ sub: unique('operator'), iss: jwks.issuer, roles: ['admin'] })}`;
const bearerOf = (u: UserFixture) => `Bearer ${jwks.sign({ sub: u.subject, iss: jwks.issuer, email: u.email })}`;
const member = (t: TenantFixture, role = 'member') => createUser(t.id, { issuer: jwks.issuer, role });

const setup = () => ({
  post: (path: string, body: object, auth = platformAdmin()) => request(app.app).post(path).set('Authorization', auth).send(body),
  put: (path: string, body: object, auth = platformAdmin()) => request(app.app).put(path).set('Authorization', auth).send(body),
  get: (path: string, auth = platformAdmin()) => request(app.app).get(path).set('Authorization', auth),
  del: (path: string, auth = platformAdmin()) => request(app.app).delete(path).set('Authorization', auth),
});
const api = setup();
const inTenant = (t: TenantFixture, auth: string) => ({
  get: (path: string) => request(app.app).get(path).set('Authorization', auth).set('X-Tenant', t.slug),
  post: (path: string, body: object) => request(app.app).post(path).set('Authorization', auth).set('X-Tenant', t.slug).send(body),
  put: (path: string, body: object) => request(app.app).put(path).set('Authorization', auth).set('X-Tenant', t.slug).send(body),
  patch: (path: string, body: object) => request(app.app).patch(path).set('Authorization', auth).set('X-Tenant', t.slug).send(body),
  del: (path: string) => request(app.app).delete(path).set('Authorization', auth).set('X-Tenant', t.slug),
});

/** The decision with `?permission=` for each of `permissions`. */
function decide(t: TenantFixture, u: UserFixture, permissions: string[], extra = '') {
  const q = permissions.map((p) => `permission=${encodeURIComponent(p)}`).join('&');
  return request(app.app).get(`/api/tenant/decision?${q}${extra}`).set('Authorization', bearerOf(u)).set('X-Tenant', t.slug);
}

const eventsOf = async (action: string, targetId: string) =>
  (await ownerConnection()('events').where({ action, target_id: targetId }).select('tenant_id', 'data')) as Array<{ tenant_id: string | null; data: Record<string, unknown> }>;
/** Events of one tenant (only this test writes them). */
const tenantEventCount = async (tenantId: string) =>
  Number(((await ownerConnection()('events').where({ tenant_id: tenantId }).count({ n: '*' })) as Array<{ n: string }>)[0]!.n);

/**
 * The rows a refused request could have written under `keys` (permissions, roles, their events).
 * Counted by key, not whole tables: other suites write the same tables at the same time.
 */
const counts = async (...keys: string[]) => {
  const db = ownerConnection();
  const n = async (table: string, column: string) => Number(((await db(table).whereIn(column, keys).count({ n: '*' })) as Array<{ n: string }>)[0]!.n);
  return { permissions: await n('permissions', 'key'), platform: await n('platform_roles', 'key'), tenant: await n('tenant_roles', 'key'), events: await n('events', 'target_id') };
};

/** A fresh catalogue vocabulary per test: keys are platform-wide and test files share the database. */
function vocabulary() {
  const ns = unique('inv').replace('-', '');
  return { read: `${ns}:read`, write: `${ns}:write`, report: `${ns}.reports:read` };
}
async function define(...keys: string[]) {
  for (const key of keys) await api.post('/api/setup/permissions', { key, description: `Lets one ${key}` }).expect(201);
}

describe('the catalogue (platform admins)', () => {
  it('defines, lists and deletes permissions; each change is an event', async () => {
    const v = vocabulary();
    const made = await api.post('/api/setup/permissions', { key: v.write, description: 'Create invoices' }).expect(201);
    expect(made.body).toMatchObject({ key: v.write, description: 'Create invoices' });
    const listed = (await api.get('/api/setup/permissions').expect(200)).body.permissions as Array<{ key: string }>;
    expect(listed.map((p) => p.key)).toContain(v.write);
    expect(listed.map((p) => p.key)).toEqual([...listed.map((p) => p.key)].sort());
    expect(await eventsOf('permission.created', v.write)).toEqual([{ tenant_id: null, data: { permission: { key: v.write, description: 'Create invoices' } } }]);
    await api.del(`/api/setup/permissions/${encodeURIComponent(v.write)}`).expect(200);
    expect(await eventsOf('permission.deleted', v.write)).toHaveLength(1);
    await api.del(`/api/setup/permissions/${encodeURIComponent(v.write)}`).expect(404);
  });

  it('refuses bad keys, duplicates and non-admins with a clear 4xx, changing nothing', async () => {
    const v = vocabulary();
    await define(v.read);
    const bad = ['Invoices:Write', ':write', 'a::b', 'a b', 'x'.repeat(101), '', 'ü:write'];
    const stranger = `${unique('p')}:read`;
    const before = await counts(v.read, stranger, ...bad);
    for (const key of bad) {
      const r = await api.post('/api/setup/permissions', { key }).expect(400);
      expect(r.body.error).toBe('Validation error');
    }
    expect((await api.post('/api/setup/permissions', { key: v.read }).expect(409)).body.detail).toContain(v.read);
    const t = await createTenant();
    const admin = await member(t, 'admin');
    expect((await api.post('/api/setup/permissions', { key: stranger }, bearerOf(admin)).expect(403)).body.error).toBe('Forbidden');
    await api.get('/api/setup/permissions', bearerOf(admin)).expect(403);
    expect(await counts(v.read, stranger, ...bad)).toEqual(before);
  });
});

describe('platform roles', () => {
  it('admin and member are built in: never deleted, keys fixed, permissions editable', async () => {
    const roles = (await api.get('/api/setup/roles').expect(200)).body.roles as Array<{ key: string; built_in: boolean; scope: string }>;
    expect(roles.slice(0, 2).map((r) => [r.key, r.built_in, r.scope])).toEqual([
      ['admin', true, 'platform'],
      ['member', true, 'platform'],
    ]);
    expect((await api.del('/api/setup/roles/admin').expect(400)).body.detail).toMatch(/built-in/);
    await api.del('/api/setup/roles/member').expect(400);
    expect((await api.put('/api/setup/roles/member', { key: 'staff', name: 'Member', permissions: [] }).expect(400)).body.detail).toMatch(/never changes/);
    // Editable (a no-op for memberships here: other suites, sharing the database, see member's permissions).
    const before = (await api.get('/api/setup/roles/member').expect(200)).body;
    const edited = await api.put('/api/setup/roles/member', { key: 'member', name: before.name, description: 'Everyone else', permissions: before.permissions }).expect(200);
    expect(edited.body).toMatchObject({ key: 'member', description: 'Everyone else', built_in: true });
    await api.put('/api/setup/roles/member', { name: before.name, description: before.description, permissions: before.permissions }).expect(200);
  });

  it('creates, replaces and deletes a platform role, with events (tenant_id null); bad input is 4xx and changes nothing', async () => {
    const v = vocabulary();
    await define(v.read, v.write);
    const key = unique('billing');
    const made = await api.post('/api/setup/roles', { key, name: 'Billing', permissions: [v.write, v.read, v.read] }).expect(201);
    expect(made.body).toMatchObject({ key, name: 'Billing', description: '', permissions: [v.read, v.write], scope: 'platform', built_in: false });
    await api.post('/api/setup/roles', { key, name: 'Again' }).expect(409);

    const tried = [key, 'Bad_Key', unique('r'), unique('r'), unique('r')];
    const before = await counts(...tried);
    const unknown = await api.post('/api/setup/roles', { key: tried[2], name: 'X', permissions: [v.read, 'nope:never'] }).expect(400);
    expect(unknown.body).toMatchObject({ error: 'Validation error' });
    expect(unknown.body.detail).toContain("'nope:never'");
    await api.post('/api/setup/roles', { key: 'Bad_Key', name: 'X' }).expect(400);
    await api.post('/api/setup/roles', { key: tried[3], name: '' }).expect(400);
    const tooMany = Array.from({ length: 101 }, (_, i) => `p${i}:x`);
    await api.post('/api/setup/roles', { key: tried[4], name: 'X', permissions: tooMany }).expect(400);
    await api.put(`/api/setup/roles/${key}`, { name: 'X', permissions: tooMany }).expect(400);
    expect(await counts(...tried)).toEqual(before);

    const replaced = await api.put(`/api/setup/roles/${key}`, { name: 'Billing team', permissions: [v.read] }).expect(200);
    expect(replaced.body).toMatchObject({ name: 'Billing team', permissions: [v.read] });
    await api.del(`/api/setup/roles/${key}`).expect(200);
    await api.get(`/api/setup/roles/${key}`).expect(404);
    for (const action of ['role.created', 'role.updated', 'role.deleted']) {
      const events = await eventsOf(action, key);
      expect({ action, n: events.length, tenant: events[0]?.tenant_id }).toEqual({ action, n: 1, tenant: null });
    }
  });
});

describe("a tenant's own role, held by a member, decides the product request", () => {
  it('is admitted for exactly its permissions; a change applies at the next decision; the token carries it', async () => {
    const v = vocabulary();
    await define(v.read, v.write, v.report);
    const t = await createTenant();
    const admin = await member(t, 'admin');
    const asAdmin = inTenant(t, bearerOf(admin));
    const key = unique('accountant');

    const made = await asAdmin.post('/api/tenant/roles', { key, name: 'Accountant', permissions: [v.write, v.read] }).expect(201);
    expect(made.body).toMatchObject({ key, scope: 'tenant', built_in: false, permissions: [v.read, v.write] });
    expect(await eventsOf('role.created', key)).toEqual([expect.objectContaining({ tenant_id: t.id })]);

    const bob = await member(t);
    const changed = await asAdmin.patch(`/api/tenant/members/${bob.id}`, { role: key }).expect(200);
    expect(changed.body).toMatchObject({ role: key, permissions: [v.read, v.write] });

    const ok = await decide(t, bob, [v.write]).expect(200);
    expect(ok.headers['x-tenant-role']).toBe(key);
    expect(ok.headers['x-tenant-permissions']).toBe(`${v.read} ${v.write}`);
    expect(ok.body).toMatchObject({ tenant_role: key, permissions: [v.read, v.write] });
    await decide(t, bob, [v.read, v.write]).expect(200);
    await decide(t, bob, [], `&role=${key}`).expect(200);
    await decide(t, bob, [], '&role=admin').expect(403);

    // All required: the first missing one is named; an unknown key is missing (fail closed).
    const missing = await decide(t, bob, [v.read, v.report, 'unknown:key']).expect(403);
    expect(missing.body).toMatchObject({ error: 'Access denied' });
    expect(missing.body.detail).toContain(`'${v.report}'`);
    expect(missing.headers['x-tenant-error']).toBe('Access denied');
    expect(missing.headers['x-tenant-permissions']).toBeUndefined();
    expect((await decide(t, bob, ['unknown:key']).expect(403)).body.detail).toContain("'unknown:key'");
    // A malformed key or too many are refused too (the decision's 403).
    await decide(t, bob, ['Not A Key']).expect(403);
    await decide(t, bob, Array.from({ length: 21 }, () => v.read)).expect(403);

    // The role changes: the next decision follows.
    await asAdmin.put(`/api/tenant/roles/${key}`, { name: 'Accountant', permissions: [v.read] }).expect(200);
    await decide(t, bob, [v.write]).expect(403);
    expect((await decide(t, bob, [v.read]).expect(200)).headers['x-tenant-permissions']).toBe(v.read);
    expect(await eventsOf('role.updated', key)).toHaveLength(1);

    // Every membership in an answer carries role and permissions.
    const current = await inTenant(t, bearerOf(bob)).get('/api/tenant').expect(200);
    expect(current.body.membership).toMatchObject({ role: key, permissions: [v.read] });
    const listed = (await asAdmin.get('/api/tenant/members').expect(200)).body.members as Array<{ user_id: string; permissions: string[] }>;
    expect(listed.find((m) => m.user_id === bob.id)!.permissions).toEqual([v.read]);
    const mine = (await request(app.app).get('/api/tenants/mine').set('Authorization', bearerOf(bob)).expect(200)).body.tenants;
    expect(mine).toEqual([expect.objectContaining({ tenant_id: t.id, role: key, permissions: [v.read] })]);

    // The tenant token carries the role and its sorted permissions.
    const issued = await request(app.app).post('/api/tenant/token').set('Authorization', bearerOf(bob)).set('X-Tenant', t.slug).expect(200);
    expect(issued.body).toMatchObject({ role: key, permissions: [v.read] });
    expect(decodeJwt(issued.body.access_token)).toMatchObject({ tenant_role: key, permissions: [v.read] });
  });

  it('deleting a permission takes it out of every role, platform and tenant, at once', async () => {
    const v = vocabulary();
    await define(v.read, v.write);
    const platformKey = unique('auditor');
    await api.post('/api/setup/roles', { key: platformKey, name: 'Auditor', permissions: [v.read, v.write] }).expect(201);
    const t = await createTenant();
    const admin = await member(t, 'admin');
    const ownKey = unique('clerk');
    await inTenant(t, bearerOf(admin)).post('/api/tenant/roles', { key: ownKey, name: 'Clerk', permissions: [v.write] }).expect(201);
    const holder = await member(t, platformKey);
    await decide(t, holder, [v.write]).expect(200);

    const gone = await api.del(`/api/setup/permissions/${encodeURIComponent(v.write)}`).expect(200);
    // Every role it leaves, platform and tenant.
    expect(gone.body.removed_from_roles).toEqual([
      { tenant_id: null, role_key: platformKey },
      { tenant_id: t.id, role_key: ownKey },
    ]);
    const [event] = await eventsOf('permission.deleted', v.write);
    expect(event.data.removed_from_roles).toEqual(gone.body.removed_from_roles);
    expect((await api.get(`/api/setup/roles/${platformKey}`).expect(200)).body.permissions).toEqual([v.read]);
    expect((await inTenant(t, bearerOf(admin)).get(`/api/tenant/roles/${ownKey}`).expect(200)).body.permissions).toEqual([]);
    await decide(t, holder, [v.write]).expect(403);
    expect(await ownerConnection()('tenant_role_permissions').where({ permission_key: v.write })).toEqual([]);
    expect(await ownerConnection()('platform_role_permissions').where({ permission_key: v.write })).toEqual([]);
  });
});

describe('who may change which role', () => {
  it("a tenant admin cannot edit a platform role, use a permission outside the catalogue, or take a platform role's key", async () => {
    const v = vocabulary();
    await define(v.read);
    const t = await createTenant();
    const admin = await member(t, 'admin');
    const asAdmin = inTenant(t, bearerOf(admin));
    const invention = unique('r');
    const before = { ...(await counts('member', 'admin', invention)), tenantEvents: await tenantEventCount(t.id) };
    expect((await asAdmin.put('/api/tenant/roles/member', { name: 'Mine', permissions: [v.read] }).expect(403)).body.detail).toMatch(/platform role/);
    await asAdmin.del('/api/tenant/roles/admin').expect(403);
    await asAdmin.put('/api/setup/roles/member', { name: 'Mine', permissions: [] }).expect(403);
    const invented = await asAdmin.post('/api/tenant/roles', { key: invention, name: 'R', permissions: [`${v.read}x`] }).expect(400);
    expect(invented.body.detail).toContain(`'${v.read}x'`);
    expect((await asAdmin.post('/api/tenant/roles', { key: 'member', name: 'R' }).expect(409)).body.error).toBe('Conflict');
    expect({ ...(await counts('member', 'admin', invention)), tenantEvents: await tenantEventCount(t.id) }).toEqual(before);
    // A plain member reads the roles (the built-in member holds tenant:members:read) but may not manage them.
    const plain = await member(t);
    await inTenant(t, bearerOf(plain)).get('/api/tenant/roles').expect(200);
    const refused = await inTenant(t, bearerOf(plain)).post('/api/tenant/roles', { key: unique('r'), name: 'R' }).expect(403);
    expect(refused.body).toMatchObject({ error: 'Access denied', detail: expect.stringContaining("'tenant:roles:write'") });
    // A platform admin may, through X-Tenant.
    await inTenant(t, platformAdmin()).post('/api/tenant/roles', { key: unique('ops'), name: 'Ops' }).expect(201);
  });

  it("tenant B never sees tenant A's roles, nor gives them", async () => {
    const v = vocabulary();
    await define(v.read);
    const a = await createTenant();
    const b = await createTenant();
    const adminA = await member(a, 'admin');
    const adminB = await member(b, 'admin');
    const key = unique('secret');
    await inTenant(a, bearerOf(adminA)).post('/api/tenant/roles', { key, name: 'Secret', permissions: [v.read] }).expect(201);
    const asB = inTenant(b, bearerOf(adminB));
    const listed = (await asB.get('/api/tenant/roles').expect(200)).body.roles as Array<{ key: string; scope: string }>;
    expect(listed.map((r) => r.key)).not.toContain(key);
    expect(listed.every((r) => r.scope === 'platform')).toBe(true);
    await asB.get(`/api/tenant/roles/${key}`).expect(404);
    await asB.put(`/api/tenant/roles/${key}`, { name: 'Mine', permissions: [] }).expect(404);
    await asB.del(`/api/tenant/roles/${key}`).expect(404);
    const bob = await member(b);
    expect((await asB.patch(`/api/tenant/members/${bob.id}`, { role: key }).expect(400)).body.detail).toContain(`'${key}'`);
    // B may have its own role with the same key; A's is untouched.
    await asB.post('/api/tenant/roles', { key, name: 'Also secret' }).expect(201);
    expect((await inTenant(a, bearerOf(adminA)).get(`/api/tenant/roles/${key}`).expect(200)).body).toMatchObject({ name: 'Secret', permissions: [v.read] });
    // …so that key cannot become a platform role.
    expect((await api.post('/api/setup/roles', { key, name: 'Platform' }).expect(409)).body.detail).toMatch(/tenant/);
  });

  it('a role held by a member or a pending invitation cannot be deleted (409 saying how many)', async () => {
    const t = await createTenant();
    const admin = await member(t, 'admin');
    const asAdmin = inTenant(t, bearerOf(admin));
    const key = unique('held');
    await asAdmin.post('/api/tenant/roles', { key, name: 'Held' }).expect(201);
    const holder = await member(t);
    await asAdmin.patch(`/api/tenant/members/${holder.id}`, { role: key }).expect(200);
    const invited = await asAdmin.post('/api/tenant/invitations', { email: `${unique('i')}@example.test`, role: key }).expect(201);
    const refused = await asAdmin.del(`/api/tenant/roles/${key}`).expect(409);
    expect(refused.body.detail).toMatch(/1 member\(s\) and 1 pending invitation\(s\)/);
    await asAdmin.patch(`/api/tenant/members/${holder.id}`, { role: 'member' }).expect(200);
    await asAdmin.del(`/api/tenant/invitations/${invited.body.invitation_id}`).expect(200);
    await asAdmin.del(`/api/tenant/roles/${key}`).expect(200);
    expect(await eventsOf('role.deleted', key)).toEqual([expect.objectContaining({ tenant_id: t.id })]);

    const platformKey = unique('pheld');
    await api.post('/api/setup/roles', { key: platformKey, name: 'Held' }).expect(201);
    await member(await createTenant(), platformKey);
    expect((await api.del(`/api/setup/roles/${platformKey}`).expect(409)).body.detail).toMatch(/1 member\(s\) and 0 pending/);
  });

  it('members hold any available role key; an unknown one is 400 naming it and changes nothing', async () => {
    const t = await createTenant();
    const admin = await member(t, 'admin');
    const asAdmin = inTenant(t, bearerOf(admin));
    const bob = await member(t);
    expect((await asAdmin.patch(`/api/tenant/members/${bob.id}`, { role: 'no-such-role' }).expect(400)).body.detail).toContain("'no-such-role'");
    expect((await asAdmin.post('/api/tenant/invitations', { email: `${unique('i')}@example.test`, role: 'no-such-role' }).expect(400)).body.detail).toContain("'no-such-role'");
    await inTenant(t, platformAdmin()).post('/api/tenant/members', { subject: unique('s'), email: `${unique('e')}@example.test`, role: 'no-such-role' }).expect(400);
    await asAdmin.patch(`/api/tenant/members/${bob.id}`, { role: 'Not_A_Key' }).expect(400);
    expect(((await ownerConnection()('users').where({ tenant_id: t.id, id: bob.id }).first('role')) as { role: string }).role).toBe('member');
    expect(await ownerConnection()('invitations').where({ tenant_id: t.id })).toEqual([]);
    // The last-admin rule is about admin, whatever other role it becomes.
    const key = unique('lead');
    await asAdmin.post('/api/tenant/roles', { key, name: 'Lead' }).expect(201);
    expect((await asAdmin.patch(`/api/tenant/members/${admin.id}`, { role: key }).expect(409)).body.detail).toMatch(/last admin/);
  });

  it('an invitation gives its role; the accept answer carries role and permissions', async () => {
    const v = vocabulary();
    await define(v.read);
    const t = await createTenant();
    const admin = await member(t, 'admin');
    const key = unique('viewer');
    await inTenant(t, bearerOf(admin)).post('/api/tenant/roles', { key, name: 'Viewer', permissions: [v.read] }).expect(201);
    const email = `${unique('inv')}@example.test`;
    const inv = await inTenant(t, bearerOf(admin)).post('/api/tenant/invitations', { email, role: key }).expect(201);
    const invitee = jwks.sign({ sub: unique('u'), iss: jwks.issuer, email, email_verified: true });
    const accepted = await request(app.app).post('/api/invitations/accept').set('Authorization', `Bearer ${invitee}`).send({ token: inv.body.token }).expect(200);
    expect(accepted.body.membership).toMatchObject({ role: key, permissions: [v.read] });
  });
});
