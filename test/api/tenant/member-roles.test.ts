/**
 * Member roles (PATCH /api/tenant/members/{user_id},
 * docs/tenants.md#invitations-and-membership-in-detail) and the last-admin rule, including two
 * admins demoting each other at the same moment; and no 500 when a member or a tenant is removed
 * while their requests are in flight.
 */
import request from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { adminToken, closeOwnerConnection, createTenant, createUser, ownerConnection, tokenFor, unique, type UserFixture } from '../../helpers/factories';
import { waitFor } from '../../helpers/wait';

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
    expect(r.body).toMatchObject({ error: 'Access denied', detail: expect.stringContaining("'tenant:members:write'") });
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

  it('two admins demoting and removing each other at the same time: 200/204/403/409, never 5xx; exactly one admin remains', async () => {
    // Several tenants per round, so the requests interleave in every order.
    const race = async (round: number, pair: number) => {
      const t = await createTenant();
      const a = await createUser(t.id, { role: 'admin' });
      const b = await createUser(t.id, { role: 'admin' });
      const [demoter, remover] = (round + pair) % 2 === 0 ? [a, b] : [b, a];
      const [demote, remove] = await Promise.all([
        patchRole(t.slug, demoter, remover.id, { role: 'member' }),
        request(app.app).delete(`/api/tenant/members/${demoter.id}`).set('Authorization', tokenOf(remover)).set('X-Tenant', t.slug),
      ]);
      return { statuses: [demote.status, remove.status], admins: (await adminsOf(t.id)).length };
    };
    for (let round = 0; round < 8; round += 1) {
      for (const r of await Promise.all([0, 1, 2].map((pair) => race(round, pair)))) {
        const [demote, remove] = r.statuses as [number, number];
        expect({ demote, remove, ok: [200, 403, 409].includes(demote) && [204, 403, 409].includes(remove) }).toMatchObject({ ok: true });
        // Exactly one of the two changes happened.
        expect({ demote, remove, changes: [demote === 200, remove === 204].filter(Boolean).length, admins: r.admins }).toMatchObject({ changes: 1, admins: 1 });
      }
    }
  });

  it('a removal and a demotion queued behind a third change of the admin rows: never 5xx, exactly one admin', async () => {
    // Another admin change (here a transaction of the test) holds the admin rows; B's removal
    // of A queues first, A's demotion of B second; then the third change ends. The queued
    // requests then interleave in the order that deadlocked when each took its locks its own way.
    for (const removedFirstInIdOrder of [true, false, true]) {
      const t = await createTenant();
      const pair = [await createUser(t.id, { role: 'admin' }), await createUser(t.id, { role: 'admin' })].sort((x, y) => (x.id < y.id ? -1 : 1));
      // A is removed by B and demotes B; with A first in id order this deadlocked into a 503.
      const [a, b] = removedFirstInIdOrder ? [pair[0]!, pair[1]!] : [pair[1]!, pair[0]!];
      const third = await ownerConnection().transaction();
      let answers: Array<{ status: number }> = [];
      try {
        const { rows } = (await third.raw('select pg_backend_pid() as pid')) as { rows: Array<{ pid: number }> };
        const holder = rows[0]!.pid;
        await third('users').where({ tenant_id: t.id, role: 'admin' }).orderBy('id').forNoKeyUpdate().select('id');
        /** Backends waiting, directly or through another waiter, on the holder. */
        const queued = async () => {
          const r = (await ownerConnection().raw('select pid, pg_blocking_pids(pid) as blockers from pg_stat_activity where cardinality(pg_blocking_pids(pid)) > 0')) as {
            rows: Array<{ pid: number; blockers: number[] }>;
          };
          const behind = new Set<number>([holder]);
          for (let grew = true; grew; ) {
            grew = false;
            for (const w of r.rows) {
              if (!behind.has(w.pid) && w.blockers.some((x) => behind.has(x))) {
                behind.add(w.pid);
                grew = true;
              }
            }
          }
          return behind.size - 1;
        };
        const until = async (n: number) => {
          while ((await queued()) < n) await new Promise((r) => setTimeout(r, 20));
        };
        const remove = request(app.app).delete(`/api/tenant/members/${a.id}`).set('Authorization', tokenOf(b)).set('X-Tenant', t.slug).then((r) => r);
        await until(1);
        const demote = patchRole(t.slug, a, b.id, { role: 'member' }).then((r) => r);
        await until(2);
        await third.commit();
        answers = await Promise.all([remove, demote]);
      } finally {
        if (!third.isCompleted()) await third.rollback();
      }
      const [removed, demoted] = answers.map((r) => r.status) as [number, number];
      expect({ removed, demoted, ok: [204, 403, 409].includes(removed) && [200, 403, 409].includes(demoted) }).toMatchObject({ ok: true });
      expect({ removed, demoted, changes: [removed === 204, demoted === 200].filter(Boolean).length }).toMatchObject({ changes: 1 });
      expect(await adminsOf(t.id)).toHaveLength(1);
    }
  });

  it('an admin leaving while the other removes them: one change happens, the other is refused, never 5xx', async () => {
    for (let round = 0; round < 6; round += 1) {
      const t = await createTenant();
      const a = await createUser(t.id, { role: 'admin' });
      const b = await createUser(t.id, { role: 'admin' });
      const [leave, remove] = await Promise.all([
        request(app.app).delete('/api/tenant/membership').set('Authorization', tokenOf(a)).set('X-Tenant', t.slug),
        request(app.app).delete(`/api/tenant/members/${a.id}`).set('Authorization', tokenOf(b)).set('X-Tenant', t.slug),
      ]);
      expect([200, 403, 404, 409]).toContain(leave.status);
      expect([204, 404, 409]).toContain(remove.status);
      expect([leave.status === 200, remove.status === 204].filter(Boolean)).toHaveLength(1);
      expect(await adminsOf(t.id)).toEqual([{ id: b.id }]);
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

describe('removals while requests are in flight', () => {
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
      // Once the writes are under way (a board created), however slow the machine.
      await waitFor('a board created before the delete', () => statuses.includes(201), { boundMs: 60_000 });
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
