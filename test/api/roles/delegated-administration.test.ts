/**
 * Delegated administration (docs/roles.md#system-permissions) on the real service: the system
 * permissions in the catalogue (`system: true`, never created or deleted, the `tenant:` prefix
 * reserved), the built-in admin holding them all whatever its edit says, an "IT admin" role
 * working the directory and nothing else, no member granting a system permission they do not
 * hold (roles, role assignment, invitations), and a tenant always keeping a member who holds
 * both tenant:roles:write and tenant:members:write (role edits, assignments, removals, leaving).
 */
import request from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { adminToken, closeOwnerConnection, createTenant, createUser, ownerConnection, tokenFor, unique, type TenantFixture, type UserFixture } from '../../helpers/factories';
import { SYSTEM_PERMISSIONS } from '../../../src/context/permissions';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
}, 120_000);
afterAll(async () => {
  await t?.close();
  await closeOwnerConnection();
});

const operator = () => `Bearer ${adminToken()}`;
const bearerOf = (u: UserFixture) => `Bearer ${tokenFor({ sub: u.subject, email: u.email })}`;
const as = (tenant: TenantFixture, auth: string) => ({
  get: (path: string) => request(t.app).get(path).set('Authorization', auth).set('X-Tenant', tenant.slug),
  post: (path: string, body: object) => request(t.app).post(path).set('Authorization', auth).set('X-Tenant', tenant.slug).send(body),
  put: (path: string, body: object) => request(t.app).put(path).set('Authorization', auth).set('X-Tenant', tenant.slug).send(body),
  patch: (path: string, body: object) => request(t.app).patch(path).set('Authorization', auth).set('X-Tenant', tenant.slug).send(body),
  del: (path: string) => request(t.app).delete(path).set('Authorization', auth).set('X-Tenant', tenant.slug),
});
const roleKey = (prefix: string) => unique(prefix).toLowerCase().replace(/[^a-z0-9-]/g, '-');

/** A tenant role (made by the operator) holding `permissions`. */
async function tenantRole(tenant: TenantFixture, permissions: readonly string[]): Promise<string> {
  const key = roleKey('role');
  await as(tenant, operator()).post('/api/tenant/roles', { key, name: key, permissions }).expect(201);
  return key;
}
const roleOf = async (u: UserFixture) => ((await ownerConnection()('users').where({ id: u.id }).first('role')) as { role: string }).role;

describe('the catalogue', () => {
  it('lists the system permissions with system: true; they cannot be created again or deleted; tenant: is reserved', async () => {
    const list = await request(t.app).get('/api/setup/permissions').set('Authorization', operator()).expect(200);
    const system = (list.body.permissions as Array<{ key: string; system: boolean }>).filter((p) => p.system).map((p) => p.key);
    expect(system).toEqual([...SYSTEM_PERMISSIONS]);
    const again = await request(t.app).post('/api/setup/permissions').set('Authorization', operator()).send({ key: 'tenant:members:read' }).expect(400);
    expect(again.body.detail).toMatch(/'tenant:'/);
    await request(t.app).post('/api/setup/permissions').set('Authorization', operator()).send({ key: 'tenant:billing:read' }).expect(400);
    const del = await request(t.app).delete('/api/setup/permissions/tenant:events:read').set('Authorization', operator()).expect(400);
    expect(del.body).toMatchObject({ error: 'Validation error', detail: expect.stringMatching(/system permission/) });
    const made = await request(t.app).post('/api/setup/permissions').set('Authorization', operator()).send({ key: unique('invoices').toLowerCase() + ':write' }).expect(201);
    expect(made.body.system).toBe(false);
  });

  it('the built-in admin holds every system permission, also after an edit that leaves them out', async () => {
    const before = await request(t.app).get('/api/setup/roles/admin').set('Authorization', operator()).expect(200);
    expect(before.body.permissions).toEqual(expect.arrayContaining([...SYSTEM_PERMISSIONS]));
    // Other suites share the database: the edit keeps admin's product permissions as they are.
    const product = (before.body.permissions as string[]).filter((p) => !p.startsWith('tenant:'));
    const edited = await request(t.app).put('/api/setup/roles/admin').set('Authorization', operator()).send({ name: before.body.name, description: before.body.description, permissions: product }).expect(200);
    expect(edited.body.permissions).toEqual(before.body.permissions);
    expect(edited.body.permissions).toEqual(expect.arrayContaining([...SYSTEM_PERMISSIONS]));
  });
});

describe('an IT admin role', () => {
  it('works the directory and reads members, and is refused what it does not hold, naming the permission', async () => {
    const tenant = await createTenant();
    const it = await createUser(tenant.id, { role: await tenantRole(tenant, ['tenant:directory:manage', 'tenant:sso:manage', 'tenant:domains:manage', 'tenant:members:read']) });
    const me = as(tenant, bearerOf(it));
    await me.get('/api/tenant/scim').expect(200);
    await me.get('/api/tenant/scim/tokens').expect(200);
    await me.get('/api/tenant/members').expect(200);
    const refused = await me.get('/api/tenant/events').expect(403);
    expect(refused.body).toMatchObject({ error: 'Access denied', detail: expect.stringContaining("permission 'tenant:events:read'") });
    await me.post('/api/tenant/invitations', { email: 'x@example.test' }).expect(403);
  });
});

describe('nobody grants what they do not hold', () => {
  it('a role manager cannot make or widen a role with a system permission they lack (403), but may with those they hold', async () => {
    const tenant = await createTenant();
    const manager = await createUser(tenant.id, { role: await tenantRole(tenant, ['tenant:roles:write', 'tenant:members:read']) });
    const me = as(tenant, bearerOf(manager));
    const denied = await me.post('/api/tenant/roles', { key: roleKey('sneaky'), name: 'Sneaky', permissions: ['tenant:members:write'] }).expect(403);
    expect(denied.body).toMatchObject({ error: 'Access denied', detail: expect.stringContaining("'tenant:members:write'") });
    const key = roleKey('readers');
    await me.post('/api/tenant/roles', { key, name: 'Readers', permissions: ['tenant:members:read'] }).expect(201);
    await me.put(`/api/tenant/roles/${key}`, { name: 'Readers', permissions: ['tenant:members:read', 'tenant:settings:write'] }).expect(403);
    expect((await me.get(`/api/tenant/roles/${key}`).expect(200)).body.permissions).toEqual(['tenant:members:read']);
  });

  it('a member manager cannot assign a role holding more than their own (403); an inviter cannot invite with one', async () => {
    const tenant = await createTenant();
    await createUser(tenant.id, { role: 'admin' });
    const target = await createUser(tenant.id);
    const manager = await createUser(tenant.id, { role: await tenantRole(tenant, ['tenant:members:write', 'tenant:members:read']) });
    const denied = await as(tenant, bearerOf(manager)).patch(`/api/tenant/members/${target.id}`, { role: 'admin' }).expect(403);
    expect(denied.body.detail).toMatch(/would grant permission 'tenant:directory:manage'/);
    expect(await roleOf(target)).toBe('member');
    const inviter = await createUser(tenant.id, { role: await tenantRole(tenant, ['tenant:invitations:write']) });
    await as(tenant, bearerOf(inviter)).post('/api/tenant/invitations', { email: 'boss@example.test', role: 'admin' }).expect(403);
    // `member` holds tenant:members:read, which this inviter lacks.
    await as(tenant, bearerOf(inviter)).post('/api/tenant/invitations', { email: 'someone@example.test', role: 'member' }).expect(403);
    const plain = await tenantRole(tenant, []);
    await as(tenant, bearerOf(inviter)).post('/api/tenant/invitations', { email: 'someone@example.test', role: plain }).expect(201);
    // The operator grants anything.
    await as(tenant, operator()).patch(`/api/tenant/members/${target.id}`, { role: 'admin' }).expect(200);
  });
});

describe('a tenant keeps a member holding tenant:roles:write and tenant:members:write', () => {
  it('refuses (409) a role edit, an assignment, a removal and a departure that would leave nobody holding both', async () => {
    const tenant = await createTenant();
    const owners = await tenantRole(tenant, ['tenant:roles:write', 'tenant:members:write', 'tenant:members:read']);
    const owner = await createUser(tenant.id, { role: owners });
    const other = await createUser(tenant.id);
    // No admin in this tenant: the owner is the only one who can administer its people.
    const edit = await as(tenant, operator()).put(`/api/tenant/roles/${owners}`, { name: owners, permissions: ['tenant:members:write'] }).expect(409);
    expect(edit.body).toMatchObject({ error: 'Conflict', detail: expect.stringContaining("'tenant:members:write' and 'tenant:roles:write'") });
    await as(tenant, operator()).patch(`/api/tenant/members/${owner.id}`, { role: 'member' }).expect(409);
    await as(tenant, operator()).del(`/api/tenant/members/${owner.id}`).expect(409);
    await as(tenant, bearerOf(owner)).del('/api/tenant/membership').expect(409);
    expect(await roleOf(owner)).toBe(owners);
    // With a second holder, the same changes pass.
    await as(tenant, operator()).patch(`/api/tenant/members/${other.id}`, { role: owners }).expect(200);
    await as(tenant, bearerOf(other)).patch(`/api/tenant/members/${owner.id}`, { role: 'member' }).expect(200);
    await as(tenant, operator()).put(`/api/tenant/roles/${owners}`, { name: owners, permissions: ['tenant:members:write'] }).expect(409);
  });
});
