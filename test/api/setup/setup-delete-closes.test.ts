/**
 * Deleting a tenant closes its door first (docs/tenants.md#tenant-administration): the delete's
 * first committed step makes the tenant refuse everyone (as suspended) before any row goes, and
 * removal marks and directory state go last. The delete is held mid-way deterministically: a
 * second connection holds a lock on one of the tenant's invitations, so the `invitations` batch
 * waits (holding the tenant's entry lock); decisions sent then wait behind it and are decided
 * between that batch and the next, on what the delete has left (the members are still there).
 */
import type { Knex } from 'knex';
import request from 'supertest';
import { DELETE_ORDER } from '../../../src/domain/tenant-admin';
import { startTestApp, type TestApp } from '../../helpers/app';
import { adminToken, closeOwnerConnection, createUser, ownerConnection, tokenFor, unique } from '../../helpers/factories';

let t: TestApp;
const platform = `Bearer ${adminToken()}`;

beforeAll(async () => {
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_JWT_TENANT_ID_CLAIM: 'org_id' });
  while (t.services.decisionMemory?.facts?.state !== 'listening') await new Promise((r) => setTimeout(r, 20));
}, 60_000);
afterAll(async () => {
  await t?.close();
  await closeOwnerConnection();
});

const bearer = (sub: string, slug: string) => `Bearer ${tokenFor({ sub, email: `${sub}@closes.test`, claims: { email_verified: true, tenant: slug } })}`;
const decide = (auth: string, slug: string) => request(t.app).get('/api/tenant/decision').set('Authorization', auth).set('X-Tenant', slug);

/** Backends of this suite's database waiting for a lock while running a statement like `pattern`. */
async function waitingOn(pattern: string): Promise<number> {
  const r = await ownerConnection().raw<{ rows: Array<{ n: string }> }>(
    "select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ilike ?",
    [pattern],
  );
  return Number(r.rows[0]!.n);
}

async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((r) => setTimeout(r, 20));
}

describe('DELETE /api/setup/tenant/{id} closes the door first', () => {
  it('keeps removal marks and directory state to the end', () => {
    const last = DELETE_ORDER.slice(-6);
    expect([...last].sort()).toEqual(['directory_group_members', 'directory_groups', 'directory_settings', 'directory_users', 'member_removals', 'scim_tokens']);
    expect(DELETE_ORDER.indexOf('invitations')).toBeLessThan(DELETE_ORDER.indexOf('member_removals'));
    expect(DELETE_ORDER.indexOf('users')).toBeLessThan(DELETE_ORDER.indexOf('member_removals'));
  });

  it('admits nobody removed, deactivated by the directory, or still a member while the delete runs', async () => {
    const slug = unique('closes');
    const created = await request(t.app).post('/api/setup/tenant').set('Authorization', platform).send({ name: slug, slug }).expect(201);
    const id = created.body.tenant_id as string;
    const admin = await createUser(id, { role: 'admin' });
    const adminAuth = bearer(admin.subject, slug);

    // Removed by an admin: without the mark, a claim would provision them again.
    const removedSub = unique('removed');
    const removed = bearer(removedSub, slug);
    const removedId = (await request(t.app).get('/api/tenant').set('Authorization', removed).expect(200)).body.membership.user_id as string;
    await request(t.app).delete(`/api/tenant/members/${removedId}`).set('Authorization', adminAuth).expect(204);

    // Deactivated by the directory: a member whose directory user is inactive.
    const deactivated = await createUser(id, { role: 'member' });
    await ownerConnection()('directory_settings').insert({ tenant_id: id });
    await ownerConnection()('directory_users').insert({ tenant_id: id, user_name: deactivated.email, user_name_key: deactivated.email, user_id: deactivated.id, active: false });
    const deactivatedAuth = bearer(deactivated.subject, slug);

    // Still a member, answered from this instance's memory before the delete.
    const member = await createUser(id, { role: 'member' });
    const memberAuth = bearer(member.subject, slug);
    await decide(memberAuth, slug).expect(200);
    await decide(memberAuth, slug).expect(200);
    await decide(removed, slug).expect(403);
    await decide(deactivatedAuth, slug).expect(403);

    const [invitation] = (await ownerConnection()('invitations')
      .insert({ tenant_id: id, email: `${unique('inv')}@closes.test`, token_hash: unique('hash'), expires_at: new Date(Date.now() + 3_600_000), invited_by: admin.id })
      .returning('id')) as Array<{ id: string }>;

    const holder: Knex.Transaction = await ownerConnection().transaction();
    let released = false;
    try {
      await holder.raw('select 1 from invitations where tenant_id = ? and id = ? for key share', [id, invitation!.id]);
      const deletion = request(t.app).delete(`/api/setup/tenant/${id}`).set('Authorization', platform).then((r) => r);
      await until(async () => (await waitingOn('delete from invitations%')) === 1);

      const answers = new Map<string, number>();
      const asked = [
        ['removed', removed],
        ['deactivated', deactivatedAuth],
        ['member', memberAuth],
      ].map(([who, auth]) => decide(auth!, slug).then((r) => answers.set(who!, r.status)));
      // Every decision is answered already, or waits for the tenant behind the held batch.
      await until(async () => answers.size + (await waitingOn('%app_tenant_facts%')) === asked.length);

      await holder.commit();
      released = true;
      await Promise.all(asked);
      expect(Object.fromEntries(answers)).toEqual({ removed: 403, deactivated: 403, member: 403 });
      expect((await deletion).status).toBe(200);
    } finally {
      if (!released) await holder.rollback();
    }
    expect(await ownerConnection()('tenants').where({ id }).first()).toBeUndefined();
  });
});
