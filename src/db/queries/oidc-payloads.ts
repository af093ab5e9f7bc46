/**
 * SQL of the provider's protocol objects (table `oidc_payloads`, migration 027): sessions,
 * interactions, codes, tokens and grants as the protocol library stores them, by (model, id).
 * Platform rows, read and written only outside a tenant transaction. A row past `expires_at` is
 * never returned; expired rows are purged a few at a time by `purgeExpiredPayloads`.
 */
import type { Knex } from 'knex';

export interface StoredPayload {
  readonly payload: Record<string, unknown>;
  readonly consumed: boolean;
}

/** The sign-in behind a grant, recorded by the service (never by the library). */
export interface GrantSignIn {
  readonly tenantId: string | null;
  readonly connectionId: string | null;
  readonly method: 'email' | 'sso';
}

const LIVE = '(expires_at IS NULL OR expires_at > now())';

function toStored(row: { payload: Record<string, unknown>; consumed_at: Date | null } | undefined): StoredPayload | undefined {
  if (!row) return undefined;
  return { payload: row.payload, consumed: row.consumed_at !== null };
}

/** Inserts or replaces a payload; `expiresIn` seconds from the database's now (null: no expiry). */
export async function upsertPayload(
  trx: Knex.Transaction,
  p: { model: string; id: string; payload: Record<string, unknown>; grantId: string | null; uid: string | null; userCode: string | null; expiresIn: number | null },
): Promise<void> {
  await trx.raw(
    `insert into oidc_payloads (model, id, payload, grant_id, uid, user_code, expires_at)
     values (?, ?, ?::jsonb, ?, ?, ?, case when ?::int is null then null else now() + make_interval(secs => ?::int) end)
     on conflict (model, id) do update set payload = excluded.payload, grant_id = excluded.grant_id, uid = excluded.uid,
       user_code = excluded.user_code, expires_at = excluded.expires_at`,
    [p.model, p.id, JSON.stringify(p.payload), p.grantId, p.uid, p.userCode, p.expiresIn, p.expiresIn],
  );
}

export async function selectPayload(trx: Knex.Transaction, model: string, id: string): Promise<StoredPayload | undefined> {
  const row = await trx('oidc_payloads').where({ model, id }).whereRaw(LIVE).first('payload', 'consumed_at');
  return toStored(row as { payload: Record<string, unknown>; consumed_at: Date | null } | undefined);
}

export async function selectPayloadByUid(trx: Knex.Transaction, model: string, uid: string): Promise<StoredPayload | undefined> {
  const row = await trx('oidc_payloads').where({ model, uid }).whereRaw(LIVE).first('payload', 'consumed_at');
  return toStored(row as { payload: Record<string, unknown>; consumed_at: Date | null } | undefined);
}

export async function selectPayloadByUserCode(trx: Knex.Transaction, model: string, userCode: string): Promise<StoredPayload | undefined> {
  const row = await trx('oidc_payloads').where({ model, user_code: userCode }).whereRaw(LIVE).first('payload', 'consumed_at');
  return toStored(row as { payload: Record<string, unknown>; consumed_at: Date | null } | undefined);
}

/** Marks a payload used (a code, a rotated refresh token); the first marking stands. */
export async function consumePayload(trx: Knex.Transaction, model: string, id: string): Promise<void> {
  await trx('oidc_payloads').where({ model, id }).whereNull('consumed_at').update({ consumed_at: trx.raw('now()') });
}

export async function deletePayload(trx: Knex.Transaction, model: string, id: string): Promise<void> {
  await trx('oidc_payloads').where({ model, id }).delete();
}

/** Deletes every payload of a grant (the library revokes a grant's tokens this way, per model). */
export async function deletePayloadsOfGrant(trx: Knex.Transaction, model: string, grantId: string): Promise<void> {
  await trx('oidc_payloads').where({ model, grant_id: grantId }).delete();
}

/** Deletes up to `limit` expired rows (a cheap, bounded delete; run now and then on insert). */
export async function purgeExpiredPayloads(trx: Knex.Transaction, limit: number): Promise<number> {
  const result = (await trx.raw(
    `delete from oidc_payloads where ctid in (select ctid from oidc_payloads where expires_at <= now() limit ? for update skip locked)`,
    [limit],
  )) as { rowCount: number };
  return result.rowCount;
}

/** Records the sign-in behind a grant (the Grant row must exist). Returns false when it does not. */
export async function updateGrantSignIn(trx: Knex.Transaction, grantId: string, signIn: GrantSignIn): Promise<boolean> {
  const n = await trx('oidc_payloads')
    .where({ model: 'Grant', id: grantId })
    .update({ grant_sign_in: JSON.stringify({ tenant_id: signIn.tenantId, connection_id: signIn.connectionId, method: signIn.method }) });
  return n > 0;
}

/** The sign-in behind a live grant; null when the grant is gone or has none recorded. */
export async function selectGrantSignIn(trx: Knex.Transaction, grantId: string): Promise<GrantSignIn | null> {
  const row = (await trx('oidc_payloads').where({ model: 'Grant', id: grantId }).whereRaw(LIVE).first('grant_sign_in')) as
    | { grant_sign_in: { tenant_id: string | null; connection_id: string | null; method: 'email' | 'sso' } | null }
    | undefined;
  const s = row?.grant_sign_in;
  if (!s) return null;
  return { tenantId: s.tenant_id, connectionId: s.connection_id, method: s.method };
}
