/**
 * SQL of the provider's signing keys (table `oidc_signing_keys`, migration 027) and of the
 * secrets its instances share (`oidc_provider_secrets`). Platform rows, read and written only
 * outside a tenant transaction. Times are the database's clock, so instances agree on when a key
 * signs.
 */
import type { Knex } from 'knex';
import type { OidcSigningKey } from '../../context/records';

/** The stored row: the record's columns, one for one. */
type KeyRow = OidcSigningKey;

const toKey = (r: KeyRow): OidcSigningKey => ({
  kid: r.kid,
  algorithm: r.algorithm,
  public_jwk: r.public_jwk,
  private_key: r.private_key,
  private_key_encryption: r.private_key_encryption,
  created_at: r.created_at,
  signs_from: r.signs_from,
  signs_until: r.signs_until,
  published_until: r.published_until,
});

export interface NewOidcKey {
  kid: string;
  publicJwk: Record<string, unknown>;
  privateKey: Record<string, unknown>;
  encryption: 'none' | 'aes-256-gcm';
}

/** Serializes key creation and rotation across instances (held to the end of the transaction). */
export async function lockOidcKeys(trx: Knex.Transaction): Promise<void> {
  await trx.raw("select pg_advisory_xact_lock(hashtext('tenant-service:oidc_signing_keys'))");
}

/** The published keys (not past `published_until`), oldest signer first, and the database's now. */
export async function selectPublishedOidcKeys(trx: Knex.Transaction): Promise<{ rows: OidcSigningKey[]; now: Date }> {
  const rows = ((await trx('oidc_signing_keys')
    .where((q) => q.whereNull('published_until').orWhere('published_until', '>', trx.raw('now()')))
    .orderBy([{ column: 'signs_from' }, { column: 'kid' }])) as KeyRow[]).map(toKey);
  const { rows: clock } = (await trx.raw('select now() as now')) as { rows: Array<{ now: Date }> };
  return { rows, now: clock[0]!.now };
}

/** The key without a successor (the newest), locked when `forUpdate`. */
export async function selectLatestOidcKey(trx: Knex.Transaction, forUpdate = false): Promise<OidcSigningKey | undefined> {
  const q = trx('oidc_signing_keys').whereNull('signs_until').first();
  if (forUpdate) q.forUpdate();
  const row = (await q) as KeyRow | undefined;
  return row ? toKey(row) : undefined;
}

/** Inserts a key that signs `delaySeconds` from now. */
export async function insertOidcKey(trx: Knex.Transaction, key: NewOidcKey, delaySeconds: number): Promise<OidcSigningKey> {
  try {
    const [row] = (await trx('oidc_signing_keys')
      .insert({
        kid: key.kid,
        algorithm: 'RS256',
        public_jwk: key.publicJwk,
        private_key: key.privateKey,
        private_key_encryption: key.encryption,
        signs_from: trx.raw('now() + make_interval(secs => ?)', [delaySeconds]),
      })
      .returning('*')) as KeyRow[];
    return toKey(row!);
  } catch (err) {
    // knex's message inlines the statement's values, the private key among them: keep the database's own message.
    if (err instanceof Error) {
      const at = err.message.lastIndexOf(' - ');
      if (at >= 0) err.message = `insert into oidc_signing_keys failed - ${err.message.slice(at + 3)}`;
    }
    throw err;
  }
}

/** Ends a key's signing `delaySeconds` from now and keeps it published `keepSeconds` longer. */
export async function retireOidcKey(trx: Knex.Transaction, kid: string, delaySeconds: number, keepSeconds: number): Promise<OidcSigningKey> {
  const [row] = (await trx('oidc_signing_keys')
    .where({ kid })
    .update({
      signs_until: trx.raw('now() + make_interval(secs => ?)', [delaySeconds]),
      published_until: trx.raw('now() + make_interval(secs => ?)', [delaySeconds + keepSeconds]),
    })
    .returning('*')) as KeyRow[];
  return toKey(row!);
}

/** Drops keys no longer published. */
export async function deleteUnpublishedOidcKeys(trx: Knex.Transaction): Promise<number> {
  return trx('oidc_signing_keys').where('published_until', '<=', trx.raw('now()')).delete();
}

/** True when a provider key is stored encrypted. */
export async function hasEncryptedOidcKeys(trx: Knex.Transaction): Promise<boolean> {
  return (await trx('oidc_signing_keys').whereNot('private_key_encryption', 'none').first('kid')) !== undefined;
}

/** The shared secret `name`, created with `fresh` by whichever instance asks first. */
export async function ensureProviderSecret(trx: Knex.Transaction, name: string, fresh: string): Promise<string> {
  await trx.raw('insert into oidc_provider_secrets (name, value) values (?, ?) on conflict (name) do nothing', [name, fresh]);
  const row = (await trx('oidc_provider_secrets').where({ name }).first('value')) as { value: string };
  return row.value;
}
