/**
 * Stage: the X-Tenant header, when present on any endpoint, must be a well-formed slug. Under
 * /api the refusal waits for the operation match (`pendingRefusal`, raised by the match stage
 * before counting), so an operation that declares its own refusals (the gateway decision)
 * answers it in its style; anywhere else it is raised at once.
 */
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../errors';
import { isValidTenantHeader } from '../tenancy/resolve';
import { reachesApi } from './contract';
import { stateOf } from './request-state';

export function tenantHeaderStage() {
  return (req: Request, _res: Response, next: NextFunction): void => {
    const raw = req.headers['x-tenant'];
    if (raw === undefined) return next();
    const value = Array.isArray(raw) ? raw.join(', ') : raw;
    if (isValidTenantHeader(value)) return next();
    const refusal = new ApiError(
      'invalidTenantHeader',
      'The X-Tenant header must be a tenant slug: only lowercase letters, numbers and hyphens, at most 255 characters.',
      { provided_tenant: value.slice(0, 1024) },
    );
    if (!reachesApi(req.path)) return next(refusal);
    stateOf(req).pendingRefusal = refusal;
    next();
  };
}
