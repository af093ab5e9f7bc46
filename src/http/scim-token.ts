/**
 * Stage (after the operation is matched, before the rate limit): the SCIM token of an operation
 * whose `x-access` is `scimToken` (docs/directory-sync.md#connecting-a-directory). The token
 * names the tenant: it is found by its SHA-256 with the platform reader, and the request goes on
 * with that tenant and token id; no JWT is read and X-Tenant plays no part. A missing, malformed
 * or unknown token is recorded like a JWT's failure and raised after the request is counted
 * (per client address, there being no token to count by).
 *
 * Which tenant a token names is remembered (by its hash, a bounded map per app): a directory
 * sends hundreds of requests a minute, and the lookup is a transaction of its own. Remembering
 * never lets a revoked token in: every SCIM request checks, inside its tenant's transaction, that
 * the token still exists (src/http/scim-dispatch.ts). Unknown tokens are never remembered.
 *
 * An unknown token costs no more than an unknown JWT (docs/directory-sync.md#connecting-a-directory):
 * each client address may have UNKNOWN_LOOKUPS lookups of tokens not remembered per minute,
 * counted before the lookup (a lookup that finds its token gives its count back; requests with
 * the same token at once share one lookup). Past that, a
 * token not remembered is refused without a database transaction until the minute is over; a
 * remembered token is still served.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import type { Database } from '../db/tenant-scope';
import { findScimToken } from '../domain/scim/token';
import { scimTokenHash } from '../domain/directory-settings';
import { ApiError } from '../errors';
import { stateOf } from './request-state';

const BEARER = /^Bearer ([A-Za-z0-9_-]{1,200})$/;

/** Tokens whose tenant is remembered, at most (least recently used first out). */
const REMEMBERED_TOKENS = 1000;
/** Lookups of tokens not remembered that an address may spend per window, unknown ones kept. */
export const UNKNOWN_LOOKUPS = 3;
const LOOKUP_WINDOW_MS = 60_000;
/** Addresses whose lookups are counted, at most (the oldest window goes first). */
const COUNTED_ADDRESSES = 10_000;

const UNKNOWN = 'The SCIM token is not valid (unknown or revoked).';
const NOT_LOOKED_UP = `The SCIM token was not looked up: this client address sent unknown SCIM tokens (more than ${UNKNOWN_LOOKUPS} a minute); retry after a minute with a valid token.`;

/** Per client address: lookups of tokens not remembered in the current window (counted before they run). */
class LookupBudget {
  private readonly spent = new Map<string, { n: number; since: number }>();

  /** Counts one lookup for `address`; false (nothing counted) when its window's budget is spent. */
  take(address: string): boolean {
    const now = Date.now();
    let b = this.spent.get(address);
    if (b && now - b.since >= LOOKUP_WINDOW_MS) {
      this.spent.delete(address);
      b = undefined;
    }
    if (!b) {
      if (this.spent.size >= COUNTED_ADDRESSES) this.spent.delete(this.spent.keys().next().value!);
      b = { n: 0, since: now };
      this.spent.set(address, b);
    }
    if (b.n >= UNKNOWN_LOOKUPS) return false;
    b.n++;
    return true;
  }

  /** A lookup that found its token: it does not count. */
  giveBack(address: string): void {
    const b = this.spent.get(address);
    if (b && b.n > 0) b.n--;
  }
}

export function scimTokenStage(db: Database): RequestHandler {
  const known = new Map<string, { tenantId: string; tokenId: string }>();
  const budget = new LookupBudget();
  const inflight = new Map<string, Promise<{ tenantId: string; tokenId: string } | null>>();
  /** The token's tenant; null when unknown; 'unchecked' when the address's budget is spent. */
  const lookup = async (token: string, address: string) => {
    const hash = scimTokenHash(token);
    const held = known.get(hash);
    if (held) {
      known.delete(hash);
      known.set(hash, held);
      return held;
    }
    // Requests with the same token at once (a directory's burst) share one lookup and one count.
    const pending = inflight.get(hash);
    if (pending) return pending;
    if (!budget.take(address)) return 'unchecked' as const;
    const looked = findScimToken(db, token).then((found) => {
      if (found) {
        budget.giveBack(address);
        known.set(hash, found);
        if (known.size > REMEMBERED_TOKENS) known.delete(known.keys().next().value!);
      }
      return found;
    });
    inflight.set(hash, looked);
    try {
      return await looked;
    } finally {
      inflight.delete(hash);
    }
  };
  return async (req: Request, _res: Response, next: NextFunction) => {
    const state = stateOf(req);
    if (state.operation?.access !== 'scimToken') return next();
    try {
      const m = BEARER.exec(req.headers.authorization ?? '');
      // The rate limit's address key (an IPv6 client's /56 is one address).
      const ip = state.clientIp(req);
      const found = m ? await lookup(m[1]!, ip ? ipKeyGenerator(ip) : 'unknown') : null;
      // A remembered token found revoked inside its tenant's transaction is forgotten there.
      if (found && found !== 'unchecked') state.scim = { ...found, forget: () => known.delete(scimTokenHash(m![1]!)) };
      else state.authError = new ApiError('unauthorized', found === 'unchecked' ? NOT_LOOKED_UP : m ? UNKNOWN : 'A SCIM bearer token is required: Authorization: Bearer scim_….');
      next();
    } catch (err) {
      next(err);
    }
  };
}
