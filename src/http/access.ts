/**
 * Access, from the operation's `x-access` (the one place that decides who may call what):
 * public, caller (any verified token), platformAdmin, tenantMember (a member of the resolved
 * tenant, or a platform admin), tenantAdmin (an admin of it, or a platform admin) and
 * tenantPlatformAdmin (a platform admin acting in the resolved tenant; its own admins may not:
 * adding a person directly is the operator's act, tenant admins invite).
 * The tenant levels finish after the tenant is entered: membership is known only then.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiError } from '../errors';
import type { TenantEntry } from '../context/request';
import type { ContractOperation } from './contract';
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

/**
 * Tenant-level access, once the tenant is entered. Membership itself (tenantMember) was decided
 * by entering: a caller who is neither a member nor a platform admin got 403 Access denied there.
 */
export function checkTenantAccess(op: ContractOperation, entry: TenantEntry): void {
  if (op.access === 'tenantPlatformAdmin') {
    if (entry.caller.isPlatformAdmin) return;
    throw new ApiError('forbidden', `Only platform admins may call ${op.method} ${op.path}, not the tenant's own admins.`);
  }
  if (op.access !== 'tenantAdmin') return;
  if (entry.membership?.role === 'admin' || entry.caller.isPlatformAdmin) return;
  throw new ApiError('forbidden', `Only admins of tenant '${entry.tenant.slug}' may call ${op.method} ${op.path}.`);
}
