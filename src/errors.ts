/**
 * The one error catalog: every kind of failure the service answers with, its HTTP status and
 * its `error` string. Anything thrown that is not an ApiError becomes `internal`. It imports
 * nothing, so every layer may use it; database errors are mapped in src/db/database-errors.ts.
 */
/**
 * The Error body of the contract (openapi.yaml `Error`), spelled here so this module imports
 * nothing; src/http/error-response.ts fails to compile if the two ever differ.
 */
export interface ErrorBody {
  error: string;
  detail: string;
  request_id: string;
  /** On `Missing X-Tenant header`: whether the service runs in multi-tenant mode. */
  multi_tenant_mode?: boolean;
  /** On `Invalid X-Tenant header format`: the received header value. */
  provided_tenant?: string;
}

export const ERROR_KINDS = {
  missingTenant: { status: 400, error: 'Missing X-Tenant header' },
  invalidTenantHeader: { status: 400, error: 'Invalid X-Tenant header format' },
  validation: { status: 400, error: 'Validation error' },
  badRequest: { status: 400, error: 'Bad request' },
  signInCodeNotAccepted: { status: 400, error: 'Sign-in code not accepted' },
  unauthorized: { status: 401, error: 'Unauthorized' },
  forbidden: { status: 403, error: 'Forbidden' },
  accessDenied: { status: 403, error: 'Access denied' },
  registrationDisabled: { status: 403, error: 'Registration disabled' },
  domainNotAllowed: { status: 403, error: 'Domain not allowed' },
  tenantLimitReached: { status: 403, error: 'Tenant limit reached' },
  tenantPending: { status: 403, error: 'Tenant pending approval' },
  tenantSuspended: { status: 403, error: 'Tenant suspended' },
  tenantNotFound: { status: 404, error: 'Tenant not found' },
  notFound: { status: 404, error: 'Not found' },
  invitationNotFound: { status: 404, error: 'Invitation not found' },
  methodNotAllowed: { status: 405, error: 'Method not allowed' },
  requestTimeout: { status: 408, error: 'Request timeout' },
  conflict: { status: 409, error: 'Conflict' },
  domainNotVerified: { status: 409, error: 'Domain not verified' },
  domainTaken: { status: 409, error: 'Domain taken' },
  invitationExpired: { status: 410, error: 'Invitation expired' },
  payloadTooLarge: { status: 413, error: 'Payload too large' },
  uriTooLong: { status: 414, error: 'URI too long' },
  unsupportedMediaType: { status: 415, error: 'Unsupported media type' },
  rateLimited: { status: 429, error: 'Rate limit exceeded' },
  headersTooLarge: { status: 431, error: 'Request header fields too large' },
  internal: { status: 500, error: 'Internal error' },
  unavailable: { status: 503, error: 'Service unavailable' },
} as const;

export type ErrorKind = keyof typeof ERROR_KINDS;

/** Extra fields some errors carry (docs/tenants.md#errors). */
export type ErrorExtras = Pick<ErrorBody, 'multi_tenant_mode' | 'provided_tenant'>;

/** A failure with a known kind; the error middleware turns it into the Error body. */
export class ApiError extends Error {
  readonly status: number;
  readonly error: string;

  constructor(
    readonly kind: ErrorKind,
    readonly detail: string,
    readonly extras: ErrorExtras = {},
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(detail);
    this.name = 'ApiError';
    this.status = ERROR_KINDS[kind].status;
    this.error = ERROR_KINDS[kind].error;
  }

  /** The response body, with the request id. */
  toBody(requestId: string): ErrorBody {
    return { error: this.error, detail: this.detail, ...this.extras, request_id: requestId };
  }
}
