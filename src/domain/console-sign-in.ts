/**
 * One-time codes of console sign-in links (docs/console.md#the-local-provider-tenantctl-console).
 *
 * `tenantctl console` mints a token and hands it to `createSignInCode` (as the bearer of
 * `POST /api/console/codes`); the link it prints carries only the code. The console exchanges
 * the code once (`redeemSignInCode`). A link found later in browser history is then spent.
 *
 * What is stored is useless without the code: the row is found by an HKDF hash of the code, and
 * the token is sealed with AES-256-GCM under another key derived from the code (the row id as
 * additional data). The code is 32 random bytes, so neither can be searched for. A code is
 * spent by deleting its row in the transaction that hands the token out: of two exchanges at
 * once, the second waits on the first's row lock and then finds nothing.
 */
import crypto from 'node:crypto';
import { insertConsoleSignInCode, takeConsoleSignInCode } from '../db/queries/console-sign-in-codes';
import { withService, type Database } from '../db/tenant-scope';
import { ApiError } from '../errors';
import { recordEvent, type EventOrigin } from './events';
import type { ConsoleSignInCode } from '../context/records';

/** A code's lifetime unless the request says otherwise, and the most it may ask for. */
export const SIGN_IN_CODE_DEFAULT_TTL_SECONDS = 300;
export const SIGN_IN_CODE_MAX_TTL_SECONDS = 900;

/** What the sealed token column holds. */
interface SealedToken {
  v: 1;
  iv: string;
  ciphertext: string;
  tag: string;
}

function derive(code: string, purpose: 'lookup' | 'seal'): Buffer {
  return Buffer.from(crypto.hkdfSync('sha256', Buffer.from(code, 'utf8'), Buffer.alloc(0), `tenant-service console sign-in code ${purpose} v1`, 32));
}

function seal(code: string, id: string, token: string): SealedToken {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', derive(code, 'seal'), iv);
  cipher.setAAD(Buffer.from(id, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()]);
  return { v: 1, iv: iv.toString('base64url'), ciphertext: ciphertext.toString('base64url'), tag: cipher.getAuthTag().toString('base64url') };
}

/** The token of a row; null when the envelope does not open with this code (never expected). */
function unseal(code: string, row: ConsoleSignInCode): string | null {
  const s = row.sealed_token as unknown as SealedToken;
  try {
    const b = (v: string) => Buffer.from(v, 'base64url');
    const decipher = crypto.createDecipheriv('aes-256-gcm', derive(code, 'seal'), b(s.iv));
    decipher.setAAD(Buffer.from(row.id, 'utf8'));
    decipher.setAuthTag(b(s.tag));
    return Buffer.concat([decipher.update(b(s.ciphertext)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

/** Who the token names (not secret: the events say who a link signed in). */
export interface SignInIdentity {
  readonly issuer: string;
  readonly subject: string;
  readonly isPlatformAdmin: boolean;
}

export interface CreatedSignInCode {
  readonly code: string;
  readonly expiresAt: Date;
  readonly expiresIn: number;
}

/**
 * The lifetime of a new code: what was asked for, cut to the token's remaining life, so a code
 * never outlives its token. Null when the token has less than a second left.
 */
export function signInCodeLifetime(askedSeconds: number, tokenExpiresAt: number | null, nowMs: number): number | null {
  const left = tokenExpiresAt === null ? Infinity : Math.floor(tokenExpiresAt - nowMs / 1000);
  const ttl = Math.min(askedSeconds, left);
  return ttl >= 1 ? ttl : null;
}

/** Makes a one-time code for `token` (the request's own bearer token). */
export async function createSignInCode(
  db: Database,
  origin: EventOrigin,
  input: { token: string; identity: SignInIdentity; tokenExpiresAt: number | null; ttlSeconds: number },
): Promise<CreatedSignInCode> {
  const ttl = signInCodeLifetime(input.ttlSeconds, input.tokenExpiresAt, Date.now());
  if (ttl === null) throw new ApiError('badRequest', 'The bearer token expires within a second: a sign-in code for it could never be used. Use a token with a longer lifetime.');
  const code = crypto.randomBytes(32).toString('base64url');
  const id = crypto.randomUUID();
  const row = await withService(db, async (trx) => {
    const inserted = await insertConsoleSignInCode(trx, {
      id,
      codeHash: derive(code, 'lookup'),
      sealedToken: { ...seal(code, id, input.token) },
      issuer: input.identity.issuer,
      subject: input.identity.subject,
      platformAdmin: input.identity.isPlatformAdmin,
      ttlSeconds: ttl,
    });
    await recordEvent(trx, origin, { action: 'sign_in_link.created', tenantId: null, target: { type: 'sign_in_link', id }, data: eventData(inserted) });
    return inserted;
  });
  return { code, expiresAt: row.expires_at, expiresIn: ttl };
}

/** Whether a found row may be redeemed now: the one decision of an exchange. */
export function decideRedemption(row: Pick<ConsoleSignInCode, 'expires_at'> | undefined, now: Date): 'redeem' | 'expired' | 'unknown' {
  if (!row) return 'unknown';
  return row.expires_at.getTime() > now.getTime() ? 'redeem' : 'expired';
}

/** The one answer for a used, expired or unknown code: it never says which. */
export function codeNotAccepted(): ApiError {
  return new ApiError(
    'signInCodeNotAccepted',
    'This sign-in link is not valid any more (a link signs in once, within minutes of being printed). Print a new one with tenantctl console.',
  );
}

export interface RedeemedSignIn {
  readonly accessToken: string;
  /** Seconds until the token expires; null when it has no `exp`. */
  readonly expiresIn: number | null;
}

/** Exchanges a code for its token, once; a used, expired or unknown code is the same 400. */
export async function redeemSignInCode(db: Database, origin: EventOrigin, code: string): Promise<RedeemedSignIn> {
  const result = await withService(db, async (trx) => {
    // Taken (deleted) first: an expired code goes too, as it can never be used.
    const { row, now } = await takeConsoleSignInCode(trx, derive(code, 'lookup'));
    if (decideRedemption(row, now) !== 'redeem') return null;
    const token = unseal(code, row!);
    if (token === null) return null;
    // The request carries no token: its actor is whom the link signs in.
    const actor = { issuer: row!.issuer, subject: row!.subject, email: null, platformAdmin: row!.platform_admin };
    await recordEvent(trx, { ...origin, actor }, { action: 'sign_in_link.redeemed', tenantId: null, target: { type: 'sign_in_link', id: row!.id }, data: eventData(row!) });
    return token;
  });
  if (result === null) throw codeNotAccepted();
  return { accessToken: result, expiresIn: secondsLeft(result, Date.now()) };
}

function eventData(row: ConsoleSignInCode): Record<string, unknown> {
  return { issuer: row.issuer, subject: row.subject, platform_admin: row.platform_admin, expires_at: row.expires_at.toISOString() };
}

/** Seconds until a JWT's `exp` (0 at the earliest); null when it has none. */
function secondsLeft(token: string, nowMs: number): number | null {
  try {
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof claims.exp === 'number' ? Math.max(0, Math.floor(claims.exp - nowMs / 1000)) : null;
  } catch {
    return null;
  }
}
