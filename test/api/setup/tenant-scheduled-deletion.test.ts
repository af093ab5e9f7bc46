/**
 * Scheduled deletion (docs/operations.md#tenant-lifecycle): once `delete_after` has passed,
 * the deletion runs exactly once even when two instances (each with its own pool) race for it,
 * with `tenant.deleted` whose actor is the schedule; a deletion not yet due, or cancelled, is not run.
 */
import request from 'supertest';
import { runDueDeletions } from '../../../src/domain/tenant-lifecycle';
import { runScheduledDeletions } from '../../../src/workers/scheduled-deletion';
import { startTestApp, type TestApp } from '../../helpers/app';
import { adminToken, closeOwnerConnection, createTenant, createUser, ownerConnection } from '../../helpers/factories';

let one: TestApp;
let two: TestApp;
const ADMIN = adminToken();
beforeAll(async () => {
  one = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
  two = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
});
afterAll(async () => {
  await Promise.all([one, two].map((a) => a?.close()));
  await closeOwnerConnection();
});

/** A tenant with a few rows, scheduled for deletion through the API. */
async function scheduled(graceDays = 1) {
  const tenant = await createTenant();
  await createUser(tenant.id, { role: 'admin' });
  await ownerConnection()('boards').insert([{ tenant_id: tenant.id, name: 'a' }, { tenant_id: tenant.id, name: 'b' }]);
  await request(one.app).post(`/api/setup/tenant/${tenant.id}/scheduled-deletion`).set('Authorization', `Bearer ${ADMIN}`).send({ grace_days: graceDays }).expect(200);
  return tenant;
}

/** Moves the deletion time into the past, as if the grace period had run out. */
const makeDue = (id: string) => ownerConnection()('tenants').where({ id }).update({ delete_after: ownerConnection().raw("now() - interval '1 second'") });

const deletedEvents = (id: string) => ownerConnection()('events').where({ tenant_id: id, action: 'tenant.deleted' }).select('actor_subject', 'actor_issuer', 'data');

it('two instances racing: the due tenant is deleted exactly once, with the schedule as actor', async () => {
  const tenant = await scheduled();
  await makeDue(tenant.id);
  // Both instances start at once, so their claims overlap.
  const results = await Promise.all([runDueDeletions(one.db, { multiTenantMode: true, batchSize: 1 }), runDueDeletions(two.db, { multiTenantMode: true, batchSize: 1 })]);
  const deleters = results.filter((r) => r.deleted.includes(tenant.id));
  expect(deleters).toHaveLength(1);
  expect(await ownerConnection()('tenants').where({ id: tenant.id })).toEqual([]);
  expect(await ownerConnection()('boards').where({ tenant_id: tenant.id })).toEqual([]);
  const events = await deletedEvents(tenant.id);
  expect(events).toHaveLength(1);
  expect(events[0]).toMatchObject({ actor_subject: 'scheduled-deletion', actor_issuer: null });
  expect(events[0].data.rows).toMatchObject({ users: 1, boards: 2 });
  // One deletion ran, not two that raced to the end.
  expect(await ownerConnection()('events').where({ tenant_id: tenant.id, action: 'tenant.deletion_started' })).toHaveLength(1);
});

it('not yet due, or cancelled: not deleted', async () => {
  const notDue = await scheduled(30);
  const cancelled = await scheduled();
  await makeDue(cancelled.id);
  await request(one.app).delete(`/api/setup/tenant/${cancelled.id}/scheduled-deletion`).set('Authorization', `Bearer ${ADMIN}`).expect(200);
  await runScheduledDeletions({ db: two.db, multiTenantMode: true, logger: two.services.logger });
  for (const t of [notDue, cancelled]) {
    expect((await ownerConnection()('tenants').where({ id: t.id })).length).toBe(1);
    expect(await deletedEvents(t.id)).toEqual([]);
  }
  expect((await ownerConnection()('tenants').where({ id: cancelled.id }).first('status')).status).toBe('active');
});

it('a cancel while the deletion holds its lock is refused (409), and the deletion goes on', async () => {
  const tenant = await scheduled();
  await makeDue(tenant.id);
  // The worker's lock, taken by hand on another connection, stands for a deletion in progress.
  const held = await ownerConnection().transaction();
  try {
    await held.raw("select pg_advisory_xact_lock(hashtextextended('tenant-scheduled-deletion:' || ?, 0))", [tenant.id]);
    const r = await request(one.app).delete(`/api/setup/tenant/${tenant.id}/scheduled-deletion`).set('Authorization', `Bearer ${ADMIN}`).expect(409);
    expect(r.body.detail).toContain('running');
    const skipped = await runDueDeletions(two.db, { multiTenantMode: true });
    expect(skipped.deleted).not.toContain(tenant.id);
  } finally {
    await held.rollback();
  }
  expect((await runDueDeletions(two.db, { multiTenantMode: true })).deleted).toContain(tenant.id);
  expect(await deletedEvents(tenant.id)).toHaveLength(1);
});
