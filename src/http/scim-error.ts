/**
 * The SCIM error body (RFC 7644): what every failure of an operation declared with
 * `x-error-format: scim` is answered with, never the service's own Error body. `status` is a
 * string; `scimType` where the RFC names one (from a ScimError), else for schema validation
 * failures `invalidValue` and for unreadable bodies `invalidSyntax`.
 */
import type { Response } from 'express';
import type { ApiError } from '../errors';
import { ScimError, type ScimType } from '../domain/scim/errors';

export const SCIM_ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const SCIM_MEDIA_TYPE = 'application/scim+json';

function scimTypeOf(e: ApiError): ScimType | null {
  if (e instanceof ScimError) return e.scimType;
  if (e.kind === 'validation') return 'invalidValue';
  if (e.kind === 'badRequest') return 'invalidSyntax';
  if (e.kind === 'conflict') return 'uniqueness';
  return null;
}

/** Writes `e` as a SCIM error (status and headers are the caller's). */
export function sendScimError(res: Response, e: ApiError, requestId: string): void {
  const scimType = scimTypeOf(e);
  res.setHeader('Content-Type', `${SCIM_MEDIA_TYPE}; charset=utf-8`);
  // The request id is in X-Request-Id (and in a 500's detail).
  void requestId;
  res.send(JSON.stringify({ schemas: [SCIM_ERROR_SCHEMA], status: String(e.status), ...(scimType ? { scimType } : {}), detail: e.detail }));
}
