/**
 * The provider's signing keys (docs/sign-in.md#signing-keys): RS256, shared by every instance
 * through `oidc_signing_keys`, created by whichever instance starts first, private halves
 * encrypted under SERVICE_KEY_ENCRYPTION_SECRET when it is set (the envelope of tenant-token
 * keys, src/domain/key-encryption.ts). Rotated like tenant-token keys: the next key is published
 * `publishDelaySeconds` before it signs, and the previous one stays published until the last
 * token it signed has expired. Which key signs is decided by the database's clock.
 *
 * Also the cookie-signing keys: derived from SERVICE_KEY_ENCRYPTION_SECRET when set, else a
 * random secret stored once in `oidc_provider_secrets`, so every instance verifies the cookies
 * another set.
 */
import crypto from 'node:crypto';
import {
  deleteUnpublishedOidcKeys,
  ensureProviderSecret,
  insertOidcKey,
  lockOidcKeys,
  retireOidcKey,
  selectLatestOidcKey,
  selectPublishedOidcKeys,
  type NewOidcKey,
} from '../db/queries/oidc-keys';
import type { OidcSigningKey } from '../context/records';
import { withService, type Database } from '../db/tenant-scope';
import { decryptPrivateKey, encryptPrivateKey, SecretDecryptionError, type EncryptedEnvelope } from '../domain/key-encryption';
import { downgradeRefusal, holdsEncryptedSecrets, refusePlainSecretDowngrade } from '../domain/secrets-at-rest';

/** Default delay between publishing a key and signing with it (as for tenant-token keys). */
export const OIDC_PUBLISH_DELAY_SECONDS = 900;

/**
 * How long a retired key stays published after it stops signing: the longest lifetime of what it
 * signs (ID and access tokens, 15 minutes, ./configuration.ts) and a minute of margin.
 */
export const OIDC_KEEP_PUBLISHED_SECONDS = 15 * 60 + 60;

/** A private JWK as the protocol library takes it. */
export type PrivateJwk = Record<string, unknown> & { kid: string };

/** The key set as one instance uses it: private JWKs, the signing key first. */
export interface LoadedKeys {
  readonly keys: readonly PrivateJwk[];
  /** Changes whenever the set or its signer changes: the provider is rebuilt then. */
  readonly signature: string;
  /** Database clock minus this process's clock, in ms. */
  readonly clockOffsetMs: number;
  /** The earliest instant (this process's clock) at which the signer may change: a future `signs_from` or `signs_until`. */
  readonly nextChangeAt: number | null;
}

/** Thrown when the keys cannot be used: the provider answers 503 until its operator fixes it. */
export class OidcKeysUnavailableError extends Error {
  override name = 'OidcKeysUnavailableError';
}

function generateKey(secret: string | null): NewOidcKey {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = privateKey.export({ format: 'jwk' }) as Record<string, string>;
  // RFC 7638 thumbprint: the required members of an RSA key in lexicographic order.
  const kid = crypto.createHash('sha256').update(JSON.stringify({ e: jwk.e, kty: jwk.kty, n: jwk.n })).digest('base64url');
  const publicJwk = { kty: jwk.kty, n: jwk.n, e: jwk.e, kid, alg: 'RS256', use: 'sig' };
  if (secret === null) return { kid, publicJwk, privateKey: { ...jwk }, encryption: 'none' };
  return { kid, publicJwk, privateKey: { ...encryptPrivateKey(secret, kid, JSON.stringify(jwk)) }, encryption: 'aes-256-gcm' };
}

function privateJwkOf(row: OidcSigningKey, secret: string | null): PrivateJwk {
  let jwk: Record<string, unknown>;
  if (row.private_key_encryption === 'none') jwk = row.private_key;
  else {
    if (secret === null) throw new SecretDecryptionError(`Provider signing key ${row.kid} is encrypted but SERVICE_KEY_ENCRYPTION_SECRET is not set.`);
    try {
      jwk = JSON.parse(decryptPrivateKey(secret, row.kid, row.private_key as unknown as EncryptedEnvelope)) as Record<string, unknown>;
    } catch {
      throw new SecretDecryptionError(`Provider signing key ${row.kid} does not decrypt with SERVICE_KEY_ENCRYPTION_SECRET (another secret?).`);
    }
  }
  return { ...jwk, kid: row.kid, alg: 'RS256', use: 'sig' };
}

/** Creates the first key unless one exists; false when a plain one would sit beside encrypted secrets. */
async function ensureFirstKey(db: Database, secret: string | null): Promise<boolean> {
  return withService(db, async (trx) => {
    if (await selectLatestOidcKey(trx)) return true;
    await lockOidcKeys(trx);
    if (await selectLatestOidcKey(trx)) return true;
    if (secret === null && (await holdsEncryptedSecrets(trx))) return false;
    await insertOidcKey(trx, generateKey(secret), 0);
    return true;
  });
}

/** Reads the key set (creating the first key when there is none) and opens the private halves. */
export async function loadOidcKeys(db: Database, secret: string | null): Promise<LoadedKeys> {
  const started = Date.now();
  let read = await withService(db, (trx) => selectPublishedOidcKeys(trx), { readOnly: true });
  if (!read.rows.some((r) => r.signs_until === null)) {
    if (!(await ensureFirstKey(db, secret))) throw new OidcKeysUnavailableError(downgradeRefusal('create the OpenID provider\u2019s signing key'));
    read = await withService(db, (trx) => selectPublishedOidcKeys(trx), { readOnly: true });
  }
  const offset = read.now.getTime() - started;
  const now = read.now.getTime();
  const signer = signerAt(read.rows, now);
  if (!signer) throw new OidcKeysUnavailableError('The OpenID provider has no signing key yet; retry.');
  let keys: PrivateJwk[];
  try {
    keys = [signer, ...read.rows.filter((r) => r !== signer)].map((r) => privateJwkOf(r, secret));
  } catch (err) {
    if (err instanceof SecretDecryptionError) throw new OidcKeysUnavailableError(err.message);
    throw err;
  }
  const changes = read.rows.flatMap((r) => [r.signs_from.getTime(), r.signs_until?.getTime() ?? Infinity, r.published_until?.getTime() ?? Infinity]).filter((t) => t > now);
  const next = changes.length ? Math.min(...changes) : Infinity;
  return {
    keys,
    signature: [signer.kid, ...read.rows.map((r) => r.kid)].join(','),
    clockOffsetMs: offset,
    nextChangeAt: Number.isFinite(next) ? next - offset : null,
  };
}

/** The key signing at `now` (database clock): the latest `signs_from` not in the future and not retired. */
function signerAt(rows: readonly OidcSigningKey[], now: number): OidcSigningKey | undefined {
  let best: OidcSigningKey | undefined;
  for (const r of rows) {
    if (r.signs_from.getTime() > now) continue;
    if (r.signs_until !== null && r.signs_until.getTime() <= now) continue;
    if (!best || r.signs_from > best.signs_from) best = r;
  }
  return best;
}

export interface OidcRotationResult {
  readonly kid: string;
  readonly signsFrom: Date;
  readonly previousKid: string | null;
  readonly previousPublishedUntil: Date | null;
}

/**
 * Makes the next key: published now, signing after `publishDelaySeconds`; the current newest key
 * signs until then and stays published `keepPublishedSeconds` longer (the longest lifetime of a
 * token it signs, and a margin).
 */
export async function rotateOidcKeys(
  db: Database,
  secret: string | null,
  timing: { publishDelaySeconds: number; keepPublishedSeconds: number },
): Promise<OidcRotationResult> {
  return withService(db, async (trx) => {
    await lockOidcKeys(trx);
    await refusePlainSecretDowngrade(trx, secret, 'rotate the OpenID provider\u2019s signing keys');
    const latest = await selectLatestOidcKey(trx, true);
    const delay = latest ? timing.publishDelaySeconds : 0;
    const previous = latest ? await retireOidcKey(trx, latest.kid, delay, timing.keepPublishedSeconds) : null;
    const next = await insertOidcKey(trx, generateKey(secret), delay);
    await deleteUnpublishedOidcKeys(trx);
    return { kid: next.kid, signsFrom: next.signs_from, previousKid: previous?.kid ?? null, previousPublishedUntil: previous?.published_until ?? null };
  });
}

const COOKIE_KEY_INFO = 'tenant-service oidc cookie keys v1';

/** The cookie-signing keys every instance shares (see the module comment). */
export async function cookieKeys(db: Database, secret: string | null): Promise<string[]> {
  if (secret !== null) {
    return [Buffer.from(crypto.hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.alloc(0), Buffer.from(COOKIE_KEY_INFO), 32)).toString('base64url')];
  }
  const stored = await withService(db, (trx) => ensureProviderSecret(trx, 'cookie_keys', crypto.randomBytes(32).toString('base64url')));
  return [stored];
}
