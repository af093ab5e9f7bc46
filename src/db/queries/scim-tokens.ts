/**
 * SCIM tokens (`scim_tokens`, migration 018): a tenant's directory bearer tokens, stored as
 * SHA-256 only (docs/directory-sync.md#connecting-a-directory). Written and listed inside the tenant's
 * transaction; a SCIM request finds its token (and so its tenant) by hash with the platform
 * reader, then works inside that tenant's transaction.
 */
import type { TenantStatus } from '../../context/tenant-status';
import type { Knex } from 'knex';
import type { ScimToken } from '../../context/records';

const COLUMNS = ['tenant_id', 'id', 'description', 'created_at', 'last_used_at'] as const;

export async function insertScimToken(trx: Knex.Transaction, t: { tenantId: string; tokenHash: string; description: string | null }): Promise<ScimToken> {
  const [row] = (await trx('scim_tokens').insert({ tenant_id: t.tenantId, token_hash: t.tokenHash, description: t.description }).returning([...COLUMNS])) as ScimToken[];
  return row!;
}

export async function selectScimTokens(trx: Knex.Transaction, tenantId: string): Promise<ScimToken[]> {
  return (await trx('scim_tokens').where({ tenant_id: tenantId }).orderBy([{ column: 'created_at' }, { column: 'id' }]).select([...COLUMNS])) as ScimToken[];
}

export async function countScimTokens(trx: Knex.Transaction, tenantId: string): Promise<number> {
  const row = (await trx('scim_tokens').where({ tenant_id: tenantId }).count<{ n: string }[]>({ n: '*' }))[0];
  return Number(row?.n ?? 0);
}

/** Deletes the token; null when the tenant has no such token. */
export async function deleteScimToken(trx: Knex.Transaction, tenantId: string, id: string): Promise<ScimToken | null> {
  const [row] = (await trx('scim_tokens').where({ tenant_id: tenantId, id }).delete().returning([...COLUMNS])) as ScimToken[];
  return row ?? null;
}

/** Serialises token changes of one tenant (the per-tenant limit counts under it). */
export async function lockScimTokens(trx: Knex.Transaction, tenantId: string): Promise<void> {
  await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`scim-tokens:${tenantId}`]);
}

/** The tenant and id of the token with this hash (any tenant: the reader role), or null. */
export async function findScimTokenByHash(trx: Knex.Transaction, tokenHash: string): Promise<{ tenant_id: string; id: string } | null> {
  const row = (await trx('scim_tokens').where({ token_hash: tokenHash }).first('tenant_id', 'id')) as { tenant_id: string; id: string } | undefined;
  return row ?? null;
}

/**
 * Inside the tenant's transaction: the token still exists (locked against a revoke until the
 * request ends) and its tenant's status; `last_used_at` is written at most once a minute.
 */
export async function useScimToken(trx: Knex.Transaction, tenantId: string, id: string): Promise<{ status: TenantStatus; slug: string } | null> {
  const { rows } = await trx.raw<{ rows: Array<{ status: TenantStatus; slug: string }> }>(
    `with tok as (
       select id from scim_tokens where tenant_id = ? and id = ? for key share
     ), touched as (
       update scim_tokens set last_used_at = now()
        where tenant_id = ? and id = (select id from tok) and (last_used_at is null or last_used_at < now() - interval '1 minute')
     )
     select t.status, t.slug from tenants t where t.id = ? and exists (select 1 from tok)`,
    [tenantId, id, tenantId, tenantId],
  );
  return rows[0] ?? null;
}
