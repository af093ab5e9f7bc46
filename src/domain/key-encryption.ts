/**
 * Encryption at rest under SERVICE_KEY_ENCRYPTION_SECRET (docs/security.md#secrets-at-rest): the
 * tenant-token private keys and the webhook signing secrets. AES-256-GCM under a key derived from
 * the secret with HKDF-SHA256, a random salt per value and a different HKDF `info` per kind of
 * value; the row's id is the additional data, so an envelope moved to another row does not
 * decrypt. HKDF, not a password hash: the secret is required to be a long random string (config
 * checks its length).
 */
import crypto from 'node:crypto';

/** What `private_key` holds for an encrypted key. */
export interface EncryptedEnvelope {
  v: 1;
  kdf: 'hkdf-sha256';
  salt: string;
  iv: string;
  ciphertext: string;
  tag: string;
}

const TENANT_TOKEN_KEY_INFO = 'tenant-service tenant-token signing key v1';
const WEBHOOK_SECRET_INFO = 'tenant-service webhook secret v1';
const CLIENT_SECRET_INFO = 'tenant-service oidc client secret v1';
/** How a sealed secret starts in its text column (a plain webhook secret starts with `whsec_`). */
export const SEALED_WEBHOOK_SECRET_PREFIX = 'enc1.';

/** Thrown when a stored value cannot be used: encrypted under another secret, altered, or no secret configured. */
export class SecretDecryptionError extends Error {
  override name = 'SecretDecryptionError';
}

function deriveKey(secret: string, salt: Buffer, info: string): Buffer {
  return Buffer.from(crypto.hkdfSync('sha256', Buffer.from(secret, 'utf8'), salt, Buffer.from(info), 32));
}

function encrypt(secret: string, info: string, aad: string, plaintext: string): EncryptedEnvelope {
  const salt = crypto.randomBytes(16);
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', deriveKey(secret, salt, info), iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { v: 1, kdf: 'hkdf-sha256', salt: salt.toString('base64url'), iv: iv.toString('base64url'), ciphertext: ciphertext.toString('base64url'), tag: cipher.getAuthTag().toString('base64url') };
}

function decrypt(secret: string, info: string, aad: string, envelope: EncryptedEnvelope): string {
  const b = (s: string) => Buffer.from(s, 'base64url');
  const decipher = crypto.createDecipheriv('aes-256-gcm', deriveKey(secret, b(envelope.salt), info), b(envelope.iv));
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(b(envelope.tag));
  return Buffer.concat([decipher.update(b(envelope.ciphertext)), decipher.final()]).toString('utf8');
}

/** Encrypts `plaintext` for the key `kid`. */
export function encryptPrivateKey(secret: string, kid: string, plaintext: string): EncryptedEnvelope {
  return encrypt(secret, TENANT_TOKEN_KEY_INFO, kid, plaintext);
}

/** Decrypts an envelope of `kid`; throws when the secret is another one or the envelope was altered. */
export function decryptPrivateKey(secret: string, kid: string, envelope: EncryptedEnvelope): string {
  return decrypt(secret, TENANT_TOKEN_KEY_INFO, kid, envelope);
}

/** True for a webhook secret stored in plain text (`whsec_…`). */
export function isPlainWebhookSecret(stored: string): boolean {
  return !stored.startsWith(SEALED_WEBHOOK_SECRET_PREFIX);
}

/** `enc1.` + salt.iv.ciphertext.tag (base64url): a secret sealed for the row `id`. */
function seal(secret: string, info: string, id: string, plaintext: string): string {
  const e = encrypt(secret, info, id, plaintext);
  return `${SEALED_WEBHOOK_SECRET_PREFIX}${e.salt}.${e.iv}.${e.ciphertext}.${e.tag}`;
}

/** The plain text of a stored value: a plain one as is, a sealed one decrypted; `what` names it in errors. */
function open(secret: string | null, info: string, id: string, stored: string, what: string): string {
  if (!stored.startsWith(SEALED_WEBHOOK_SECRET_PREFIX)) return stored;
  if (secret === null) throw new SecretDecryptionError(`${what} is encrypted but SERVICE_KEY_ENCRYPTION_SECRET is not set.`);
  const [salt, iv, ciphertext, tag] = stored.slice(SEALED_WEBHOOK_SECRET_PREFIX.length).split('.');
  try {
    return decrypt(secret, info, id, { v: 1, kdf: 'hkdf-sha256', salt: salt!, iv: iv!, ciphertext: ciphertext!, tag: tag! });
  } catch {
    throw new SecretDecryptionError(`${what} does not decrypt with SERVICE_KEY_ENCRYPTION_SECRET (another secret?).`);
  }
}

/** The stored form of the webhook `webhookId`'s secret. */
export function sealWebhookSecret(secret: string, webhookId: string, plaintext: string): string {
  return seal(secret, WEBHOOK_SECRET_INFO, webhookId, plaintext);
}

/** The `whsec_…` secret of a stored value: a plain one as is, a sealed one decrypted (only to sign a delivery). */
export function openWebhookSecret(secret: string | null, webhookId: string, stored: string): string {
  return open(secret, WEBHOOK_SECRET_INFO, webhookId, stored, `The signing secret of webhook ${webhookId}`);
}

/** The stored form of an OIDC client's secret (sealed when SERVICE_KEY_ENCRYPTION_SECRET is set). */
export function sealClientSecret(secret: string, clientId: string, plaintext: string): string {
  return seal(secret, CLIENT_SECRET_INFO, clientId, plaintext);
}

/** An OIDC client's secret from its stored form. */
export function openClientSecret(secret: string | null, clientId: string, stored: string): string {
  return open(secret, CLIENT_SECRET_INFO, clientId, stored, `The secret of client ${clientId}`);
}

/**
 * A secret of another kind (`info` names the kind and version, e.g. 'tenant-service sso
 * connection secret v1'), sealed for the row `id`. For the kinds added after the ones above.
 */
export function sealSecret(secret: string, info: string, id: string, plaintext: string): string {
  return seal(secret, info, id, plaintext);
}

/** The plain text of a value sealed by `sealSecret` with the same `info` and `id` (a plain value as is). */
export function openSecret(secret: string | null, info: string, id: string, stored: string, what: string): string {
  return open(secret, info, id, stored, what);
}
