/**
 * A tenant's domains (migration 024, docs/domains.md): rows of `tenant_domains` mapped to
 * `TenantDomain`. Every statement names its tenant: row-level security lets every tenant see
 * other tenants' verified rows (resolution reads them), so a filter on tenant_id is what keeps
 * a list to the tenant's own.
 */
import type { Knex } from 'knex';
import type { RoleKey } from '../../context/entities';

export type DomainStatus = 'pending' | 'verified' | 'lapsed';
export type JoinPolicy = 'none' | 'suggest' | 'automatic';

export interface TenantDomain {
  readonly tenantId: string;
  /** The A-label (lower case). */
  readonly domain: string;
  readonly token: string;
  readonly status: DomainStatus;
  readonly join: JoinPolicy;
  readonly joinRole: RoleKey;
  readonly verifiedBy: 'dns' | 'platform_admin' | null;
  readonly createdAt: Date;
  readonly verifiedAt: Date | null;
  readonly checkedAt: Date | null;
  readonly misses: number;
}

interface DomainRow {
  tenant_id: string;
  domain: string;
  token: string;
  status: DomainStatus;
  join_policy: JoinPolicy;
  join_role: string;
  verified_by: 'dns' | 'platform_admin' | null;
  created_at: Date;
  verified_at: Date | null;
  checked_at: Date | null;
  misses: number;
}

const COLUMNS = 'tenant_id, domain, token, status, join_policy, join_role, verified_by, created_at, verified_at, checked_at, misses';

const toDomain = (r: DomainRow): TenantDomain => ({
  tenantId: r.tenant_id,
  domain: r.domain,
  token: r.token,
  status: r.status,
  join: r.join_policy,
  joinRole: r.join_role,
  verifiedBy: r.verified_by,
  createdAt: r.created_at,
  verifiedAt: r.verified_at,
  checkedAt: r.checked_at,
  misses: r.misses,
});

async function rows(trx: Knex.Transaction, sql: string, binds: readonly unknown[]): Promise<TenantDomain[]> {
  return (await trx.raw<{ rows: DomainRow[] }>(sql, binds as Knex.RawBinding[])).rows.map(toDomain);
}

/** The tenant's domains, by name. */
export function selectDomains(trx: Knex.Transaction, tenantId: string): Promise<TenantDomain[]> {
  return rows(trx, `select ${COLUMNS} from tenant_domains where tenant_id = ? order by domain`, [tenantId]);
}

/** One of the tenant's domains; `forUpdate` locks it. */
export async function selectDomain(trx: Knex.Transaction, tenantId: string, domain: string, forUpdate = false): Promise<TenantDomain | undefined> {
  return (await rows(trx, `select ${COLUMNS} from tenant_domains where tenant_id = ? and domain = ?${forUpdate ? ' for update' : ''}`, [tenantId, domain]))[0];
}

/** Serializes claims of one tenant (the per-tenant limit), until the transaction ends. */
export async function lockTenantDomains(trx: Knex.Transaction, tenantId: string): Promise<number> {
  await trx.raw(`select pg_advisory_xact_lock(hashtextextended('tenant-domains:' || ?, 0))`, [tenantId]);
  return Number((await trx.raw<{ rows: Array<{ n: string }> }>('select count(*) as n from tenant_domains where tenant_id = ?', [tenantId])).rows[0]!.n);
}

export async function insertDomain(trx: Knex.Transaction, d: { tenantId: string; domain: string; token: string }): Promise<TenantDomain | undefined> {
  return (
    await rows(trx, `insert into tenant_domains (tenant_id, domain, token) values (?, ?, ?) on conflict (tenant_id, domain) do nothing returning ${COLUMNS}`, [d.tenantId, d.domain, d.token])
  )[0];
}

/** The tenant that verified `domain`, if another than `tenantId` (null: none). */
export async function otherVerifiedOwner(trx: Knex.Transaction, tenantId: string, domain: string): Promise<string | null> {
  const r = (await trx.raw<{ rows: Array<{ slug: string }> }>(
    `select t.slug from tenant_domains d join tenants t on t.id = d.tenant_id where d.domain = ? and d.status = 'verified' and d.tenant_id <> ?`,
    [domain, tenantId],
  )).rows[0];
  return r ? r.slug : null;
}

/** Marks the domain verified (by DNS or a platform admin); the unique index refuses a second owner. */
export async function markVerified(trx: Knex.Transaction, tenantId: string, domain: string, by: 'dns' | 'platform_admin'): Promise<TenantDomain> {
  return (
    await rows(
      trx,
      `update tenant_domains set status = 'verified', verified_by = ?, verified_at = now(), checked_at = now(), next_check_at = now() + interval '24 hours', misses = 0
        where tenant_id = ? and domain = ? returning ${COLUMNS}`,
      [by, tenantId, domain],
    )
  )[0]!;
}

/** Records a verify that found no record: when it was asked. */
export async function markChecked(trx: Knex.Transaction, tenantId: string, domain: string): Promise<void> {
  await trx.raw('update tenant_domains set checked_at = now() where tenant_id = ? and domain = ?', [tenantId, domain]);
}

export async function updateJoin(trx: Knex.Transaction, tenantId: string, domain: string, join: JoinPolicy, joinRole: RoleKey): Promise<TenantDomain> {
  return (await rows(trx, `update tenant_domains set join_policy = ?, join_role = ? where tenant_id = ? and domain = ? returning ${COLUMNS}`, [join, joinRole, tenantId, domain]))[0]!;
}

export async function deleteDomain(trx: Knex.Transaction, tenantId: string, domain: string): Promise<TenantDomain | undefined> {
  return (await rows(trx, `delete from tenant_domains where tenant_id = ? and domain = ? returning ${COLUMNS}`, [tenantId, domain]))[0];
}

/** Verified domains due for their daily re-check, every tenant's (visible to the runtime role by migration 024's policy). */
export async function dueDomains(trx: Knex.Transaction, limit: number): Promise<Array<{ tenantId: string; domain: string }>> {
  const r = await trx.raw<{ rows: Array<{ tenant_id: string; domain: string }> }>(
    `select tenant_id, domain from tenant_domains where status = 'verified' and next_check_at <= now() order by next_check_at limit ?`,
    [limit],
  );
  return r.rows.map((x) => ({ tenantId: x.tenant_id, domain: x.domain }));
}

/**
 * Takes one due re-check (inside the tenant's transaction): moves its next check a day on and
 * returns the domain, or undefined when another instance took it first (or it is no longer due).
 */
export async function claimDueCheck(trx: Knex.Transaction, tenantId: string, domain: string): Promise<TenantDomain | undefined> {
  return (
    await rows(
      trx,
      `update tenant_domains set next_check_at = now() + interval '24 hours'
        where tenant_id = ? and domain = ? and status = 'verified' and next_check_at <= now() returning ${COLUMNS}`,
      [tenantId, domain],
    )
  )[0];
}

/**
 * Records a re-check's answer: found resets the misses; a miss counts one, and the third in a
 * row makes the domain `lapsed`. Undefined when the domain is gone or no longer verified.
 */
export async function recordCheck(trx: Knex.Transaction, tenantId: string, domain: string, found: boolean, lapseAfter: number): Promise<TenantDomain | undefined> {
  return (
    await rows(
      trx,
      `update tenant_domains set checked_at = now(),
              misses = case when ? then 0 else misses + 1 end,
              status = case when not ? and misses + 1 >= ? then 'lapsed' else status end
        where tenant_id = ? and domain = ? and status = 'verified' returning ${COLUMNS}`,
      [found, found, lapseAfter, tenantId, domain],
    )
  )[0];
}

/** A tenant a caller may join by their verified email's domain (GET /api/tenants/joinable). */
export interface JoinableTenant {
  readonly tenantId: string;
  readonly slug: string;
  readonly name: string;
  readonly domain: string;
  readonly join: JoinPolicy;
  readonly joinRole: RoleKey;
}

/**
 * Active tenants whose verified domain (the longest of each tenant) covers one of `domains`,
 * joining by `suggest` or `automatic`, not directory-managed, of which the caller is not a
 * member and from which they were not removed. Read under the reader role (every tenant).
 */
export async function selectJoinable(trx: Knex.Transaction, domains: readonly string[], issuer: string, subject: string): Promise<JoinableTenant[]> {
  const r = await trx.raw<{ rows: Array<{ tenant_id: string; slug: string; name: string; domain: string; join_policy: JoinPolicy; join_role: string }> }>(
    `select distinct on (t.id) t.id as tenant_id, t.slug, t.name, d.domain, d.join_policy, d.join_role
       from tenant_domains d join tenants t on t.id = d.tenant_id
      where d.status = 'verified' and d.domain = any (?::text[]) and t.status = 'active'
        and not exists (select 1 from scim_tokens st where st.tenant_id = t.id)
        and not exists (select 1 from users u where u.tenant_id = t.id and u.issuer = ? and u.subject = ?)
        and not exists (select 1 from member_removals mr where mr.tenant_id = t.id and mr.issuer = ? and mr.subject = ?)
      order by t.id, char_length(d.domain) desc`,
    [domains as string[], issuer, subject, issuer, subject],
  );
  return r.rows
    .filter((x) => x.join_policy !== 'none')
    .map((x) => ({ tenantId: x.tenant_id, slug: x.slug, name: x.name, domain: x.domain, join: x.join_policy, joinRole: x.join_role }))
    .sort((a, b) => a.slug.localeCompare(b.slug));
}
