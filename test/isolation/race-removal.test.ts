/**
 * Removals racing requests (docs/tenants.md#invitations-and-membership-in-detail): a member removed
 * while their `POST /api/boards` runs (also one whose identity provider keeps naming the tenant:
 * the removal sticks, docs/security.md#a-removal-sticks), and a tenant deleted while
 * claim-provisioned callers write to it. The foreign-key violations these races can cause
 * (`boards_tenant_id_created_by_fkey`, `users_tenant_id_fkey` inside app_tenant_facts, …) map to
 * documented 4xx answers in the error catalog: every request either completes or gets 403/404,
 * never a 500.
 */
import request from 'supertest';
import { startTestApp, type TestApp } from '../helpers/app';
import { adminToken, closeOwnerConnection, createTenant, createUser, ownerConnection, tokenFor, unique } from '../helpers/factories';
import { waitFor } from '../helpers/wait';

jest.setTimeout(180_000);

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' }, { poolMax: 8 });
});
afterAll(async () => {
  await t.close();
  await closeOwnerConnection();
});

/**
 * Runs `fn` repeatedly until `stop` resolves; collects the statuses (also into `seen`, shared by
 * all the callers, which the remover watches: it acts once the race is on and stops the callers
 * once the outcome it is about has been answered, however slow the machine is).
 */
async function hammer(fn: () => Promise<{ status: number; body: { error?: string } }>, stop: Promise<unknown>, seen: number[]): Promise<number[]> {
  let done = false;
  void stop.finally(() => (done = true));
  const statuses: number[] = [];
  while (!done) {
    const r = await fn();
    statuses.push(r.status);
    seen.push(r.status);
  }
  return statuses;
}

it('members removed while creating boards get 201 or 403, never 500', async () => {
  const tenant = await createTenant();
  const admin = await createUser(tenant.id, { role: 'admin' });
  const adminAuth = `Bearer ${tokenFor({ sub: admin.subject })}`;
  const members = await Promise.all(Array.from({ length: 8 }, () => createUser(tenant.id)));
  let release!: () => void;
  const stop = new Promise<void>((r) => (release = r));
  const seen: number[] = [];
  const writers = members.map((m) => {
    const auth = `Bearer ${tokenFor({ sub: m.subject })}`;
    return hammer(() => request(t.app).post('/api/boards').set('Authorization', auth).set('X-Tenant', tenant.slug).send({ name: unique('b') }), stop, seen);
  });
  const remover = (async () => {
    await waitFor('a board created before the removals', () => seen.includes(201), { boundMs: 60_000 });
    for (const m of members) {
      await new Promise((r) => setTimeout(r, 150));
      await request(t.app).delete(`/api/tenant/members/${m.id}`).set('Authorization', adminAuth).set('X-Tenant', tenant.slug).expect(204);
    }
    await waitFor('a removed member refused', () => seen.includes(403), { boundMs: 60_000 });
    release();
  })();
  const statuses = (await Promise.all([...writers, remover.then(() => [] as number[])])).flat();
  const unexpected = statuses.filter((s) => s !== 201 && s !== 403);
  expect(unexpected).toEqual([]);
  expect(statuses).toContain(201);
  expect(statuses).toContain(403);
  // Every board that exists belongs to a member that still exists, or to nobody (SET NULL).
  const orphans = await ownerConnection()('boards as b')
    .leftJoin('users as u', function () {
      this.on('u.tenant_id', 'b.tenant_id').andOn('u.id', 'b.created_by');
    })
    .where('b.tenant_id', tenant.id)
    .whereNotNull('b.created_by')
    .whereNull('u.id')
    .count<Array<{ count: string }>>('* as count');
  expect(Number(orphans[0]!.count)).toBe(0);
});

it('members removed while their claim-provisioned requests keep coming are not made members again', async () => {
  const slug = unique('sticky');
  const created = await request(t.app).post('/api/setup/tenant').set('Authorization', `Bearer ${adminToken()}`).send({ name: slug, slug }).expect(201);
  const tenantId = created.body.tenant_id as string;
  const admin = await createUser(tenantId, { role: 'admin' });
  const adminAuth = `Bearer ${tokenFor({ sub: admin.subject })}`;
  // Each provisioned by its tenant claim (the policy trusts it), then removed mid-traffic.
  const people = Array.from({ length: 6 }, () => ({ sub: unique('claimed') }));
  const ids = new Map<string, string>();
  for (const p of people) {
    const r = await request(t.app).get('/api/tenant').set('Authorization', `Bearer ${tokenFor({ sub: p.sub, claims: { tenant: slug } })}`).expect(200);
    ids.set(p.sub, r.body.membership.user_id as string);
  }
  let release!: () => void;
  const stop = new Promise<void>((r) => (release = r));
  const seen: number[] = [];
  const writers = people.map((p) => {
    const auth = `Bearer ${tokenFor({ sub: p.sub, claims: { tenant: slug } })}`;
    return hammer(() => request(t.app).post('/api/boards').set('Authorization', auth).send({ name: unique('b') }), stop, seen);
  });
  const remover = (async () => {
    await waitFor('a board created before the removals', () => seen.includes(201), { boundMs: 60_000 });
    for (const p of people) {
      await new Promise((r) => setTimeout(r, 150));
      await request(t.app).delete(`/api/tenant/members/${ids.get(p.sub)}`).set('Authorization', adminAuth).set('X-Tenant', slug).expect(204);
    }
    await waitFor('a removed member refused', () => seen.includes(403), { boundMs: 60_000 });
    // A few more rounds after the refusal: a removed member must not come back meanwhile.
    const after = seen.length;
    await waitFor('more requests after the first refusal', () => seen.length >= after + people.length, { boundMs: 60_000 });
    release();
  })();
  const statuses = (await Promise.all([...writers, remover.then(() => [] as number[])])).flat();
  expect(statuses.filter((s) => s !== 201 && s !== 403)).toEqual([]);
  expect(statuses).toContain(403);
  // Nobody removed came back with a fresh membership.
  const left = await ownerConnection()('users').where({ tenant_id: tenantId }).whereIn('subject', people.map((p) => p.sub)).select('subject');
  expect(left).toEqual([]);
});

it('a tenant deleted while claim-provisioned callers write: 200/201 or 403/404, never 500', async () => {
  const slug = unique('doomed');
  const admin = `Bearer ${adminToken()}`;
  const created = await request(t.app).post('/api/setup/tenant').set('Authorization', admin).send({ name: slug, slug, include_sample_data: true }).expect(201);
  const tenantId = created.body.tenant_id as string;
  let release!: () => void;
  const stop = new Promise<void>((r) => (release = r));
  // Each round a new subject: the first use provisions it (an insert into users), then it writes.
  const seen: number[] = [];
  const writers = Array.from({ length: 8 }, () =>
    hammer(async () => {
      const auth = `Bearer ${tokenFor({ sub: unique('claimed'), claims: { tenant: slug } })}`;
      const r = await request(t.app).post('/api/boards').set('Authorization', auth).send({ name: unique('b') });
      return r;
    }, stop, seen),
  );
  const deleter = (async () => {
    await waitFor('boards created before the delete', () => seen.filter((s) => s === 201).length >= 8, { boundMs: 60_000 });
    await request(t.app).delete(`/api/setup/tenant/${tenantId}`).set('Authorization', admin).expect(200);
    await waitFor('a caller refused after the delete', () => seen.includes(404), { boundMs: 60_000 });
    release();
  })();
  const statuses = (await Promise.all([...writers, deleter.then(() => [] as number[])])).flat();
  const unexpected = statuses.filter((s) => ![201, 403, 404].includes(s));
  expect(unexpected).toEqual([]);
  expect(statuses).toContain(201);
  expect(statuses).toContain(404);
  // Nothing of the tenant remains.
  for (const table of ['tenants', 'users', 'boards']) {
    const col = table === 'tenants' ? 'id' : 'tenant_id';
    const n = await ownerConnection()(table).where(col, tenantId).count<Array<{ count: string }>>('* as count');
    expect([table, Number(n[0]!.count)]).toEqual([table, 0]);
  }
});
