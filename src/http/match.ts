/**
 * Stage: the request matched once, case-sensitively, to an operation of the contract. A miss
 * is not answered yet: the request is counted first (any spelling of /api), then refused.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiError } from '../errors';
import { isApiPath } from './contract';
import { stateOf } from './request-state';
import type { Router } from './router';

export function matchStage(router: Router): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    const state = stateOf(req);
    const route = router.match(req.method, req.path);
    if (route.kind === 'operation') {
      state.operation = route.operation;
      state.params = route.params;
    } else if (route.kind === 'badParameter') {
      state.operation = route.operation;
      state.deferredError = route.error;
    } else {
      state.miss = route.kind;
    }
    next();
  };
}

/**
 * Stage (after the rate limit): refuses what cannot go on. A request for a secured operation,
 * or for an unknown path under /api, without a valid token is 401; an unknown path is 404 and a
 * known path with another method 405.
 */
export function gateStage(): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    const state = stateOf(req);
    const op = state.operation;
    if (state.authError && ((op && op.access !== 'public') || (!op && isApiPath(req.path)))) return next(state.authError);
    if (op) return next(state.deferredError ?? undefined);
    if (state.miss === 'methodNotAllowed') return next(new ApiError('methodNotAllowed', `${req.method} is not allowed on ${req.path}.`));
    return next(new ApiError('notFound', `No endpoint ${req.method} ${req.path}.`));
  };
}
