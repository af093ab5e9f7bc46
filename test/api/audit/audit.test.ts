/**
 * The isolation audit: every check is proven by planting its violation as the superuser (foreign
 * keys bypassed with session_replication_role = replica) and seeing it reported with the right
 * table and row id; a clean tenant reports none. Planted rows live only in tenants this file
 * creates (removed in afterAll); database-configuration plants happen inside a transaction that
 * is rolled back, so concurrent test files never see them.
 */
import crypto from 'node:crypto';
import request from 'supertest';
import type { AuditReport, AuditViolation } from '../../../generated/types.gen';
import { READER_ROLE } from '../../../src/db/schema';
import { auditTenants } from '../../../src/domain/audit';
import { createTenantWithSampleData } from '../../../src/domain/tenant-admin';
import { startTestApp, type TestApp } from '../../helpers/app';
import { adminToken, closeOwnerConnection, createTenant, createUser, ownerConnection, tokenFor, unique, type TenantFixture } from '../../helpers/factories';

let t: TestApp;
let admin: string;
let clean: { id: string; slug: string };
let victim: TenantFixture;
let bad: TenantFixture;
const ghostTenant = crypto.randomUUID();
const planted: Record<string, string> = {};

beforeAll(async () => {
  t = await startTestApp();
  admin = adminToken();
  const owner = ownerConnection();
  const slug = unique('audit-clean');
  clean = (
    await owner.transaction((trx) =>
      createTenantWithSampleData(trx, { name: slug, slug, includeSampleData: true, admin: { issuer: 'iss', subject: unique('s'), email: null, displayName: null } }),
    )
  ).tenant;

  victim = await createTenant({ slug: unique('audit-victim') });
  bad = await createTenant({ slug: unique('audit-bad') });
  const victimUser = await createUser(victim.id);
  const badUser = await createUser(bad.id);
  planted.victimUser = victimUser.id;
  planted.badUser = badUser.id;
  const [victimBoard] = await owner('boards').insert({ tenant_id: victim.id, name: 'victim board' }).returning('id');
  const [ownBoard] = await owner('boards').insert({ tenant_id: bad.id, name: 'own board' }).returning('id');
  planted.victimBoard = victimBoard.id;
  planted.ownBoard = ownBoard.id;
  // Consistent credit history, then one balance that does not follow from it.
  await owner('credit_transactions').insert([
    { tenant_id: bad.id, kind: 'grant', amount: 100, balance_after: 100 },
    { tenant_id: bad.id, kind: 'usage', amount: -30, balance_after: 70 },
  ]);
  const [wrongBalance] = await owner('credit_transactions').insert({ tenant_id: bad.id, kind: 'usage', amount: -10, balance_after: 50 }).returning('id');
  await owner('credit_transactions').insert({ tenant_id: bad.id, kind: 'grant', amount: 10, balance_after: 60 });
  planted.wrongBalance = wrongBalance.id;

  // Rows the composite foreign keys would refuse.
  await owner.transaction(async (trx) => {
    await trx.raw('set local session_replication_role = replica');
    const [b] = await trx('boards').insert({ tenant_id: bad.id, name: 'made by an outsider', created_by: victimUser.id }).returning('id');
    planted.boardByOutsider = b.id;
    await trx('board_members').insert({ tenant_id: bad.id, board_id: ownBoard.id, user_id: victimUser.id, role: 'editor' });
    await trx('board_members').insert({ tenant_id: bad.id, board_id: victimBoard.id, user_id: badUser.id, role: 'viewer' });
    const [c] = await trx('credit_transactions').insert({ tenant_id: bad.id, user_id: victimUser.id, kind: 'grant', amount: 0, balance_after: 60 }).returning('id');
    planted.creditForOutsider = c.id;
    const [g1] = await trx('generations').insert({ tenant_id: bad.id, board_id: victimBoard.id, prompt: 'on a foreign board' }).returning('id');
    const [g2] = await trx('generations').insert({ tenant_id: bad.id, board_id: crypto.randomUUID(), prompt: 'on a deleted board' }).returning('id');
    planted.genForeignBoard = g1.id;
    planted.genMissingBoard = g2.id;
    const [inv] = await trx('invitations')
      .insert({ tenant_id: bad.id, email: 'x@audit.test', token_hash: unique('h'), expires_at: new Date(Date.now() + 3_600_000), invited_by: victimUser.id })
      .returning('id');
    planted.invitationByOutsider = inv.id;
    const [p] = await trx('provider_configs').insert({ tenant_id: ghostTenant, provider: 'ghost' }).returning('id');
    planted.ghostProvider = p.id;
  });
});

afterAll(async () => {
  const owner = ownerConnection();
  await owner('provider_configs').where({ tenant_id: ghostTenant }).del();
  // Deleting the tenants cascades to every planted row of theirs.
  await owner('tenants').whereIn('id', [bad.id, victim.id, clean.id]).del();
  await closeOwnerConnection();
  await t.close();
});

async function audit(query: Record<string, string> = {}): Promise<AuditReport> {
  const res = await request(t.app).get('/api/setup/audit').query(query).set('Authorization', `Bearer ${admin}`);
  expect(res.status).toBe(200);
  return res.body as AuditReport;
}

const pick = (vs: AuditViolation[], check: AuditViolation['check'], table: string) =>
  vs.filter((v) => v.check === check && v.table === table).map((v) => v.row_id).sort();

describe('a clean tenant', () => {
  it('reports no violations and counts its rows', async () => {
    const report = await audit({ tenant_slug: clean.slug });
    expect(report.tenants).toHaveLength(1);
    const [tenant] = report.tenants;
    expect(tenant).toMatchObject({ tenant_id: clean.id, slug: clean.slug, violations: [] });
    const counts = await Promise.all(
      ['users', 'boards', 'board_members', 'generations', 'provider_configs', 'credit_transactions', 'invitations', 'tenant_roles', 'tenant_role_permissions', 'member_removals', 'scim_tokens', 'directory_settings', 'directory_users', 'directory_groups', 'directory_group_members'].map(async (tbl) => {
        const [{ n }] = await ownerConnection()(tbl).where({ tenant_id: clean.id }).count({ n: '*' });
        return [tbl, Number(n)] as const;
      }),
    );
    expect(tenant!.statistics).toEqual(Object.fromEntries(counts));
    expect(tenant!.statistics.generations).toBeGreaterThan(0);
    // The real database configuration is sound: no global finding about RLS or roles.
    expect(report.global_violations).toEqual([]);
    expect(report.total_violations).toBe(0);
    expect(report.truncated).toBe(false);
  });
});

describe('planted violations', () => {
  let report: AuditReport;
  let vs: AuditViolation[];
  beforeAll(async () => {
    report = await audit({ tenant_slug: bad.slug });
    expect(report.tenants.map((x) => x.tenant_id)).toEqual([bad.id]);
    vs = report.tenants[0]!.violations;
  });

  it('cross_tenant_user_access: rows that reference a user of another tenant', () => {
    expect(pick(vs, 'cross_tenant_user_access', 'boards')).toEqual([planted.boardByOutsider]);
    expect(pick(vs, 'cross_tenant_user_access', 'board_members')).toEqual([`${planted.ownBoard}:${planted.victimUser}`]);
    expect(pick(vs, 'cross_tenant_user_access', 'credit_transactions')).toEqual([planted.creditForOutsider]);
    expect(pick(vs, 'cross_tenant_user_access', 'invitations')).toEqual([planted.invitationByOutsider]);
    const msg = vs.find((v) => v.check === 'cross_tenant_user_access' && v.table === 'boards')!.message;
    expect(msg).toContain(victim.slug);
    expect(msg).toContain(planted.victimUser);
  });

  it('orphaned_record: parents in another tenant or gone', () => {
    expect(pick(vs, 'orphaned_record', 'generations')).toEqual([planted.genForeignBoard, planted.genMissingBoard].sort());
    expect(pick(vs, 'orphaned_record', 'boards')).toEqual([planted.boardByOutsider]);
    expect(pick(vs, 'orphaned_record', 'credit_transactions')).toEqual([planted.creditForOutsider]);
    expect(pick(vs, 'orphaned_record', 'invitations')).toEqual([planted.invitationByOutsider]);
    expect(pick(vs, 'orphaned_record', 'board_members')).toEqual([`${planted.ownBoard}:${planted.victimUser}`, `${planted.victimBoard}:${planted.badUser}`].sort());
    const gone = vs.find((v) => v.row_id === planted.genMissingBoard)!;
    expect(gone.message).toMatch(/does not exist/);
    const foreign = vs.find((v) => v.row_id === planted.genForeignBoard)!;
    expect(foreign.message).toContain(victim.slug);
  });

  it('orphaned_record: rows whose tenant does not exist are global (all-tenant audit only)', async () => {
    const all = await audit();
    const ghost = all.global_violations.filter((v) => v.row_id === planted.ghostProvider);
    expect(ghost).toEqual([{ check: 'orphaned_record', table: 'provider_configs', row_id: planted.ghostProvider, message: expect.stringContaining(ghostTenant) }]);
    expect(all.tenants.find((x) => x.tenant_id === bad.id)!.violations).toEqual(vs);
    expect(all.tenants.find((x) => x.tenant_id === clean.id)!.violations).toEqual([]);
    expect(report.global_violations.some((v) => v.row_id === planted.ghostProvider)).toBe(false);
  });

  it('board_membership_violation: members who are not users of the board\'s tenant', () => {
    expect(pick(vs, 'board_membership_violation', 'board_members')).toEqual([`${planted.ownBoard}:${planted.victimUser}`, `${planted.victimBoard}:${planted.badUser}`].sort());
  });

  it('data_consistency: a balance that does not follow from the transactions, reported once', () => {
    // The wrong balance shifts the running sum for every later row by the same amount; the
    // run is reported at its first transaction.
    expect(pick(vs, 'data_consistency', 'credit_transactions')).toEqual([planted.wrongBalance]);
    expect(vs.find((v) => v.row_id === planted.wrongBalance)!.message).toMatch(/balance_after 50, but the amounts up to it sum to 60 \(off by -10\)/);
  });

  it('counts every violation and nothing in the victim tenant', async () => {
    expect(report.total_violations).toBe(vs.length);
    expect(vs).toHaveLength(4 + 7 + 2 + 1);
    const v = await audit({ tenant_slug: victim.slug });
    expect(v.tenants[0]!.violations).toEqual([]);
  });
});

describe('database configuration (planted in a rolled-back transaction)', () => {
  const ROLLBACK = new Error('rollback');
  async function inRolledBack(fn: (trx: import('knex').Knex.Transaction) => Promise<void>): Promise<void> {
    await expect(
      ownerConnection().transaction(async (trx) => {
        await fn(trx);
        throw ROLLBACK;
      }),
    ).rejects.toBe(ROLLBACK);
  }

  async function withTablesLocked(tables: string[], fn: (trx: import('knex').Knex.Transaction) => Promise<void>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const outcome = await ownerConnection()
        .transaction(async (trx) => {
          await trx.raw(`lock table ${tables.join(', ')} in access exclusive mode nowait`);
          await fn(trx);
          throw ROLLBACK;
        })
        .then(
          () => new Error('the transaction committed'),
          (err: unknown) => err,
        );
      if (outcome === ROLLBACK) return;
      // 55P03 lock_not_available: another suite holds one of the tables; try again shortly.
      if ((outcome as { code?: string }).code !== '55P03' || attempt >= 400) throw outcome;
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  it('a tenant table without forced or enabled row-level security is a global violation', async () => {
    // Other suites write these tables concurrently. Waiting for their locks while holding ours
    // could deadlock with one of them (and the deadlock detector might abort *their*
    // transaction), so take both locks up front without waiting, and retry while busy.
    await withTablesLocked(['provider_configs', 'generations'], async (trx) => {
      await trx.raw('alter table provider_configs no force row level security');
      await trx.raw('alter table generations disable row level security');
      await trx.raw(`set local role ${READER_ROLE}`);
      const result = await auditTenants(trx, { tenantId: clean.id });
      const rls = result.globalViolations.filter((v) => v.table === 'provider_configs' || v.table === 'generations');
      expect(rls).toEqual([
        { check: 'data_consistency', table: 'generations', rowId: null, message: expect.stringContaining('row-level security is not enabled') },
        { check: 'data_consistency', table: 'provider_configs', rowId: null, message: expect.stringContaining('row-level security is not forced') },
      ]);
    });
    // Restored: the committed configuration reports nothing.
    const report = await audit({ tenant_slug: clean.slug });
    expect(report.global_violations).toEqual([]);
  });

  it('a runtime role that can bypass row-level security is a global violation', async () => {
    const direct = unique('audit_probe').replace(/-/g, '_');
    const viaMember = unique('audit_probe').replace(/-/g, '_');
    const bypasser = unique('audit_probe').replace(/-/g, '_');
    await inRolledBack(async (trx) => {
      await trx.raw(`create role ${direct} nologin bypassrls`);
      await trx.raw(`create role ${bypasser} nologin bypassrls`);
      await trx.raw(`create role ${viaMember} nologin nobypassrls`);
      await trx.raw(`grant ${bypasser} to ${viaMember}`);
      await trx.raw(`set local role ${READER_ROLE}`);
      const one = await auditTenants(trx, { tenantId: clean.id, runtimeRole: direct });
      expect(one.globalViolations).toEqual([{ check: 'data_consistency', table: 'pg_roles', rowId: direct, message: expect.stringContaining('has BYPASSRLS') }]);
      const two = await auditTenants(trx, { tenantId: clean.id, runtimeRole: viaMember });
      expect(two.globalViolations).toEqual([{ check: 'data_consistency', table: 'pg_roles', rowId: bypasser, message: expect.stringContaining('SET ROLE') }]);
    });
  });
});

describe('the report', () => {
  it('caps each check and says so', async () => {
    await ownerConnection().transaction(async (trx) => {
      await trx.raw(`set local role ${READER_ROLE}`);
      const capped = await auditTenants(trx, { tenantId: bad.id, limitPerCheck: 1 });
      expect(capped.truncated).toBe(true);
      expect(capped.tenants[0]!.violations.filter((v) => v.check === 'orphaned_record' && v.table === 'generations')).toHaveLength(1);
    });
  });

  it('404 for an unknown tenant slug', async () => {
    const res = await request(t.app).get('/api/setup/audit').query({ tenant_slug: unique('nobody') }).set('Authorization', `Bearer ${admin}`);
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('Tenant not found');
  });

  it('403 for a caller who is not a platform admin', async () => {
    const res = await request(t.app).get('/api/setup/audit').set('Authorization', `Bearer ${tokenFor()}`);
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('Forbidden');
  });

  it('400 for a malformed slug', async () => {
    const res = await request(t.app).get('/api/setup/audit').query({ tenant_slug: 'Not A Slug' }).set('Authorization', `Bearer ${admin}`);
    expect(res.status).toBe(400);
  });
});
