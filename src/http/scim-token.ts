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
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Database } from '../db/tenant-scope';
import { findScimToken } from '../domain/scim/token';
import { scimTokenHash } from '../domain/directory-settings';
import { ApiError } from '../errors';
import { stateOf } from './request-state';

const BEARER = /^Bearer ([A-Za-z0-9_-]{1,200})$/;

/** Tokens whose tenant is remembered, at most (least recently used first out). */
const REMEMBERED_TOKENS = 1000;

export function scimTokenStage(db: Database): RequestHandler {
  const known = new Map<string, { tenantId: string; tokenId: string }>();
  const lookup = async (token: string) => {
    const hash = scimTokenHash(token);
    const held = known.get(hash);
    if (held) {
      known.delete(hash);
      known.set(hash, held);
      return held;
    }
    const found = await findScimToken(db, token);
    if (found) {
      known.set(hash, found);
      if (known.size > REMEMBERED_TOKENS) known.delete(known.keys().next().value!);
    }
    return found;
  };
  return async (req: Request, _res: Response, next: NextFunction) => {
    const state = stateOf(req);
    if (state.operation?.access !== 'scimToken') return next();
    try {
      const m = BEARER.exec(req.headers.authorization ?? '');
      const found = m ? await lookup(m[1]!) : null;
      // A remembered token found revoked inside its tenant's transaction is forgotten there.
      if (found) state.scim = { ...found, forget: () => known.delete(scimTokenHash(m![1]!)) };
      else state.authError = new ApiError('unauthorized', m ? 'The SCIM token is not valid (unknown or revoked).' : 'A SCIM bearer token is required: Authorization: Bearer scim_….');
      next();
    } catch (err) {
      next(err);
    }
  };
}
