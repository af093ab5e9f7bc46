/**
 * The `local` provider's signing key: an RSA key pair made on first start and kept in
 * SERVICE_DATA_DIR (mode 0600). Its public half is served at /.well-known/jwks.json and
 * `tenantctl token` signs with the private half. Another data dir has another key, so tokens
 * from one are refused by the other.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import jwt from 'jsonwebtoken';

export const LOCAL_ISSUER = 'urn:tenant-service:local';
export const LOCAL_KEY_FILE = 'local-signing-key.json';

export interface LocalKeys {
  readonly kid: string;
  readonly publicKey: crypto.KeyObject;
  readonly privateKey: crypto.KeyObject;
  /** The public key as a JWK (with kid, alg and use). */
  readonly jwk: Record<string, unknown>;
}

/** Loads the key from `<dataDir>/local-signing-key.json`, creating it on first use. */
export function loadOrCreateLocalKeys(dataDir: string): LocalKeys {
  const file = path.join(dataDir, LOCAL_KEY_FILE);
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o755 });
  if (!fs.existsSync(file)) {
    const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwk = privateKey.export({ format: 'jwk' });
    try {
      fs.writeFileSync(file, JSON.stringify(jwk), { mode: 0o600, flag: 'wx' });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e; // another process made it first
    }
  }
  fs.chmodSync(file, 0o600);
  const privateJwk = JSON.parse(fs.readFileSync(file, 'utf8')) as crypto.JsonWebKey;
  const privateKey = crypto.createPrivateKey({ key: privateJwk, format: 'jwk' });
  return fromPrivateKey(privateKey);
}

/** Reads the local key without creating one (for `tenantctl`); null when there is none. */
export function readLocalKeys(dataDir: string): LocalKeys | null {
  const file = path.join(dataDir, LOCAL_KEY_FILE);
  if (!fs.existsSync(file)) return null;
  const privateJwk = JSON.parse(fs.readFileSync(file, 'utf8')) as crypto.JsonWebKey;
  return fromPrivateKey(crypto.createPrivateKey({ key: privateJwk, format: 'jwk' }));
}

function fromPrivateKey(privateKey: crypto.KeyObject): LocalKeys {
  const publicKey = crypto.createPublicKey(privateKey);
  const pub = publicKey.export({ format: 'jwk' }) as { kty: string; n: string; e: string };
  // RFC 7638 thumbprint: the required members in lexicographic order
  const kid = crypto.createHash('sha256').update(JSON.stringify({ e: pub.e, kty: pub.kty, n: pub.n })).digest('base64url');
  return Object.freeze({ kid, publicKey, privateKey, jwk: Object.freeze({ ...pub, kid, alg: 'RS256', use: 'sig' }) });
}

export interface LocalTokenOptions {
  sub: string;
  email?: string;
  name?: string;
  tenant?: string;
  admin?: boolean;
  /** Lifetime in seconds (default 3600). */
  ttlSeconds?: number;
  /** Claim that carries roles (default `roles`). */
  roleClaim?: string;
  adminRole?: string;
  extraClaims?: Record<string, unknown>;
}

/** Mints an RS256 token signed with the local key. */
export function signLocalToken(keys: LocalKeys, opts: LocalTokenOptions): string {
  const claims: Record<string, unknown> = { ...(opts.extraClaims ?? {}) };
  if (opts.email) {
    claims.email = opts.email;
    claims.email_verified = true;
  }
  if (opts.name) claims.name = opts.name;
  if (opts.tenant) claims.tenant = opts.tenant;
  if (opts.admin) setPath(claims, opts.roleClaim ?? 'roles', [opts.adminRole ?? 'admin']);
  return jwt.sign(claims, keys.privateKey, {
    algorithm: 'RS256',
    keyid: keys.kid,
    issuer: LOCAL_ISSUER,
    subject: opts.sub,
    expiresIn: opts.ttlSeconds ?? 3600,
  });
}

/** Sets a claim where readClaim (src/context/claims.ts) reads it: a namespaced name (`/` or `:`) as one key, else by dot path. */
function setPath(target: Record<string, unknown>, dotted: string, value: unknown): void {
  const parts = /[/:]/.test(dotted) ? [dotted] : dotted.split('.');
  let cur = target;
  for (const p of parts.slice(0, -1)) {
    if (!cur[p] || typeof cur[p] !== 'object') cur[p] = {};
    cur = cur[p] as Record<string, unknown>;
  }
  cur[parts[parts.length - 1]!] = value;
}
