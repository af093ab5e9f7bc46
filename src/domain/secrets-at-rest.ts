/**
 * Secrets at rest (docs/security.md#secrets-at-rest): with SERVICE_KEY_ENCRYPTION_SECRET set, the
 * tenant-token private keys, the webhook signing secrets and the OIDC clients' secrets are stored
 * encrypted. Once a
 * database holds an encrypted value, an instance started without the secret must not write a
 * plain one beside it (a rotation, the first key, a new webhook): that would undo the
 * encryption silently, so it refuses with 503 and its operator sets the secret.
 */
import { hasSealedClientSecrets, selectPlainClientSecrets, updateClientStoredSecret } from '../db/queries/oidc-clients';
import { hasEncryptedTenantTokenKeys } from '../db/queries/tenant-tokens';
import { hasEncryptedOidcKeys } from '../db/queries/oidc-keys';
import { hasSealedWebhookSecrets, selectPlainWebhookSecrets, updateWebhookSecret } from '../db/queries/webhooks';
import { withService, type Database, type Transaction } from '../db/tenant-scope';
import { ApiError } from '../errors';
import { sealClientSecret, sealWebhookSecret } from './key-encryption';

/** True when the database holds a value encrypted under SERVICE_KEY_ENCRYPTION_SECRET. */
export async function holdsEncryptedSecrets(trx: Transaction): Promise<boolean> {
  return (
    (await hasEncryptedTenantTokenKeys(trx)) || (await hasSealedWebhookSecrets(trx)) || (await hasSealedClientSecrets(trx)) || (await hasEncryptedOidcKeys(trx))
  );
}

/** The sentence of every refusal, `act` saying what was refused ("rotate the tenant-token keys"). */
export function downgradeRefusal(act: string): string {
  return (
    `This instance runs without SERVICE_KEY_ENCRYPTION_SECRET but the database holds secrets encrypted with it, ` +
    `so it refuses to ${act} rather than store a secret in plain text; its operator must set SERVICE_KEY_ENCRYPTION_SECRET (the same on every instance).`
  );
}

/** Throws the 503 refusal when `secret` is unset and `trx`'s database holds encrypted secrets. */
export async function refusePlainSecretDowngrade(trx: Transaction, secret: string | null, act: string): Promise<void> {
  if (secret !== null) return;
  if (await holdsEncryptedSecrets(trx)) throw new ApiError('unavailable', downgradeRefusal(act), {}, { 'Retry-After': '60' });
}

/** Read at boot: does this instance lack the secret the database's encrypted secrets need? */
export async function missingEncryptionSecret(db: Database, secret: string | null): Promise<boolean> {
  if (secret !== null) return false;
  return withService(db, (trx) => holdsEncryptedSecrets(trx), { readOnly: true });
}

/**
 * Encrypts every webhook secret still stored in plain text (endpoints created before the secret
 * was set); run at boot by each instance with the secret. Rows are locked, so instances booting
 * together encrypt each once. Returns how many were encrypted.
 */
export async function encryptPlainWebhookSecrets(db: Database, secret: string): Promise<number> {
  return withService(db, async (trx) => {
    const plain = await selectPlainWebhookSecrets(trx);
    for (const row of plain) await updateWebhookSecret(trx, row.id, sealWebhookSecret(secret, row.id, row.secret));
    return plain.length;
  });
}

/** The same for the OIDC clients' secrets (clients registered before the secret was set). */
export async function encryptPlainClientSecrets(db: Database, secret: string): Promise<number> {
  return withService(db, async (trx) => {
    const plain = await selectPlainClientSecrets(trx);
    for (const row of plain) await updateClientStoredSecret(trx, row.client_id, sealClientSecret(secret, row.client_id, row.client_secret));
    return plain.length;
  });
}
