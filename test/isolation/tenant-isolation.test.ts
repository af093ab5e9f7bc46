/**
 * Isolation through the API: two tenants with the same shapes of data; each member sees and
 * changes only its own tenant's rows, whatever ids or headers it sends.
 */
import request from 'supertest';
import { startTestApp, type TestApp } from '../helpers/app';
import { adminToken, closeOwnerConnection, createTenant, createUser, ownerConnection, tokenFor, unique, type TenantFixture, type UserFixture } from '../helpers/factories';
import type { RoleKey } from '../../src/context/roles';

let t: TestApp;
interface Side {
  tenant: TenantFixture;
  admin: UserFixture;
  member: UserFixture;
  adminToken: string;
  memberToken: string;
  boardIds: string[];
}
const sides: Record<'a' | 'b', Side> = {} as never;

async function makeSide(): Promise<Side> {
  const tenant = await createTenant();
  const admin = await createUser(tenant.id, { role: 'admin' });
  const member = await createUser(tenant.id, { role: 'member' });
  const side: Side = { tenant, admin, member, adminToken: tokenFor({ sub: admin.subject }), memberToken: tokenFor({ sub: member.subject }), boardIds: [] };
  for (const name of ['Roadmap', 'Launch']) {
    const r = await request(t.app).post('/api/boards').set('Authorization', `Bearer ${side.memberToken}`).set('X-Tenant', tenant.slug).send({ name }).expect(201);
    side.boardIds.push(r.body.board_id);
  }
  return side;
}

beforeAll(async () => {
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
  sides.a = await makeSide();
  sides.b = await makeSide();
});
afterAll(async () => {
  await t.close();
  await closeOwnerConnection();
});

const as = (s: Side, who: RoleKey = 'member') => ({
  get: (path: string) => request(t.app).get(path).set('Authorization', `Bearer ${who === 'admin' ? s.adminToken : s.memberToken}`).set('X-Tenant', s.tenant.slug),
  post: (path: string) => request(t.app).post(path).set('Authorization', `Bearer ${who === 'admin' ? s.adminToken : s.memberToken}`).set('X-Tenant', s.tenant.slug),
  del: (path: string) => request(t.app).delete(path).set('Authorization', `Bearer ${who === 'admin' ? s.adminToken : s.memberToken}`).set('X-Tenant', s.tenant.slug),
});

describe('boards', () => {
  it('each tenant lists only its own boards', async () => {
    for (const [me, them] of [[sides.a, sides.b], [sides.b, sides.a]] as const) {
      const r = await as(me).get('/api/boards').expect(200);
      const ids = r.body.boards.map((b: { board_id: string }) => b.board_id);
      expect(ids.sort()).toEqual([...me.boardIds].sort());
      for (const id of them.boardIds) expect(ids).not.toContain(id);
    }
  });

  it("another tenant's board id is 404, never visible", async () => {
    await as(sides.a).get(`/api/boards/${sides.a.boardIds[0]}`).expect(200);
    const r = await as(sides.a).get(`/api/boards/${sides.b.boardIds[0]}`).expect(404);
    expect(r.body.error).toBe('Not found');
    expect(JSON.stringify(r.body)).not.toContain('Roadmap');
  });

  it('a board created in A is owned by its creator and shows its generations', async () => {
    const r = await as(sides.a).get(`/api/boards/${sides.a.boardIds[0]}`).expect(200);
    expect(r.body).toMatchObject({ board_id: sides.a.boardIds[0], name: 'Roadmap', created_by: sides.a.member.id, generations: [] });
    const owners = await ownerConnection()('board_members').where({ tenant_id: sides.a.tenant.id, board_id: sides.a.boardIds[0] });
    expect(owners).toEqual([expect.objectContaining({ user_id: sides.a.member.id, role: 'owner' })]);
  });

  it('pages with limit and cursor', async () => {
    const first = await as(sides.a).get('/api/boards?limit=1').expect(200);
    expect(first.body.boards).toHaveLength(1);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const second = await as(sides.a).get(`/api/boards?limit=1&cursor=${first.body.next_cursor}`).expect(200);
    expect(second.body.boards).toHaveLength(1);
    expect(second.body.boards[0].board_id).not.toBe(first.body.boards[0].board_id);
    expect(second.body.next_cursor).toBeNull(); // two boards: the second page is the last
    await as(sides.a).get('/api/boards?cursor=garbage').expect(400);
  });

  it("concurrent requests of both tenants on a shared pool never see each other's rows", async () => {
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => {
        const s = i % 2 ? sides.a : sides.b;
        return as(s).get('/api/boards').then((r) => ({ s, ids: r.body.boards.map((b: { board_id: string }) => b.board_id) as string[] }));
      }),
    );
    for (const { s, ids } of results) expect(ids.sort()).toEqual([...s.boardIds].sort());
  });
});

describe('members', () => {
  it('lists only its own members', async () => {
    const r = await as(sides.a).get('/api/tenant/members').expect(200);
    const subjects = r.body.members.map((m: { subject: string }) => m.subject);
    expect(subjects.sort()).toEqual([sides.a.admin.subject, sides.a.member.subject].sort());
  });

  it('neither a member nor a tenant admin can add members directly (403 Forbidden); a platform admin can (201), once (409)', async () => {
    const subject = unique('new');
    const body = { subject, email: `${subject}@example.test`, role: 'member' };
    const denied = await as(sides.a).post('/api/tenant/members').send(body).expect(403);
    expect(denied.body.error).toBe('Forbidden');
    // Nobody becomes a member without consent: tenant admins invite (docs/tenants.md#membership).
    const deniedAdmin = await as(sides.a, 'admin').post('/api/tenant/members').send(body).expect(403);
    expect(deniedAdmin.body.error).toBe('Forbidden');
    const platform = () => request(t.app).post('/api/tenant/members').set('Authorization', `Bearer ${adminToken()}`).set('X-Tenant', sides.a.tenant.slug);
    const r = await platform().send(body).expect(201);
    expect(r.body).toMatchObject({ subject, role: 'member', email: body.email });
    await platform().send(body).expect(409);
    // the new member exists in A only
    const rows = await ownerConnection()('users').where({ subject });
    expect(rows.map((u) => u.tenant_id)).toEqual([sides.a.tenant.id]);
    // and can use A at once
    await request(t.app).get('/api/tenant').set('Authorization', `Bearer ${tokenFor({ sub: subject })}`).set('X-Tenant', sides.a.tenant.slug).expect(200);
  });

  it("A's admin cannot remove B's member by id (404) and B's member is untouched", async () => {
    const r = await as(sides.a, 'admin').del(`/api/tenant/members/${sides.b.member.id}`).expect(404);
    expect(r.body.error).toBe('Not found');
    expect(await ownerConnection()('users').where({ id: sides.b.member.id })).toHaveLength(1);
  });

  it('a removed member loses access with the next request', async () => {
    const user = await createUser(sides.b.tenant.id);
    const token = tokenFor({ sub: user.subject });
    await request(t.app).get('/api/tenant').set('Authorization', `Bearer ${token}`).set('X-Tenant', sides.b.tenant.slug).expect(200);
    await as(sides.b, 'admin').del(`/api/tenant/members/${user.id}`).expect(204);
    await request(t.app).get('/api/tenant').set('Authorization', `Bearer ${token}`).set('X-Tenant', sides.b.tenant.slug).expect(403);
  });

  it('the last admin cannot be removed (409); with two admins one can go', async () => {
    const tenant = await createTenant();
    const admin = await createUser(tenant.id, { role: 'admin' });
    const token = tokenFor({ sub: admin.subject });
    const del = (id: string) => request(t.app).delete(`/api/tenant/members/${id}`).set('Authorization', `Bearer ${token}`).set('X-Tenant', tenant.slug);
    const r = await del(admin.id).expect(409);
    expect(r.body.error).toBe('Conflict');
    const second = await createUser(tenant.id, { role: 'admin' });
    // concurrent removal of both admins: exactly one succeeds
    const secondToken = tokenFor({ sub: second.subject });
    const [x, y] = await Promise.all([
      del(second.id),
      request(t.app).delete(`/api/tenant/members/${admin.id}`).set('Authorization', `Bearer ${secondToken}`).set('X-Tenant', tenant.slug),
    ]);
    // The loser is 409 (last admin) when both overlap, or 403 when the winner finished first and
    // the loser is no longer a member at all; never two 204s.
    const statuses = [x.status, y.status].sort();
    expect(statuses[0]).toBe(204);
    expect([403, 409]).toContain(statuses[1]);
    const admins = await ownerConnection()('users').where({ tenant_id: tenant.id, role: 'admin' });
    expect(admins).toHaveLength(1);
  });

  it('a bad user id is a 400 Validation error', async () => {
    const r = await as(sides.a, 'admin').del('/api/tenant/members/not-a-uuid').expect(400);
    expect(r.body.error).toBe('Validation error');
  });
});

describe('cross-tenant attempts', () => {
  it("A's member naming B in X-Tenant is refused and sees nothing of B", async () => {
    for (const path of ['/api/tenant', '/api/boards', '/api/tenant/members', `/api/boards/${sides.b.boardIds[0]}`]) {
      const r = await request(t.app).get(path).set('Authorization', `Bearer ${sides.a.memberToken}`).set('X-Tenant', sides.b.tenant.slug);
      expect(r.status).toBe(403);
      expect(r.body.error).toBe('Access denied');
    }
    const post = await request(t.app).post('/api/boards').set('Authorization', `Bearer ${sides.a.memberToken}`).set('X-Tenant', sides.b.tenant.slug).send({ name: 'sneaky' });
    expect(post.status).toBe(403);
    expect(await ownerConnection()('boards').where({ name: 'sneaky' })).toEqual([]);
  });
});
