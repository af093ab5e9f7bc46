/**
 * SQL of the OIDC clients (table `oidc_clients`, migration 026). Platform rows, read and
 * written only outside a tenant transaction.
 */
import type { Knex } from 'knex';
import type { OidcClient } from '../../context/sign-in';
import { serviceStatements } from '../tenant-scope';

const COLUMNS = ['client_id', 'name', 'type', 'redirect_uris', 'post_logout_redirect_uris', 'built_in', 'created_at', 'updated_at'] as const;
/** How a sealed secret starts (src/domain/key-encryption.ts); a plain one is base64url, which has no dot. */
const SEALED = 'enc1.%';

export interface NewOidcClient {
  readonly clientId: string;
  readonly name: string;
  readonly type: OidcClient['type'];
  readonly redirectUris: readonly string[];
  readonly postLogoutRedirectUris: readonly string[];
  /** The stored form (sealed or plain); null for a public client. */
  readonly storedSecret: string | null;
  readonly builtIn: boolean;
}

export async function insertOidcClient(trx: Knex.Transaction, c: NewOidcClient): Promise<OidcClient> {
  const [row] = (await trx('oidc_clients')
    .insert({
      client_id: c.clientId,
      name: c.name,
      type: c.type,
      redirect_uris: [...c.redirectUris],
      post_logout_redirect_uris: [...c.postLogoutRedirectUris],
      client_secret: c.storedSecret,
      built_in: c.builtIn,
    })
    .returning([...COLUMNS])) as OidcClient[];
  return row!;
}

/** The client and its stored secret, or null; with `lock`, locked against other changes until `trx` ends. */
export async function selectOidcClient(trx: Knex.Transaction, clientId: string, lock = false): Promise<{ client: OidcClient; storedSecret: string | null } | null> {
  const q = trx('oidc_clients').where({ client_id: clientId });
  if (lock) q.forNoKeyUpdate();
  const row = (await q.first([...COLUMNS, 'client_secret'])) as (OidcClient & { client_secret: string | null }) | undefined;
  if (!row) return null;
  const { client_secret, ...client } = row;
  return { client, storedSecret: client_secret };
}

/** The client and its stored secret, or null, in one round trip outside any transaction (the provider's lookup on every protocol request). */
export async function selectOidcClientNow(db: Knex, clientId: string): Promise<{ client: OidcClient; storedSecret: string | null } | null> {
  const [result] = await serviceStatements(db, [`select ${[...COLUMNS, 'client_secret'].join(', ')} from oidc_clients where client_id = $1`], [clientId]);
  const row = result!.rows[0] as (OidcClient & { client_secret: string | null }) | undefined;
  if (!row) return null;
  const { client_secret, ...client } = row;
  return { client, storedSecret: client_secret };
}

/** Every client, oldest first (they are registered by hand: few). */
export async function selectOidcClients(trx: Knex.Transaction, limit: number): Promise<OidcClient[]> {
  return (await trx('oidc_clients')
    .select([...COLUMNS])
    .orderBy([{ column: 'created_at' }, { column: 'client_id' }])
    .limit(limit)) as OidcClient[];
}

/**
 * Serializes registrations (an advisory lock held until `trx` ends) and counts the clients that
 * are not built in, so two registrations racing cannot both pass the limit.
 */
export async function lockAndCountOidcClients(trx: Knex.Transaction): Promise<number> {
  await trx.raw("select pg_advisory_xact_lock(hashtextextended('oidc-clients', 0))");
  const row = (await trx('oidc_clients').where({ built_in: false }).count<Array<{ n: string }>>({ n: '*' }).first())!;
  return Number(row.n);
}

export interface OidcClientChanges {
  readonly name?: string;
  readonly redirectUris?: readonly string[];
  readonly postLogoutRedirectUris?: readonly string[];
  readonly storedSecret?: string;
}

/** Applies the changes present and stamps `updated_at`; the client after the change. */
export async function updateOidcClient(trx: Knex.Transaction, clientId: string, c: OidcClientChanges): Promise<OidcClient> {
  const [row] = (await trx('oidc_clients')
    .where({ client_id: clientId })
    .update({
      ...(c.name !== undefined ? { name: c.name } : {}),
      ...(c.redirectUris !== undefined ? { redirect_uris: [...c.redirectUris] } : {}),
      ...(c.postLogoutRedirectUris !== undefined ? { post_logout_redirect_uris: [...c.postLogoutRedirectUris] } : {}),
      ...(c.storedSecret !== undefined ? { client_secret: c.storedSecret } : {}),
      updated_at: trx.fn.now(),
    })
    .returning([...COLUMNS])) as OidcClient[];
  return row!;
}

export async function deleteOidcClient(trx: Knex.Transaction, clientId: string): Promise<void> {
  await trx('oidc_clients').where({ client_id: clientId }).delete();
}

/** True when a client's secret is stored sealed under SERVICE_KEY_ENCRYPTION_SECRET. */
export async function hasSealedClientSecrets(trx: Knex.Transaction): Promise<boolean> {
  return (await trx('oidc_clients').where('client_secret', 'like', SEALED).first('client_id')) !== undefined;
}

/** Clients whose secret is stored in plain text, locked until `trx` ends. */
export async function selectPlainClientSecrets(trx: Knex.Transaction): Promise<Array<{ client_id: string; client_secret: string }>> {
  return (await trx('oidc_clients')
    .whereNotNull('client_secret')
    .whereNot('client_secret', 'like', SEALED)
    .select('client_id', 'client_secret')
    .forNoKeyUpdate()) as Array<{ client_id: string; client_secret: string }>;
}

/** Replaces a client's stored secret by its sealed form; `updated_at` stays: the client did not change. */
export async function updateClientStoredSecret(trx: Knex.Transaction, clientId: string, stored: string): Promise<void> {
  await trx('oidc_clients').where({ client_id: clientId }).update({ client_secret: stored });
}
