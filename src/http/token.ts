/**
 * Stage: the bearer token, verified for every request that reaches /api (in any spelling). A
 * failure is only recorded here: it is raised after the request has been counted (per client
 * address, as there is no verified caller), so token guessing meets the rate limit.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Authenticator } from '../auth/verify';
import { reachesApi } from './contract';
import { stateOf } from './request-state';

export function tokenStage(authenticator: Authenticator): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    // A request already refused (a malformed X-Tenant) is answered without verifying its token.
    if (!reachesApi(req.path) || stateOf(req).pendingRefusal) return next();
    authenticator.authenticate(req, res, (err, caller) => {
      const state = stateOf(req);
      if (err) state.authError = err;
      else state.caller = caller ?? null;
      next();
    });
  };
}
