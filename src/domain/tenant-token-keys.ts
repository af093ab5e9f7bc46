/**
 * The tenant-token key set (docs/tenant-tokens.md#the-key-set): ES256 keys shared by every instance
 * through PostgreSQL, created once whoever starts first, rotated so that verifiers always know a
 * key before a token carries it. Private keys are encrypted at rest when a secret is configured and
 * never leave this module's callers except as a KeyObject for signing.
 */
import crypto from 'node:crypto';
import {
  deleteUnpublishedTenantTokenKeys,
  insertTenantTokenKey,
  lockTenantTokenKeys,
  retireTenantTokenKey,
  selectLatestTenantTokenKey,
  selectPublishedTenantTokenKeys,
  type NewTenantTokenKey,
  type TenantTokenKeyRow,
} from '../db/queries/tenant-token-keys';
import { withService, type Database } from '../db/tenant-scope';
import { decryptPrivateKey, encryptPrivateKey, SecretDecryptionError, type EncryptedEnvelope } from './key-encryption';
import { recordEvent, type EventOrigin } from './events';
import { holdsEncryptedSecrets, refusePlainSecretDowngrade } from './secrets-at-rest';

export type { TenantTokenKeyRow } from '../db/queries/tenant-token-keys';

/** When a rotation takes effect. */
export interface RotationTiming {
  /** The next key is published this long before it signs (verifiers refresh their JWKS meanwhile). */
  readonly publishDelaySeconds: number;
  /** The previous key stays published this long after it stops signing (its tokens' lifetime and a margin). */
  readonly keepPublishedSeconds: number;
}

export interface RotationResult {
  readonly kid: string;
  readonly signsFrom: Date;
  readonly previousKid: string | null;
  readonly previousPublishedUntil: Date | null;
}

/** A new ES256 key pair, its private half as stored (encrypted when `secret` is set). */
function generateKey(secret: string | null): NewTenantTokenKey {
  const { privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = privateKey.export({ format: 'jwk' }) as { kty: string; crv: string; x: string; y: string; d: string };
  // RFC 7638 thumbprint: the required members in lexicographic order.
  const kid = crypto.createHash('sha256').update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y })).digest('base64url');
  const publicJwk = { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, kid, alg: 'ES256', use: 'sig' };
  if (secret === null) return { kid, publicJwk, privateKey: { ...jwk }, encryption: 'none' };
  return { kid, publicJwk, privateKey: { ...encryptPrivateKey(secret, kid, JSON.stringify(jwk)) }, encryption: 'aes-256-gcm' };
}

/**
 * Creates the first key unless one exists; two instances calling it at once end with one key.
 * Returns false, creating nothing, when `secret` is unset and the database holds encrypted
 * secrets: a plain key is never written beside them (docs/security.md#secrets-at-rest).
 */
export async function ensureTenantTokenKey(db: Database, secret: string | null): Promise<boolean> {
  return withService(db, async (trx) => {
    if (await selectLatestTenantTokenKey(trx)) return true;
    await lockTenantTokenKeys(trx);
    if (await selectLatestTenantTokenKey(trx)) return true;
    if (secret === null && (await holdsEncryptedSecrets(trx))) return false;
    // The first key signs at once: no verifier can hold an older copy of an empty key set.
    await insertTenantTokenKey(trx, generateKey(secret), 0);
    return true;
  });
}

/** The published keys and the database's clock (instances sign by it, whatever their own clock). */
export async function readTenantTokenKeys(db: Database): Promise<{ rows: TenantTokenKeyRow[]; now: Date }> {
  return withService(db, (trx) => selectPublishedTenantTokenKeys(trx), { readOnly: true });
}

/**
 * Makes the next key: published now, signing after `publishDelaySeconds`; the current newest key
 * signs until then and stays published `keepPublishedSeconds` longer. Keys past their
 * publication are deleted. Records `tenant_token.key_rotated` (key ids and times only).
 */
export async function rotateTenantTokenKeys(db: Database, origin: EventOrigin, secret: string | null, timing: RotationTiming): Promise<RotationResult> {
  return withService(db, async (trx) => {
    await lockTenantTokenKeys(trx);
    await refusePlainSecretDowngrade(trx, secret, 'rotate the tenant-token signing keys');
    const latest = await selectLatestTenantTokenKey(trx, true);
    const delay = latest ? timing.publishDelaySeconds : 0;
    const previous = latest ? await retireTenantTokenKey(trx, latest.kid, delay, timing.keepPublishedSeconds) : null;
    const next = await insertTenantTokenKey(trx, generateKey(secret), delay);
    await deleteUnpublishedTenantTokenKeys(trx);
    const result: RotationResult = {
      kid: next.kid,
      signsFrom: next.signs_from,
      previousKid: previous?.kid ?? null,
      previousPublishedUntil: previous?.published_until ?? null,
    };
    await recordEvent(trx, origin, {
      action: 'tenant_token.key_rotated',
      tenantId: null,
      target: { type: 'tenant_token_key', id: next.kid },
      data: {
        kid: next.kid,
        algorithm: 'ES256',
        signs_from: next.signs_from.toISOString(),
        previous_kid: result.previousKid,
        previous_signs_until: previous?.signs_until?.toISOString() ?? null,
        previous_published_until: result.previousPublishedUntil?.toISOString() ?? null,
      },
    });
    return result;
  });
}

/** The private key of a row, decrypted with `secret` when it is stored encrypted. */
export function privateKeyOf(row: TenantTokenKeyRow, secret: string | null): crypto.KeyObject {
  let jwk: crypto.JsonWebKey;
  if (row.private_key_encryption === 'none') {
    jwk = row.private_key as crypto.JsonWebKey;
  } else {
    if (secret === null) throw new SecretDecryptionError(`Tenant-token key ${row.kid} is encrypted but SERVICE_KEY_ENCRYPTION_SECRET is not set.`);
    try {
      jwk = JSON.parse(decryptPrivateKey(secret, row.kid, row.private_key as unknown as EncryptedEnvelope)) as crypto.JsonWebKey;
    } catch {
      throw new SecretDecryptionError(`Tenant-token key ${row.kid} does not decrypt with SERVICE_KEY_ENCRYPTION_SECRET (another secret?).`);
    }
  }
  return crypto.createPrivateKey({ key: jwk, format: 'jwk' });
}
