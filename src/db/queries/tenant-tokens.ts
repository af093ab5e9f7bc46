/**
 * SQL of the tenant-token signing keys (table `tenant_token_keys`, migration 008). Platform rows,
 * read and written only outside a tenant transaction (its row-level security policy says so).
 * Times are the database's clock, so instances with skewed clocks agree on when a key signs.
 */
import type { Knex } from 'knex';
import type { TenantTokenKey } from '../../context/records';

export interface NewTenantTokenKey {
  kid: string;
  publicJwk: Record<string, unknown>;
  privateKey: Record<string, unknown>;
  encryption: 'none' | 'aes-256-gcm';
}

/** Serializes key creation and rotation across instances (held to the end of the transaction). */
export async function lockTenantTokenKeys(trx: Knex.Transaction): Promise<void> {
  await trx.raw("select pg_advisory_xact_lock(hashtext('tenant-service:tenant_token_keys'))");
}

/** The published keys (not yet past `published_until`), oldest signer first, and the database's now. */
export async function selectPublishedTenantTokenKeys(trx: Knex.Transaction): Promise<{ rows: TenantTokenKey[]; now: Date }> {
  const rows = (await trx('tenant_token_keys')
    .where((q) => q.whereNull('published_until').orWhere('published_until', '>', trx.raw('now()')))
    .orderBy([{ column: 'signs_from' }, { column: 'kid' }])) as TenantTokenKey[];
  const { rows: clock } = (await trx.raw('select now() as now')) as { rows: Array<{ now: Date }> };
  return { rows, now: clock[0]!.now };
}

/** The key without a successor (the newest), locked when `forUpdate`. */
export async function selectLatestTenantTokenKey(trx: Knex.Transaction, forUpdate = false): Promise<TenantTokenKey | undefined> {
  const q = trx('tenant_token_keys').whereNull('signs_until').first();
  if (forUpdate) q.forUpdate();
  return (await q) as TenantTokenKey | undefined;
}

/** Inserts a key that signs `delaySeconds` from now. */
export async function insertTenantTokenKey(trx: Knex.Transaction, key: NewTenantTokenKey, delaySeconds: number): Promise<TenantTokenKey> {
  try {
    const [row] = (await trx('tenant_token_keys')
      .insert({
        kid: key.kid,
        algorithm: 'ES256',
        public_jwk: key.publicJwk,
        private_key: key.privateKey,
        private_key_encryption: key.encryption,
        signs_from: trx.raw('now() + make_interval(secs => ?)', [delaySeconds]),
      })
      .returning('*')) as TenantTokenKey[];
    return row!;
  } catch (err) {
    throw withoutStatement(err);
  }
}

/**
 * knex prefixes a failed query's error message with the statement and its values inlined, which
 * for this insert is the private key: keep only the database's own message (code, constraint and
 * the rest of the error stay, so it maps to an answer as usual).
 */
function withoutStatement(err: unknown): unknown {
  if (err instanceof Error) {
    const at = err.message.lastIndexOf(' - ');
    if (at >= 0) err.message = `insert into tenant_token_keys failed - ${err.message.slice(at + 3)}`;
  }
  return err;
}

/**
 * Ends a key's signing `delaySeconds` from now (when its successor starts) and keeps it
 * published `keepSeconds` longer, until the last token it signed has expired.
 */
export async function retireTenantTokenKey(trx: Knex.Transaction, kid: string, delaySeconds: number, keepSeconds: number): Promise<TenantTokenKey> {
  const [row] = (await trx('tenant_token_keys')
    .where({ kid })
    .update({
      signs_until: trx.raw('now() + make_interval(secs => ?)', [delaySeconds]),
      published_until: trx.raw('now() + make_interval(secs => ?)', [delaySeconds + keepSeconds]),
    })
    .returning('*')) as TenantTokenKey[];
  return row!;
}

/** Drops keys no longer published: nothing they signed is still valid. Returns how many. */
export async function deleteUnpublishedTenantTokenKeys(trx: Knex.Transaction): Promise<number> {
  return trx('tenant_token_keys').where('published_until', '<=', trx.raw('now()')).delete();
}

/** True when a key of the set is stored encrypted (the deployment encrypts its secrets at rest). */
export async function hasEncryptedTenantTokenKeys(trx: Knex.Transaction): Promise<boolean> {
  return (await trx('tenant_token_keys').whereNot('private_key_encryption', 'none').first('kid')) !== undefined;
}
