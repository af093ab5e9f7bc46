/**
 * SQL of the provider's protocol objects (table `oidc_payloads`, migration 027): sessions,
 * interactions, codes, tokens and grants as the protocol library stores them, by (model, id).
 * Platform rows, read and written only outside a tenant transaction. A row past `expires_at` is
 * never returned; expired rows are purged a few at a time with an upsert (`upsertPayload`'s `purgeLimit`).
 */
import type { Knex } from 'knex';
import type { PgResult } from '../request-transaction';
import { serviceStatements } from '../tenant-scope';

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

/**
 * Each statement below is one round trip (`serviceStatements`): the provider reads or writes one
 * protocol object per call, several per sign-in, and a transaction of its own would be four.
 */
const SELECT = `select payload, consumed_at from oidc_payloads where model = $1 and`;

function first(results: PgResult[]): StoredPayload | undefined {
  return toStored(results[0]!.rows[0] as { payload: Record<string, unknown>; consumed_at: Date | null } | undefined);
}

/** Deletes up to `limit` expired rows (a cheap, bounded delete; run now and then with an insert). */
const PURGE_EXPIRED = `delete from oidc_payloads where ctid in (select ctid from oidc_payloads where expires_at <= now() limit $8 for update skip locked)`;

/**
 * Inserts or replaces a payload; `expiresIn` seconds from the database's now (null: no expiry).
 * With `purgeLimit`, the same round trip also deletes up to that many expired rows.
 */
export async function upsertPayload(
  db: Knex,
  p: { model: string; id: string; payload: Record<string, unknown>; grantId: string | null; uid: string | null; userCode: string | null; expiresIn: number | null },
  purgeLimit?: number,
): Promise<void> {
  const upsert = `insert into oidc_payloads (model, id, payload, grant_id, uid, user_code, expires_at)
     values ($1, $2, $3::jsonb, $4, $5, $6, case when $7::int is null then null else now() + make_interval(secs => $7::int) end)
     on conflict (model, id) do update set payload = excluded.payload, grant_id = excluded.grant_id, uid = excluded.uid,
       user_code = excluded.user_code, expires_at = excluded.expires_at`;
  await serviceStatements(db, purgeLimit === undefined ? [upsert] : [upsert, PURGE_EXPIRED], [
    p.model,
    p.id,
    JSON.stringify(p.payload),
    p.grantId,
    p.uid,
    p.userCode,
    p.expiresIn,
    purgeLimit ?? null,
  ]);
}

export async function selectPayload(db: Knex, model: string, id: string): Promise<StoredPayload | undefined> {
  return first(await serviceStatements(db, [`${SELECT} id = $2 and ${LIVE}`], [model, id]));
}

export async function selectPayloadByUid(db: Knex, model: string, uid: string): Promise<StoredPayload | undefined> {
  return first(await serviceStatements(db, [`${SELECT} uid = $2 and ${LIVE} limit 1`], [model, uid]));
}

export async function selectPayloadByUserCode(db: Knex, model: string, userCode: string): Promise<StoredPayload | undefined> {
  return first(await serviceStatements(db, [`${SELECT} user_code = $2 and ${LIVE} limit 1`], [model, userCode]));
}

/** Marks a payload used (a code, a rotated refresh token); the first marking stands. */
export async function consumePayload(db: Knex, model: string, id: string): Promise<void> {
  await serviceStatements(db, ['update oidc_payloads set consumed_at = now() where model = $1 and id = $2 and consumed_at is null'], [model, id]);
}

export async function deletePayload(db: Knex, model: string, id: string): Promise<void> {
  await serviceStatements(db, ['delete from oidc_payloads where model = $1 and id = $2'], [model, id]);
}

/** Deletes every payload of a grant (the library revokes a grant's tokens this way, per model). */
export async function deletePayloadsOfGrant(db: Knex, model: string, grantId: string): Promise<void> {
  await serviceStatements(db, ['delete from oidc_payloads where model = $1 and grant_id = $2'], [model, grantId]);
}

/** Records the sign-in behind a grant (the Grant row must exist). Returns false when it does not. */
export async function updateGrantSignIn(db: Knex, grantId: string, signIn: GrantSignIn): Promise<boolean> {
  const [result] = await serviceStatements(
    db,
    ["update oidc_payloads set grant_sign_in = $2::jsonb where model = 'Grant' and id = $1"],
    [grantId, JSON.stringify({ tenant_id: signIn.tenantId, connection_id: signIn.connectionId, method: signIn.method })],
  );
  return (result!.rowCount ?? 0) > 0;
}

/** The statement reading a live grant's recorded sign-in (`$n`: the grant's id), for `serviceStatements`. */
export const selectGrantSignInSql = (n: number): string => `select grant_sign_in from oidc_payloads where model = 'Grant' and id = $${n} and ${LIVE}`;

/** The sign-in of a row that `selectGrantSignInSql` read; null when the grant is gone or has none recorded. */
export function grantSignInOf(row: unknown): GrantSignIn | null {
  const s = (row as { grant_sign_in: { tenant_id: string | null; connection_id: string | null; method: 'email' | 'sso' } | null } | undefined)?.grant_sign_in;
  if (!s) return null;
  return { tenantId: s.tenant_id, connectionId: s.connection_id, method: s.method };
}

/** The sign-in behind a live grant, in one round trip; null when the grant is gone or has none recorded. */
export async function selectGrantSignIn(db: Knex, grantId: string): Promise<GrantSignIn | null> {
  const [result] = await serviceStatements(db, [selectGrantSignInSql(1)], [grantId]);
  return grantSignInOf(result!.rows[0]);
}
