/**
 * Stage (after the operation is matched, before the rate limit): the SCIM token of an operation
 * whose `x-access` is `scimToken` (docs/directory-sync.md#connecting-a-directory). The token
 * names the tenant: it is found by its SHA-256 with the platform reader, and the request goes on
 * with that tenant and token id; no JWT is read and X-Tenant plays no part. A missing, malformed
 * or unknown token is recorded like a JWT's failure and raised after the request is counted
 * (per client address, there being no token to count by).
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Database } from '../db/tenant-scope';
import { findScimToken } from '../domain/scim/token';
import { ApiError } from '../errors';
import { stateOf } from './request-state';

const BEARER = /^Bearer ([A-Za-z0-9_-]{1,200})$/;

export function scimTokenStage(db: Database): RequestHandler {
  return async (req: Request, _res: Response, next: NextFunction) => {
    const state = stateOf(req);
    if (state.operation?.access !== 'scimToken') return next();
    try {
      const m = BEARER.exec(req.headers.authorization ?? '');
      const found = m ? await findScimToken(db, m[1]!) : null;
      if (found) state.scim = found;
      else state.authError = new ApiError('unauthorized', m ? 'The SCIM token is not valid (unknown or revoked).' : 'A SCIM bearer token is required: Authorization: Bearer scim_….');
      next();
    } catch (err) {
      next(err);
    }
  };
}
