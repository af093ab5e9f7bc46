/**
 * Member rows for role changes and removal: the locks that keep "at least one admin" true
 * under concurrency. Called with the request's tenant transaction.
 */
import type { Knex } from 'knex';
import type { UserRow } from '../models';

/**
 * Locks the tenant's admin rows (FOR NO KEY UPDATE, in id order) and returns their ids. Two
 * admin changes in one tenant thus run one after the other, and the second sees the first's
 * result. NO KEY UPDATE does not conflict with the FOR KEY SHARE that every in-flight request
 * holds on its caller's row (app_tenant_facts), so it never waits for ordinary traffic.
 */
export async function lockAdmins(trx: Knex.Transaction, tenantId: string): Promise<string[]> {
  const rows = (await trx('users').where({ tenant_id: tenantId, role: 'admin' }).orderBy('id').forNoKeyUpdate().select('id')) as Array<{ id: string }>;
  return rows.map((r) => r.id);
}

/** The member with `userId`, locked against concurrent changes; undefined when absent. */
export async function findMemberForUpdate(trx: Knex.Transaction, tenantId: string, userId: string): Promise<UserRow | undefined> {
  return (await trx('users').where({ tenant_id: tenantId, id: userId }).forNoKeyUpdate().first()) as UserRow | undefined;
}

export async function setMemberRole(trx: Knex.Transaction, tenantId: string, userId: string, role: 'admin' | 'member'): Promise<UserRow> {
  const [row] = (await trx('users').where({ tenant_id: tenantId, id: userId }).update({ role }).returning('*')) as UserRow[];
  return row!;
}

/** Deletes the member; waits for the member's in-flight requests (their FOR KEY SHARE) to end. */
export async function deleteMember(trx: Knex.Transaction, tenantId: string, userId: string): Promise<number> {
  return trx('users').where({ tenant_id: tenantId, id: userId }).delete();
}

/** True when a member of the tenant has this email (case-insensitive). */
export async function memberWithEmailExists(trx: Knex.Transaction, tenantId: string, email: string): Promise<boolean> {
  const row = await trx('users').where({ tenant_id: tenantId }).whereRaw('lower(email) = lower(?)', [email]).first('id');
  return row !== undefined;
}
