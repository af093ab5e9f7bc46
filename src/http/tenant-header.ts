/**
 * Stage: the X-Tenant header, when present on any endpoint, must be a well-formed slug.
 */
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../errors';
import { isValidTenantHeader } from '../tenancy/resolve';

export function tenantHeaderStage() {
  return (req: Request, _res: Response, next: NextFunction): void => {
    const raw = req.headers['x-tenant'];
    if (raw === undefined) return next();
    const value = Array.isArray(raw) ? raw.join(', ') : raw;
    if (!isValidTenantHeader(value)) {
      return next(
        new ApiError(
          'invalidTenantHeader',
          'The X-Tenant header must be a tenant slug: only lowercase letters, numbers and hyphens, at most 255 characters.',
          { provided_tenant: value.slice(0, 1024) },
        ),
      );
    }
    next();
  };
}
