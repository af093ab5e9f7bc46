/**
 * Sign-ins sent to a tenant's identity provider (`sso_requests`) and the SAML assertions already
 * accepted (`sso_consumed_assertions`), migration 028. Platform rows: read and written outside a
 * tenant transaction.
 */
import type { Knex } from 'knex';
import type { SsoRequest } from '../../context/records';

interface Row {
  id: string;
  kind: 'oidc' | 'saml';
  tenant_id: string;
  connection_id: string;
  interaction_uid: string;
  code_verifier: string | null;
  nonce: string | null;
  expires_at: Date;
  used_at: Date | null;
}

const toRequest = (r: Row): SsoRequest => ({
  id: r.id,
  kind: r.kind,
  tenantId: r.tenant_id,
  connectionId: r.connection_id,
  interactionUid: r.interaction_uid,
  codeVerifier: r.code_verifier,
  nonce: r.nonce,
  expiresAt: r.expires_at,
  usedAt: r.used_at,
});

export async function insertSsoRequest(
  trx: Knex.Transaction,
  r: { id: string; kind: 'oidc' | 'saml'; tenantId: string; connectionId: string; interactionUid: string; codeVerifier?: string; nonce?: string; ttlSeconds: number },
): Promise<void> {
  await trx.raw(
    `insert into sso_requests (id, kind, tenant_id, connection_id, interaction_uid, code_verifier, nonce, expires_at)
     values (?, ?, ?, ?, ?, ?, ?, now() + make_interval(secs => ?))`,
    [r.id, r.kind, r.tenantId, r.connectionId, r.interactionUid, r.codeVerifier ?? null, r.nonce ?? null, r.ttlSeconds],
  );
}

/**
 * Marks the request used and returns it as it was before (`usedAt` null: this call used it;
 * set: an earlier one did); null when there is no such request. One statement: two callbacks
 * racing with one state see one winner.
 */
export async function useSsoRequest(trx: Knex.Transaction, id: string, kind: 'oidc' | 'saml'): Promise<(SsoRequest & { expired: boolean }) | null> {
  const { rows } = await trx.raw<{ rows: Array<Row & { expired: boolean }> }>(
    `with before as (select * from sso_requests where id = ? and kind = ? for update),
          used as (update sso_requests r set used_at = now() from before b where r.id = b.id and b.used_at is null returning r.id)
     select b.*, b.expires_at <= now() as expired from before b`,
    [id, kind],
  );
  const r = rows[0];
  return r ? { ...toRequest(r), expired: r.expired } : null;
}

/** Records an accepted assertion ID; false when it was already accepted (a replay). */
export async function consumeAssertion(trx: Knex.Transaction, connectionId: string, assertionId: string, expiresAt: Date): Promise<boolean> {
  const { rows } = await trx.raw<{ rows: unknown[] }>(
    `insert into sso_consumed_assertions (connection_id, assertion_id, expires_at) values (?, ?, ?)
       on conflict (connection_id, assertion_id) do update set expires_at = excluded.expires_at
         where sso_consumed_assertions.expires_at <= now()
     returning 1`,
    [connectionId, assertionId, expiresAt],
  );
  return rows.length === 1;
}

/** Forgets expired requests and assertion IDs past their NotOnOrAfter (a few at a time). */
export async function pruneSsoRequests(trx: Knex.Transaction, limit = 500): Promise<number> {
  const a = await trx.raw<{ rowCount: number }>(`delete from sso_requests where id in (select id from sso_requests where expires_at < now() - interval '1 hour' limit ?)`, [limit]);
  const b = await trx.raw<{ rowCount: number }>(
    `delete from sso_consumed_assertions where (connection_id, assertion_id) in (select connection_id, assertion_id from sso_consumed_assertions where expires_at < now() limit ?)`,
    [limit],
  );
  return a.rowCount + b.rowCount;
}
