/**
 * Caller-level access, from the operation's `x-access`: the one place that decides who may call
 * an operation before any tenant is entered. Levels: public, caller (any verified token),
 * platformAdmin, tenantMember (a member of the resolved tenant, or a platform admin), tenantAdmin
 * (a member whose role holds the operation's `x-permission`, or a platform admin) and
 * tenantPlatformAdmin (a platform admin acting in the resolved tenant; its own admins may not:
 * adding a person directly is the operator's act, tenant admins invite). The tenant levels and
 * `x-permission` (docs/roles.md#system-permissions) need the tenant's facts, so they are decided
 * with tenant entry and membership by src/tenancy/decide.ts.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiError } from '../errors';
import { stateOf } from './request-state';

/** What a refusal adds for a token whose admin role did not count (docs/security.md#platform-admins). */
const IGNORED_ADMIN_ROLE = {
  none: '',
  no_admin_issuer: ' The token carries the platform admin role, but no issuer may grant it: the operator sets SERVICE_ADMIN_ISSUER (or SERVICE_JWT_ISSUER).',
  other_issuer: " The token carries the platform admin role, but its issuer is not one of the platform admin issuers (SERVICE_ADMIN_ISSUER).",
} as const;

/** Stage: caller-level access (before the tenant is entered). */
export function accessStage(): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    const state = stateOf(req);
    const op = state.operation!;
    if (op.access === 'public') return next();
    // The SCIM token stage found the token (a refusal was raised by the gate already).
    if (op.access === 'scimToken') return next(state.scim ? undefined : new ApiError('unauthorized', 'A valid SCIM token is required.'));
    if (!state.caller) return next(new ApiError('unauthorized', 'A valid bearer token is required.', {}, { 'WWW-Authenticate': 'Bearer realm="tenant-service"' }));
    if (op.access === 'platformAdmin' && !state.caller.isPlatformAdmin) {
      return next(new ApiError('forbidden', `Only platform admins may call ${op.method} ${op.path}.${IGNORED_ADMIN_ROLE[state.caller.adminRoleIgnored ?? 'none']}`));
    }
    next();
  };
}
