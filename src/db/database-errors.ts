/**
 * What a database error means to a client: unreachable (503), a violated constraint (by name, from
 * src/db/constraint-errors.ts), a data error of the client's input (400), or unknown (null: the
 * caller logs it and answers a plain 500).
 */
import { ApiError } from '../errors';
import { constraintError, nativeDatabaseError } from './constraint-errors';

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
  // knex puts the statement before the driver's message ("insert into … - Query read timeout").
  const msg = e.message ?? '';
  const driverMessage = (text: string) => msg === text || msg.endsWith(` - ${text}`);
  return (
    msg.includes('Connection terminated') ||
    driverMessage('Query read timeout') || // pg's client-side query_timeout: the server did not answer
    driverMessage('timeout expired') || // pg's connectionTimeoutMillis: the server accepted TCP but never answered
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
