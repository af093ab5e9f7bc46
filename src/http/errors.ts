/**
 * The one error catalog: every kind of failure the service answers with, its HTTP status and
 * its `error` string. Anything thrown that is not an ApiError becomes `internal`.
 */
import type { Error as ErrorBody } from '../../generated/types.gen';

export const ERROR_KINDS = {
  missingTenant: { status: 400, error: 'Missing X-Tenant header' },
  invalidTenantHeader: { status: 400, error: 'Invalid X-Tenant header format' },
  validation: { status: 400, error: 'Validation error' },
  badRequest: { status: 400, error: 'Bad request' },
  unauthorized: { status: 401, error: 'Unauthorized' },
  forbidden: { status: 403, error: 'Forbidden' },
  accessDenied: { status: 403, error: 'Access denied' },
  registrationDisabled: { status: 403, error: 'Registration disabled' },
  domainNotAllowed: { status: 403, error: 'Domain not allowed' },
  tenantLimitReached: { status: 403, error: 'Tenant limit reached' },
  tenantPending: { status: 403, error: 'Tenant pending approval' },
  tenantNotFound: { status: 404, error: 'Tenant not found' },
  notFound: { status: 404, error: 'Not found' },
  methodNotAllowed: { status: 405, error: 'Method not allowed' },
  conflict: { status: 409, error: 'Conflict' },
  payloadTooLarge: { status: 413, error: 'Payload too large' },
  unsupportedMediaType: { status: 415, error: 'Unsupported media type' },
  rateLimited: { status: 429, error: 'Rate limit exceeded' },
  internal: { status: 500, error: 'Internal error' },
  unavailable: { status: 503, error: 'Service unavailable' },
} as const;

export type ErrorKind = keyof typeof ERROR_KINDS;

/** Extra fields some errors carry (SPEC.md §7). */
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

interface PgErrorLike {
  code?: string;
  constraint?: string;
  detail?: string;
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '53300', // too_many_connections
]);

/** True when an error means the database could not be reached (answer 503, not 500). */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as PgErrorLike & { message?: string; name?: string; errors?: unknown[] };
  if (e.code && CONNECTION_CODES.has(e.code)) return true;
  if (e.name === 'KnexTimeoutError') return true;
  if (Array.isArray(e.errors) && e.errors.some(isDatabaseUnavailable)) return true; // AggregateError
  const msg = e.message ?? '';
  return (
    msg.includes('Connection terminated') ||
    msg.includes('connection terminated') ||
    msg.includes('Client has encountered a connection error') ||
    msg.includes('the database system is shutting down') ||
    msg.includes('the database system is starting up')
  );
}

/**
 * Maps database errors to API errors by constraint name, so a unique violation on the slug
 * index is a Conflict wherever it happens. Returns null for errors it does not know.
 */
export function mapDatabaseError(err: unknown): ApiError | null {
  if (isDatabaseUnavailable(err)) {
    return new ApiError('unavailable', 'The database is unavailable; retry later.', {}, { 'Retry-After': '5' });
  }
  if (!err || typeof err !== 'object') return null;
  const e = err as PgErrorLike;
  if (e.code === '23505') {
    switch (e.constraint) {
      case 'tenants_slug_unique': {
        const slug = /\(slug\)=\((.*)\)/.exec(e.detail ?? '')?.[1];
        return new ApiError('conflict', slug ? `A tenant with slug '${slug}' already exists.` : 'A tenant with this slug already exists.');
      }
      case 'users_tenant_identity_unique':
        return new ApiError('conflict', 'This user is already a member of the tenant.');
      default:
        return new ApiError('conflict', 'The resource already exists.');
    }
  }
  // U+0000 (or bytes that are not UTF-8) in a query or path parameter reaching a text comparison.
  if (e.code === '22P05' || e.code === '22021') {
    return new ApiError('validation', 'The request contains a character the database cannot store or compare (such as U+0000).');
  }
  if (e.code === '57014') {
    return new ApiError('unavailable', 'The database took too long to answer; retry later.', {}, { 'Retry-After': '5' });
  }
  if (e.code === '40001' || e.code === '40P01') {
    return new ApiError('unavailable', 'The request conflicted with another one; retry it.', {}, { 'Retry-After': '1' });
  }
  return null;
}
