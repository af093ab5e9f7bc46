/**
 * The one error catalog: every kind of failure the service answers with, its HTTP status and
 * its `error` string. Anything thrown that is not an ApiError becomes `internal`.
 */
import type { Error as ErrorBody } from '../generated/types.gen';
import { constraintError, nativeDatabaseError } from './db/constraint-errors';

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
  conflict: { status: 409, error: 'Conflict' },
  invitationExpired: { status: 410, error: 'Invitation expired' },
  payloadTooLarge: { status: 413, error: 'Payload too large' },
  unsupportedMediaType: { status: 415, error: 'Unsupported media type' },
  rateLimited: { status: 429, error: 'Rate limit exceeded' },
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
  err = nativeDatabaseError(err);
  if (!err || typeof err !== 'object') return false;
  const e = err as PgErrorLike & { message?: string; name?: string; errors?: unknown[] };
  if (e.code && CONNECTION_CODES.has(e.code)) return true;
  if (e.name === 'KnexTimeoutError') return true;
  if (Array.isArray(e.errors) && e.errors.some(isDatabaseUnavailable)) return true; // AggregateError
  const msg = e.message ?? '';
  return (
    msg.includes('Connection terminated') ||
    msg === 'Query read timeout' || // pg's client-side query_timeout: the server did not answer
    msg === 'timeout expired' || // pg's connectionTimeoutMillis: the server accepted TCP but never answered
    e.name === 'TimeoutError' || // tarn (knex's pool) gave up creating a connection
    msg.includes('connection terminated') ||
    msg.includes('Client has encountered a connection error') ||
    msg.includes('the database system is shutting down') ||
    msg.includes('the database system is starting up')
  );
}

/**
 * Maps database errors to API errors: a violated constraint by its name (the table in
 * src/db/constraint-errors.ts, beside the models that own the constraints), otherwise by
 * SQLSTATE class. Every data error a client's input can reach is a 4xx: class 22 (data
 * exception: too long, out of range, bad date, bad text representation, NUL…) and 54000 (a value
 * too large for an index) are 400, class 23 (integrity: unique, foreign key, check, not null,
 * exclusion) is 409/404/403/400 by constraint. Returns null for errors it does not know (the
 * caller logs them and answers a plain 500).
 */
export function mapDatabaseError(err: unknown): ApiError | null {
  if (isDatabaseUnavailable(err)) {
    return new ApiError('unavailable', 'The database is unavailable; retry later.', {}, { 'Retry-After': '5' });
  }
  err = nativeDatabaseError(err);
  if (!err || typeof err !== 'object') return null;
  const e = err as PgErrorLike;
  const code = typeof e.code === 'string' ? e.code : '';
  // Only PostgreSQL's five-character SQLSTATEs; Node's own codes (ERR_…, E…) are not data errors.
  if (!/^[0-9A-Z]{5}$/.test(code)) return null;
  if (code.startsWith('23')) {
    const known = typeof e.constraint === 'string' ? constraintError({ code, constraint: e.constraint, detail: e.detail }) : undefined;
    if (known) return new ApiError(known.kind, known.detail);
    switch (code) {
      case '23505': // unique_violation
      case '23P01': // exclusion_violation
        return new ApiError('conflict', 'The resource already exists.');
      case '23503': // foreign_key_violation: a row the request refers to is gone (or in use)
        return new ApiError('conflict', 'The request refers to a row that was removed or is still referenced; reload and retry.');
      case '23001': // restrict_violation
        return new ApiError('conflict', 'The resource is still referenced.');
      default: // 23000 integrity, 23502 not null, 23514 check
        return new ApiError('validation', 'The request has a value the database does not accept.');
    }
  }
  if (code.startsWith('22')) {
    switch (code) {
      // U+0000 (or bytes that are not UTF-8) in a query or path parameter reaching a text comparison.
      case '22P05':
      case '22021':
        return new ApiError('validation', 'The request contains a character the database cannot store or compare (such as U+0000).');
      case '22001':
        return new ApiError('validation', 'A value in the request is longer than the database stores.');
      case '22003':
        return new ApiError('validation', 'A number in the request is out of range.');
      case '22007':
      case '22008':
        return new ApiError('validation', 'A date or time in the request is not one the database accepts.');
      default:
        return new ApiError('validation', 'A value in the request is not one the database accepts.');
    }
  }
  if (code === '54000') {
    // program_limit_exceeded: chiefly an index row over its size limit (a very long unique key).
    return new ApiError('validation', 'A value in the request is too long to be stored.');
  }
  if (code === '57014') {
    return new ApiError('unavailable', 'The database took too long to answer; retry later.', {}, { 'Retry-After': '5' });
  }
  if (code === '40001' || code === '40P01') {
    return new ApiError('unavailable', 'The request conflicted with another one; retry it.', {}, { 'Retry-After': '1' });
  }
  return null;
}
