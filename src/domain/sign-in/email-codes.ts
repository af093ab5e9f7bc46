/**
 * One-time codes by mail at the provider's sign-in page (docs/sign-in.md#the-sign-in-page).
 *
 * A code is 8 random digits, lives 10 minutes, and is accepted only in the sign-in (the
 * provider's interaction, bound to the browser by its cookie) that asked for it. 5 wrong tries
 * and the code is dead; a new code for the same sign-in kills the one before. Only an HMAC of
 * the code (keyed by its row id) is stored. At most 5 codes per email and 20 per client address
 * in any 15 minutes. Mail is sent by the caller after this commits (src/mail/sign-in-code-mail.ts).
 */
import crypto from 'node:crypto';
import { countRecentCodes, countWrongAttempt, insertEmailCode, killEmailCode, lockEmailForCodes, lockLiveCode } from '../../db/queries/sign-in-codes';
import { withService, type Database } from '../../db/tenant-scope';

export const CODE_DIGITS = 8;
export const CODE_TTL_SECONDS = 600;
export const CODE_MAX_ATTEMPTS = 5;
export const CODE_WINDOW_SECONDS = 900;
export const CODES_PER_EMAIL = 5;
export const CODES_PER_ADDRESS = 20;

/** A person's email as sign-in keeps it: trimmed, lower-case; null when it cannot be an address. */
export function normalizeEmail(input: unknown): string | null {
  if (typeof input !== 'string') return null;
  const email = input.trim().toLowerCase();
  if (email.length < 3 || email.length > 320) return null;
  // One @, something on both sides, a dot in the domain, no spaces or control characters.
  if ([...email].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) return null;
  if (!/^[^\s@<>()[\]\\,;:"]+@[a-z0-9\u00a1-\uffff-]+(\.[a-z0-9\u00a1-\uffff-]+)+$/u.test(email)) return null;
  return email;
}

/** A code as typed: digits only (spaces and dashes dropped); null when it cannot be one. */
export function normalizeCode(input: unknown): string | null {
  if (typeof input !== 'string' || input.length > 40) return null;
  const code = input.replace(/[\s-]/g, '');
  return new RegExp(`^[0-9]{${CODE_DIGITS}}$`).test(code) ? code : null;
}

function hashCode(id: string, code: string): Buffer {
  return crypto.createHmac('sha256', Buffer.from(id, 'utf8')).update(code, 'utf8').digest();
}

function newCode(): string {
  return String(crypto.randomInt(0, 10 ** CODE_DIGITS)).padStart(CODE_DIGITS, '0');
}

export type IssuedCode =
  | { readonly kind: 'issued'; readonly code: string; readonly expiresAt: Date }
  | { readonly kind: 'rate_limited'; readonly scope: 'email' | 'address' };

/** Makes a code for `email` in the sign-in `interactionUid`, unless a rate limit refuses. */
export async function issueEmailCode(db: Database, req: { email: string; interactionUid: string; ip: string | null }): Promise<IssuedCode> {
  return withService(db, async (trx) => {
    await lockEmailForCodes(trx, req.email);
    const counts = await countRecentCodes(trx, { email: req.email, ip: req.ip, windowSeconds: CODE_WINDOW_SECONDS });
    if (counts.byEmail >= CODES_PER_EMAIL) return { kind: 'rate_limited', scope: 'email' } as const;
    if (counts.byAddress >= CODES_PER_ADDRESS) return { kind: 'rate_limited', scope: 'address' } as const;
    const id = crypto.randomUUID();
    const code = newCode();
    const row = await insertEmailCode(trx, { id, email: req.email, interactionUid: req.interactionUid, codeHash: hashCode(id, code), ip: req.ip, ttlSeconds: CODE_TTL_SECONDS });
    return { kind: 'issued', code, expiresAt: row.expires_at } as const;
  });
}

export type CodeCheck =
  | { readonly kind: 'accepted'; readonly email: string }
  | { readonly kind: 'wrong'; readonly triesLeft: number; readonly email: string }
  /** No live code in this sign-in: never asked, used, replaced, or dead after too many tries. */
  | { readonly kind: 'unknown' }
  | { readonly kind: 'expired'; readonly email: string };

/** Checks a code typed in the sign-in `interactionUid`: accepted once, else why not. */
export async function checkEmailCode(db: Database, req: { interactionUid: string; code: string | null }): Promise<CodeCheck> {
  return withService(db, async (trx) => {
    const { row, now } = await lockLiveCode(trx, req.interactionUid);
    if (!row) return { kind: 'unknown' } as const;
    if (row.expires_at.getTime() <= now.getTime()) {
      await killEmailCode(trx, row.id);
      return { kind: 'expired', email: row.email } as const;
    }
    const typed = req.code === null ? null : hashCode(row.id, req.code);
    if (typed !== null && crypto.timingSafeEqual(typed, row.code_hash)) {
      await killEmailCode(trx, row.id);
      return { kind: 'accepted', email: row.email } as const;
    }
    const attempts = await countWrongAttempt(trx, row.id, CODE_MAX_ATTEMPTS);
    return { kind: 'wrong', triesLeft: Math.max(0, CODE_MAX_ATTEMPTS - attempts), email: row.email } as const;
  });
}
