/**
 * Sign-ins sent to a tenant's identity provider (`sso_requests`) and the SAML assertions already
 * accepted (`sso_consumed_assertions`), migration 028. Platform rows: read and written outside a
 * tenant transaction.
 */
import type { Knex } from 'knex';
import { serviceStatements } from '../tenant-scope';
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

/** Forgets up to `$9` requests expired for an hour and `$9` expired assertion IDs (run now and then with an insert). */
const PRUNE = [
  `delete from sso_requests where id in (select id from sso_requests where expires_at < now() - interval '1 hour' limit $9::int)`,
  `delete from sso_consumed_assertions where (connection_id, assertion_id) in (select connection_id, assertion_id from sso_consumed_assertions where expires_at < now() limit $9::int)`,
];

/**
 * Remembers a sign-in sent to an identity provider (one round trip). With `pruneLimit`, the same
 * round trip also forgets up to that many long-expired requests and expired assertion IDs.
 */
export async function insertSsoRequest(
  db: Knex,
  r: { id: string; kind: 'oidc' | 'saml'; tenantId: string; connectionId: string; interactionUid: string; codeVerifier?: string; nonce?: string; ttlSeconds: number },
  pruneLimit?: number,
): Promise<void> {
  const insert = `insert into sso_requests (id, kind, tenant_id, connection_id, interaction_uid, code_verifier, nonce, expires_at)
     values ($1, $2, $3::uuid, $4::uuid, $5, $6, $7, now() + make_interval(secs => $8::int))`;
  await serviceStatements(db, pruneLimit === undefined ? [insert] : [insert, ...PRUNE], [
    r.id,
    r.kind,
    r.tenantId,
    r.connectionId,
    r.interactionUid,
    r.codeVerifier ?? null,
    r.nonce ?? null,
    r.ttlSeconds,
    pruneLimit ?? null,
  ]);
}

/**
 * Marks the request used and returns it as it was before (`usedAt` null: this call used it;
 * set: an earlier one did); null when there is no such request. One statement: two callbacks
 * racing with one state see one winner.
 */
export async function useSsoRequest(db: Knex, id: string, kind: 'oidc' | 'saml'): Promise<(SsoRequest & { expired: boolean }) | null> {
  const [result] = await serviceStatements(
    db,
    [
      `with before as (select * from sso_requests where id = $1 and kind = $2 for update),
          used as (update sso_requests r set used_at = now() from before b where r.id = b.id and b.used_at is null returning r.id)
     select b.*, b.expires_at <= now() as expired from before b`,
    ],
    [id, kind],
  );
  const r = result!.rows[0] as (Row & { expired: boolean }) | undefined;
  return r ? { ...toRequest(r), expired: r.expired } : null;
}

/** Records an accepted assertion ID; false when it was already accepted (a replay). */
export async function consumeAssertion(db: Knex, connectionId: string, assertionId: string, expiresAt: Date): Promise<boolean> {
  const [result] = await serviceStatements(
    db,
    [
      `insert into sso_consumed_assertions (connection_id, assertion_id, expires_at) values ($1::uuid, $2, $3::timestamptz)
       on conflict (connection_id, assertion_id) do update set expires_at = excluded.expires_at
         where sso_consumed_assertions.expires_at <= now()
     returning 1`,
    ],
    [connectionId, assertionId, expiresAt.toISOString()],
  );
  return result!.rows.length === 1;
}

