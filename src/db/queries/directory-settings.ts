/**
 * A tenant's directory settings (`directory_settings`, migration 018): the ordered group → role
 * mappings and the claim bound against externalId (docs/directory-sync.md#settings). No row: none.
 */
import type { Knex } from 'knex';

export interface GroupRole {
  readonly group: string;
  readonly role: string;
}

export interface DirectorySettings {
  readonly groupRoles: readonly GroupRole[];
  readonly externalIdClaim: string | null;
}

export async function selectDirectorySettings(trx: Knex.Transaction, tenantId: string): Promise<DirectorySettings> {
  const row = (await trx('directory_settings').where({ tenant_id: tenantId }).first('group_roles', 'external_id_claim')) as
    | { group_roles: GroupRole[]; external_id_claim: string | null }
    | undefined;
  return { groupRoles: row?.group_roles ?? [], externalIdClaim: row?.external_id_claim ?? null };
}

export async function upsertDirectorySettings(trx: Knex.Transaction, tenantId: string, s: DirectorySettings): Promise<void> {
  await trx('directory_settings')
    .insert({ tenant_id: tenantId, group_roles: JSON.stringify(s.groupRoles), external_id_claim: s.externalIdClaim })
    .onConflict('tenant_id')
    .merge({ group_roles: JSON.stringify(s.groupRoles), external_id_claim: s.externalIdClaim, updated_at: trx.fn.now() });
}
