/**
 * Encryption at rest of the tenant-token private keys (SERVICE_KEY_ENCRYPTION_SECRET):
 * AES-256-GCM under a key derived from the secret with HKDF-SHA256 and a random salt per key,
 * the key id as additional data (an envelope moved to another row does not decrypt). HKDF, not a
 * password hash: the secret is required to be a long random string (config checks its length).
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

const INFO = Buffer.from('tenant-service tenant-token signing key v1');

function deriveKey(secret: string, salt: Buffer): Buffer {
  return Buffer.from(crypto.hkdfSync('sha256', Buffer.from(secret, 'utf8'), salt, INFO, 32));
}

/** Encrypts `plaintext` for the key `kid`. */
export function encryptPrivateKey(secret: string, kid: string, plaintext: string): EncryptedEnvelope {
  const salt = crypto.randomBytes(16);
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', deriveKey(secret, salt), iv);
  cipher.setAAD(Buffer.from(kid, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { v: 1, kdf: 'hkdf-sha256', salt: salt.toString('base64url'), iv: iv.toString('base64url'), ciphertext: ciphertext.toString('base64url'), tag: cipher.getAuthTag().toString('base64url') };
}

/** Decrypts an envelope of `kid`; throws when the secret is another one or the envelope was altered. */
export function decryptPrivateKey(secret: string, kid: string, envelope: EncryptedEnvelope): string {
  const b = (s: string) => Buffer.from(s, 'base64url');
  const decipher = crypto.createDecipheriv('aes-256-gcm', deriveKey(secret, b(envelope.salt)), b(envelope.iv));
  decipher.setAAD(Buffer.from(kid, 'utf8'));
  decipher.setAuthTag(b(envelope.tag));
  return Buffer.concat([decipher.update(b(envelope.ciphertext)), decipher.final()]).toString('utf8');
}
