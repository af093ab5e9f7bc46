/**
 * Caller-level access, from the operation's `x-access`: the one place that decides who may call
 * an operation before any tenant is entered. Levels: public, caller (any verified token),
 * platformAdmin, tenantMember (a member of the resolved tenant, or a platform admin), tenantAdmin
 * (an admin of it, or a platform admin) and tenantPlatformAdmin (a platform admin acting in the
 * resolved tenant; its own admins may not: adding a person directly is the operator's act, tenant
 * admins invite). The tenant levels need the tenant's facts, so they are decided with tenant
 * entry and membership by src/tenancy/decide.ts.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiError } from '../errors';
import { stateOf } from './request-state';

/** Stage: caller-level access (before the tenant is entered). */
export function accessStage(): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    const state = stateOf(req);
    const op = state.operation!;
    if (op.access === 'public') return next();
    if (!state.caller) return next(new ApiError('unauthorized', 'A valid bearer token is required.', {}, { 'WWW-Authenticate': 'Bearer realm="tenant-service"' }));
    if (op.access === 'platformAdmin' && !state.caller.isPlatformAdmin) {
      return next(new ApiError('forbidden', `Only platform admins may call ${op.method} ${op.path}.`));
    }
    next();
  };
}
