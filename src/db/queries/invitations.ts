/**
 * Invitation rows (migration 004). Tenant-owned under row-level security: every function runs
 * in the tenant's transaction, except `tenantOfInvitationToken`, which finds which tenant a
 * token hash belongs to (and nothing else) for a caller who has no tenant yet.
 */
import type { Knex } from 'knex';
import { InvitationRow } from '../models';
import { fetchKeysetRows, type KeysetPosition, type Positioned } from './keyset-page';
import { withPlatformRead } from '../tenant-scope';
import type { RoleKey } from '../../context/roles';
import type { InvitationDelivery, InvitationRecord } from '../../context/records';

export type InvitationStatusFilter = 'pending' | 'accepted' | 'revoked' | 'expired';

/**
 * The tenant id of the invitation with this token hash, or null: a read through the read-only
 * role that bypasses row-level security, selecting nothing but the tenant id of that one hash.
 */
export async function tenantOfInvitationToken(db: Knex, tokenHash: string): Promise<string | null> {
  const row = (await withPlatformRead(db, (trx) => trx('invitations').where({ token_hash: tokenHash }).first('tenant_id'))) as
    | { tenant_id: string }
    | undefined;
  return row?.tenant_id ?? null;
}

/** Pending invitations past their expiry for `email` become `expired`, freeing the email. */
export async function expireStalePending(trx: Knex.Transaction, tenantId: string, email: string): Promise<void> {
  await trx('invitations')
    .where({ tenant_id: tenantId, status: 'pending' })
    .whereRaw('lower(email) = lower(?)', [email])
    .andWhere('expires_at', '<=', trx.fn.now())
    .update({ status: 'expired', updated_at: trx.fn.now() });
}

export interface NewInvitation {
  email: string;
  role: RoleKey;
  tokenHash: string;
  ttlHours: number;
  invitedBy: string | null;
  invitedByEmail: string | null;
  /** What `delivery` reads until the mail has been sent. */
  delivery: InvitationDelivery;
}

export async function insertInvitation(trx: Knex.Transaction, tenantId: string, inv: NewInvitation): Promise<InvitationRecord> {
  const [row] = (await trx('invitations')
    .insert({
      tenant_id: tenantId,
      email: inv.email,
      role: inv.role,
      token_hash: inv.tokenHash,
      expires_at: trx.raw('now() + make_interval(hours => ?)', [inv.ttlHours]),
      invited_by: inv.invitedBy,
      invited_by_email: inv.invitedByEmail,
      delivery: inv.delivery,
    })
    .returning('*')) as InvitationRecord[];
  return row!;
}

/**
 * Records how the mail of the invitation's current token went; undefined (nothing changed) when
 * the invitation is gone or has been resent with another token since.
 */
export async function setDelivery(
  trx: Knex.Transaction,
  tenantId: string,
  id: string,
  tokenHash: string,
  delivery: InvitationDelivery,
): Promise<InvitationRecord | undefined> {
  const [row] = (await trx('invitations')
    .where({ tenant_id: tenantId, id, token_hash: tokenHash })
    .update({ delivery, updated_at: trx.fn.now() })
    .returning('*')) as InvitationRecord[];
  return row;
}

/** The invitation, locked for a change; undefined when absent. */
export async function findInvitationForUpdate(trx: Knex.Transaction, tenantId: string, id: string): Promise<InvitationRecord | undefined> {
  return (await trx('invitations').where({ tenant_id: tenantId, id }).forUpdate().first()) as InvitationRecord | undefined;
}

/** The invitation with this token hash, locked; undefined when absent. */
export async function findInvitationByTokenForUpdate(trx: Knex.Transaction, tenantId: string, tokenHash: string): Promise<InvitationRecord | undefined> {
  return (await trx('invitations').where({ tenant_id: tenantId, token_hash: tokenHash }).forUpdate().first()) as InvitationRecord | undefined;
}

/** A new token and expiry; the invitation is pending again. */
export async function renewInvitation(
  trx: Knex.Transaction,
  tenantId: string,
  id: string,
  tokenHash: string,
  ttlHours: number,
  delivery: InvitationDelivery,
): Promise<InvitationRecord> {
  const [row] = (await trx('invitations')
    .where({ tenant_id: tenantId, id })
    .update({
      token_hash: tokenHash,
      status: 'pending',
      delivery,
      expires_at: trx.raw('now() + make_interval(hours => ?)', [ttlHours]),
      updated_at: trx.fn.now(),
    })
    .returning('*')) as InvitationRecord[];
  return row!;
}

export async function markRevoked(trx: Knex.Transaction, tenantId: string, id: string): Promise<InvitationRecord> {
  const [row] = (await trx('invitations')
    .where({ tenant_id: tenantId, id })
    .update({ status: 'revoked', revoked_at: trx.fn.now(), updated_at: trx.fn.now() })
    .returning('*')) as InvitationRecord[];
  return row!;
}

/**
 * Revokes the invitations `userId` sent that are still pending (the inviter stopped being an
 * admin). Runs after the membership locks (src/db/queries/members.ts: lock order).
 */
export async function revokePendingSentBy(trx: Knex.Transaction, tenantId: string, userId: string): Promise<InvitationRecord[]> {
  return (await trx('invitations')
    .where({ tenant_id: tenantId, invited_by: userId, status: 'pending' })
    .update({ status: 'revoked', revoked_at: trx.fn.now(), updated_at: trx.fn.now() })
    .returning('*')) as InvitationRecord[];
}

export async function markAccepted(trx: Knex.Transaction, tenantId: string, id: string, userId: string): Promise<InvitationRecord> {
  const [row] = (await trx('invitations')
    .where({ tenant_id: tenantId, id })
    .update({ status: 'accepted', accepted_at: trx.fn.now(), accepted_by: userId, updated_at: trx.fn.now() })
    .returning('*')) as InvitationRecord[];
  return row!;
}

/** Up to `limit` of the tenant's invitations with `status`, newest first, after `after`. */
export async function fetchInvitationPage(
  trx: Knex.Transaction,
  tenantId: string,
  status: InvitationStatusFilter | undefined,
  limit: number,
  after?: KeysetPosition,
): Promise<Array<Positioned<InvitationRecord>>> {
  const q = InvitationRow.query(trx).where({ tenant_id: tenantId });
  const now = trx.fn.now();
  switch (status) {
    case undefined:
      break;
    case 'pending':
      q.where({ status: 'pending' }).andWhere('expires_at', '>', now);
      break;
    case 'expired':
      q.where((w) => w.where({ status: 'expired' }).orWhere((o) => o.where({ status: 'pending' }).andWhere('expires_at', '<=', now)));
      break;
    default:
      q.where({ status });
  }
  return (await fetchKeysetRows(q, limit, after, true)).map((r) => ({ ...invitationOf(r), cursor_ts: r.cursor_ts }));
}

/** The record of a model instance (the columns, not the model). */
function invitationOf(r: InvitationRow): InvitationRecord {
  const { tenant_id, id, email, role, token_hash, status, expires_at, invited_by, invited_by_email, accepted_by, accepted_at, revoked_at, delivery, created_at, updated_at } = r;
  return { tenant_id, id, email, role, token_hash, status, expires_at, invited_by, invited_by_email, accepted_by, accepted_at, revoked_at, delivery, created_at, updated_at };
}

/** `invitations` of the tenant filtered by status, `expired` computed from `expires_at`. */
function invitationsWithStatus(trx: Knex.Transaction, tenantId: string, status: InvitationStatusFilter | undefined): Knex.QueryBuilder {
  const q = trx('invitations').where({ tenant_id: tenantId });
  switch (status) {
    case undefined:
      return q;
    case 'pending':
      return q.where({ status: 'pending' }).andWhere('expires_at', '>', trx.fn.now());
    case 'expired':
      return q.where((w) => w.where({ status: 'expired' }).orWhere((o) => o.where({ status: 'pending' }).andWhere('expires_at', '<=', trx.fn.now())));
    default:
      return q.where({ status });
  }
}

export async function countInvitations(trx: Knex.Transaction, tenantId: string, status: InvitationStatusFilter | undefined): Promise<number> {
  const [{ n }] = (await invitationsWithStatus(trx, tenantId, status).count({ n: '*' })) as Array<{ n: string | number }>;
  return Number(n);
}

/** The tenant row for an accepted invitation's response is a tenants-table query (./tenants.ts). */
export { lockTenantForKeyShare } from './tenants';

/** Adding the accepting caller is a users-table query (./members.ts). */
export { insertMemberIfAbsent } from './members';

/** The role of a member (plain read, no lock); undefined when the member is gone. */
export async function roleOfMember(trx: Knex.Transaction, tenantId: string, userId: string): Promise<RoleKey | undefined> {
  const row = (await trx('users').where({ tenant_id: tenantId, id: userId }).first('role')) as { role: RoleKey } | undefined;
  return row?.role;
}

export async function findMemberByIdentity(trx: Knex.Transaction, tenantId: string, issuer: string, subject: string): Promise<{ id: string } | undefined> {
  return (await trx('users').where({ tenant_id: tenantId, issuer, subject }).first('id')) as { id: string } | undefined;
}
