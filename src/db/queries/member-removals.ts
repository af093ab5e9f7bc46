/**
 * Removal marks (`member_removals`, migration 016): who was removed from a tenant or left it, by
 * (issuer, subject), so claims and linked ids never provision them again
 * (docs/security.md#a-removal-sticks). Written and cleared inside the tenant's transaction, under
 * row-level security; read by `app_tenant_facts` with the rest of a request's facts.
 */
import type { Knex } from 'knex';

/** Why a person is no longer a member: removed by an admin, left, or deprovisioned by a directory. */
export type { RemovalReason } from '../../context/entities';
import type { RemovalReason } from '../../context/entities';

/** Marks (issuer, subject) as removed from the tenant (the latest reason and time win). */
export async function markRemoved(trx: Knex.Transaction, tenantId: string, who: { issuer: string; subject: string }, reason: RemovalReason): Promise<void> {
  await trx('member_removals')
    .insert({ tenant_id: tenantId, issuer: who.issuer, subject: who.subject, reason })
    .onConflict(['tenant_id', 'issuer', 'subject'])
    .merge({ reason, removed_at: trx.fn.now() });
}

/** Clears the mark: an accepted invitation or a platform admin's direct add brought them back. */
export async function clearRemoval(trx: Knex.Transaction, tenantId: string, who: { issuer: string; subject: string }): Promise<void> {
  await trx('member_removals').where({ tenant_id: tenantId, issuer: who.issuer, subject: who.subject }).delete();
}
