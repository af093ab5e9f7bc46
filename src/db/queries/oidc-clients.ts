/**
 * SQL of the OIDC clients (table `oidc_clients`, migration 026). Platform rows, read and
 * written only outside a tenant transaction.
 */
import type { Knex } from 'knex';
import type { OidcClient } from '../../context/sign-in';

const COLUMNS = ['client_id', 'name', 'type', 'redirect_uris', 'post_logout_redirect_uris', 'built_in', 'created_at', 'updated_at'] as const;

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

/** The client and its stored secret, or null. */
export async function selectOidcClient(trx: Knex.Transaction, clientId: string): Promise<{ client: OidcClient; storedSecret: string | null } | null> {
  const row = (await trx('oidc_clients')
    .where({ client_id: clientId })
    .first([...COLUMNS, 'client_secret'])) as (OidcClient & { client_secret: string | null }) | undefined;
  if (!row) return null;
  const { client_secret, ...client } = row;
  return { client, storedSecret: client_secret };
}
