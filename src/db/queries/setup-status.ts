/**
 * The tenant counts of `GET /api/setup/status`, in one read-only statement.
 */
import type { Knex } from 'knex';

export interface TenantCounts {
  /** The default tenant's id and slug; null when it is missing. */
  defaultTenant: { id: string; slug: string } | null;
  /** Another tenant (not marked default) holds the configured default slug. */
  defaultSlugHeldByOther: boolean;
  /** Tenants besides the default. */
  otherTenants: number;
  pendingApproval: number;
  /** Tenants besides the default that provision from claims and have no identity link. */
  unlinkedProvisioning: number;
}

/** Reads the default tenant and the tenant counts; creates or changes nothing. */
export async function readTenantCounts(trx: Knex.Transaction, defaultSlug: string): Promise<TenantCounts> {
  const result = await trx.raw<{ rows: Array<{ id: string | null; slug: string | null; others: string; pending: string; unlinked: string; squatted: boolean }> }>(
    `select d.id, d.slug,
            exists (select 1 from tenants where slug = ? and not is_default) as squatted,
            (select count(*) from tenants where not is_default) as others,
            (select count(*) from tenants where status = 'pending_approval') as pending,
            (select count(*) from tenants t where not t.is_default and t.provision_from_claims
                and not exists (select 1 from identity_links l where l.tenant_id = t.id)) as unlinked
       from (select 1) one
       left join tenants d on d.is_default`,
    [defaultSlug],
  );
  const row = result.rows[0]!;
  return {
    defaultTenant: row.id !== null && row.slug !== null ? { id: row.id, slug: row.slug } : null,
    defaultSlugHeldByOther: row.squatted,
    otherTenants: Number(row.others),
    pendingApproval: Number(row.pending),
    unlinkedProvisioning: Number(row.unlinked),
  };
}
