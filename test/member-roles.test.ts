/**
 * Member roles (PRODUCT.md §6: PATCH /api/tenant/members/{user_id}) and the last-admin rule,
 * including two admins demoting each other at the same moment; and (issue 17 item 3) no 500
 * when a member or a tenant is removed while their requests are in flight.
 */
import request from 'supertest';
import { startTestApp, type TestApp } from './helpers/app';
import { adminToken, closeOwnerConnection, createTenant, createUser, ownerConnection, tokenFor, unique, type UserFixture } from './factories';

let app: TestApp;
let multi: TestApp;

beforeAll(async () => {
  app = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' }, { poolMax: 10 });
  multi = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' }, { poolMax: 10 });
});
afterAll(async () => {
  await Promise.all([app, multi].map((a) => a?.close()));
  await closeOwnerConnection();
});

const tokenOf = (u: UserFixture) => `Bearer ${tokenFor({ sub: u.subject, email: u.email })}`;

function patchRole(slug: string, actor: UserFixture | string, userId: string, body: unknown) {
  return request(app.app)
    .patch(`/api/tenant/members/${userId}`)
    .set('Authorization', typeof actor === 'string' ? actor : tokenOf(actor))
    .set('X-Tenant', slug)
    .send(body as object);
}

const roleOf = async (u: UserFixture) => ((await ownerConnection()('users').where({ tenant_id: u.tenantId, id: u.id }).first('role')) as { role: string }).role;
const adminsOf = async (tenantId: string) => ownerConnection()('users').where({ tenant_id: tenantId, role: 'admin' }).select('id');

describe('PATCH /api/tenant/members/{user_id} (updateMemberRole)', () => {
  it('promotes and demotes; the same role is a no-op 200', async () => {
    const t = await createTenant();
    const admin = await createUser(t.id, { role: 'admin' });
    const m = await createUser(t.id, { role: 'member' });
    const up = await patchRole(t.slug, admin, m.id, { role: 'admin' }).expect(200);
    expect(up.body).toMatchObject({ user_id: m.id, role: 'admin', subject: m.subject });
    expect(await roleOf(m)).toBe('admin');
    await patchRole(t.slug, admin, m.id, { role: 'admin' }).expect(200);
    const down = await patchRole(t.slug, m, admin.id, { role: 'member' }).expect(200);
    expect(down.body.role).toBe('member');
    expect(await roleOf(admin)).toBe('member');
  });

  it('demoting the last admin is 409 and changes nothing', async () => {
    const t = await createTenant();
    const admin = await createUser(t.id, { role: 'admin' });
    const r = await patchRole(t.slug, admin, admin.id, { role: 'member' }).expect(409);
    expect(r.body).toMatchObject({ error: 'Conflict' });
    expect(r.body.detail).toMatch(/last admin/);
    expect(await roleOf(admin)).toBe('admin');
  });

  it('a platform admin who is not a member may change roles, but not demote the last admin', async () => {
    const t = await createTenant();
    const admin = await createUser(t.id, { role: 'admin' });
    const m = await createUser(t.id);
    const platform = `Bearer ${adminToken()}`;
    await patchRole(t.slug, platform, admin.id, { role: 'member' }).expect(409);
    await patchRole(t.slug, platform, m.id, { role: 'admin' }).expect(200);
    await patchRole(t.slug, platform, admin.id, { role: 'member' }).expect(200);
    expect(await adminsOf(t.id)).toEqual([{ id: m.id }]);
  });

  it('a platform admin who is also a plain member of the tenant may change roles and remove members', async () => {
    const t = await createTenant();
    const admin = await createUser(t.id, { role: 'admin' });
    const m = await createUser(t.id);
    const platformMember = await createUser(t.id, { role: 'member' });
    const platform = `Bearer ${tokenFor({ sub: platformMember.subject, email: platformMember.email, admin: true })}`;
    await patchRole(t.slug, platform, m.id, { role: 'admin' }).expect(200);
    await patchRole(t.slug, platform, admin.id, { role: 'member' }).expect(200);
    await request(app.app).delete(`/api/tenant/members/${admin.id}`).set('Authorization', platform).set('X-Tenant', t.slug).expect(204);
    expect(await adminsOf(t.id)).toEqual([{ id: m.id }]);
    expect(await roleOf(platformMember)).toBe('member');
  });

  it('refuses members (403), unknown users (404), bad bodies (400), other tenants’ users (404)', async () => {
    const t = await createTenant();
    const admin = await createUser(t.id, { role: 'admin' });
    const m = await createUser(t.id);
    const r = await patchRole(t.slug, m, m.id, { role: 'admin' }).expect(403);
    expect(r.body.error).toBe('Forbidden');
    expect(await roleOf(m)).toBe('member');
    const nf = await patchRole(t.slug, admin, '00000000-0000-4000-8000-000000000000', { role: 'admin' }).expect(404);
    expect(nf.body.error).toBe('Not found');
    for (const body of [{}, { role: 'owner' }, { role: 'admin', extra: true }]) {
      expect((await patchRole(t.slug, admin, m.id, body).expect(400)).body.error).toBe('Validation error');
    }
    const other = await createTenant();
    const stranger = await createUser(other.id);
    await patchRole(t.slug, admin, stranger.id, { role: 'admin' }).expect(404);
    expect(await roleOf(stranger)).toBe('member');
  });

  it('two admins demoting each other at the same time leave exactly one admin', async () => {
    for (let round = 0; round < 8; round += 1) {
      const t = await createTenant();
      const a = await createUser(t.id, { role: 'admin' });
      const b = await createUser(t.id, { role: 'admin' });
      const [ra, rb] = await Promise.all([patchRole(t.slug, a, b.id, { role: 'member' }), patchRole(t.slug, b, a.id, { role: 'member' })]);
      const statuses = [ra.status, rb.status].sort();
      expect(statuses[0]).toBe(200);
      expect([403, 409]).toContain(statuses[1]);
      expect(await adminsOf(t.id)).toHaveLength(1);
    }
  });

  it('two admins removing each other at the same time: one 204, the other refused, exactly one admin remains', async () => {
    for (let round = 0; round < 4; round += 1) {
      const t = await createTenant();
      const a = await createUser(t.id, { role: 'admin' });
      const b = await createUser(t.id, { role: 'admin' });
      const del = (actor: UserFixture, target: UserFixture) =>
        request(app.app).delete(`/api/tenant/members/${target.id}`).set('Authorization', tokenOf(actor)).set('X-Tenant', t.slug);
      const [ra, rb] = await Promise.all([del(a, b), del(b, a)]);
      const [first, second] = [ra.status, rb.status].sort();
      expect(first).toBe(204);
      // 409 when both were in flight together; 403 if one finished before the other began.
      expect([403, 409]).toContain(second);
      expect(await adminsOf(t.id)).toHaveLength(1);
    }
  });

  it('removing the last admin names the operation that makes another admin', async () => {
    const t = await createTenant();
    const admin = await createUser(t.id, { role: 'admin' });
    const r = await request(app.app).delete(`/api/tenant/members/${admin.id}`).set('Authorization', tokenOf(admin)).set('X-Tenant', t.slug).expect(409);
    expect(r.body.detail).toContain('PATCH /api/tenant/members/{user_id}');
    expect(r.body.detail).toContain('updateMemberRole');
  });
});

describe('removals while requests are in flight (issue 17 item 3)', () => {
  const allowed = new Set([201, 403, 404, 409]);

  it('removing a member during their POST /api/boards: every answer is 201 or 403, never 500', async () => {
    for (let round = 0; round < 3; round += 1) {
      const t = await createTenant();
      const admin = await createUser(t.id, { role: 'admin' });
      const m = await createUser(t.id);
      const details: string[] = [];
      const statuses: number[] = [];
      let removed = false;
      const writer = async () => {
        for (let i = 0; i < 25; i += 1) {
          const r = await request(multi.app).post('/api/boards').set('Authorization', tokenOf(m)).set('X-Tenant', t.slug).send({ name: `b${i}` });
          statuses.push(r.status);
          if (r.status >= 400) details.push(r.body.detail as string);
          if (removed && r.status === 403) return;
        }
      };
      const remover = async () => {
        await new Promise((r) => setTimeout(r, 30 * (round + 1)));
        await request(multi.app).delete(`/api/tenant/members/${m.id}`).set('Authorization', tokenOf(admin)).set('X-Tenant', t.slug).expect(204);
        removed = true;
      };
      await Promise.all([writer(), writer(), writer(), writer(), remover()]);
      const bad = statuses.filter((s) => !allowed.has(s));
      expect(bad).toEqual([]);
      // Refused at the door (no membership), never by a foreign key failing mid-request: the
      // locks, not the error catalog's mapping of 23503, keep the answers right.
      expect(details.filter((d) => /while (it|the request) ran/.test(d))).toEqual([]);
      expect(await ownerConnection()('users').where({ tenant_id: t.id, id: m.id })).toHaveLength(0);
      // Boards created before the removal remain, with created_by cleared.
      const boards = await ownerConnection()('boards').where({ tenant_id: t.id }).select('created_by');
      expect(boards.length).toBe(statuses.filter((s) => s === 201).length);
      expect(boards.every((b: { created_by: string | null }) => b.created_by === null)).toBe(true);
    }
  });

  it('deleting a tenant while claim-provisioned users write: every answer is 2xx, 403 or 404, never 500', async () => {
    const slug = unique('doomed');
    const created = await request(multi.app).post('/api/setup/tenant').set('Authorization', `Bearer ${adminToken()}`).send({ name: 'Doomed', slug }).expect(201);
    const statuses: number[] = [];
    const details: string[] = [];
    let deleted = false;
    const writer = async () => {
      const token = `Bearer ${tokenFor({ claims: { tenant: slug } })}`;
      for (let i = 0; i < 30; i += 1) {
        const r = await request(multi.app).post('/api/boards').set('Authorization', token).send({ name: `w${i}` });
        statuses.push(r.status);
        if (r.status >= 400) details.push(r.body.detail as string);
        if (deleted && r.status === 404) return;
      }
    };
    const deleter = async () => {
      await new Promise((r) => setTimeout(r, 100));
      await request(multi.app).delete(`/api/setup/tenant/${created.body.tenant_id}`).set('Authorization', `Bearer ${adminToken()}`).expect(200);
      deleted = true;
    };
    await Promise.all([...Array.from({ length: 8 }, writer), deleter()]);
    expect(statuses.filter((s) => !allowed.has(s))).toEqual([]);
    expect(details.filter((d) => /while (it|the request) ran/.test(d))).toEqual([]);
    expect(statuses).toContain(201);
    expect(await ownerConnection()('tenants').where({ id: created.body.tenant_id })).toHaveLength(0);
    for (const table of ['users', 'boards', 'board_members']) {
      expect(await ownerConnection()(table).where({ tenant_id: created.body.tenant_id })).toHaveLength(0);
    }
  });
});
