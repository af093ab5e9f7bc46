/**
 * Opaque keyset cursors over (created_at, id), the order every list of the API uses.
 *
 * Keyset rather than offset: a page costs one index range scan however deep it is, and rows
 * inserted while a client pages do not shift later pages. The cursor carries the timestamp as
 * PostgreSQL text with microseconds, because a JavaScript Date keeps only milliseconds and
 * rows created within the same millisecond would otherwise be skipped or repeated.
 */
import type { Knex } from 'knex';
import { ApiError } from '../http/errors';

/** The position after which the next page starts. */
export interface KeysetPosition {
  /** `created_at` as UTC text with microseconds, e.g. `2026-01-02T03:04:05.123456Z`. */
  readonly createdAt: string;
  readonly id: string;
}

const VERSION = 1;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * SQL selecting `column` (a timestamptz) as the microsecond UTC text a cursor stores. Select it
 * beside the row (e.g. `select t.*, ${keysetTimestampSql('t.created_at')} as cursor_ts`).
 */
function keysetTimestampSql(column: string): string {
  return `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

/** Encodes a position as an opaque URL-safe string. */
function encodeCursor(position: KeysetPosition): string {
  return Buffer.from(JSON.stringify([VERSION, position.createdAt, position.id]), 'utf8').toString('base64url');
}

/**
 * Decodes a cursor made by `encodeCursor`. Anything else (tampered, truncated, from another
 * version) is a 400 `Validation error` naming the `cursor` parameter.
 */
export function decodeCursor(cursor: string, parameter = 'cursor'): KeysetPosition {
  const invalid = () => new ApiError('validation', `query.${parameter} is not a cursor returned by this API; start again without it.`);
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed) || parsed.length !== 3) throw invalid();
  const [version, createdAt, id] = parsed as unknown[];
  if (version !== VERSION || typeof createdAt !== 'string' || typeof id !== 'string') throw invalid();
  if (!TIMESTAMP.test(createdAt) || Number.isNaN(Date.parse(createdAt)) || !UUID.test(id)) throw invalid();
  return { createdAt, id: id.toLowerCase() };
}

/**
 * Restricts `query` to rows after `position` in (created_at, id) order. The row comparison
 * matches a (…, created_at, id) index, so the page is an index range scan.
 */
function afterPosition<Q extends Knex.QueryBuilder>(query: Q, position: KeysetPosition, createdAtColumn = 'created_at', idColumn = 'id'): Q {
  return query.whereRaw(`(??, ??) > (?::timestamptz, ?::uuid)`, [createdAtColumn, idColumn, position.createdAt, position.id]) as Q;
}

/**
 * Given `limit + 1` rows fetched in order (each with the `cursor_ts` column of
 * `keysetTimestampSql`), returns the page and the cursor of the next one (null on the last page).
 */
function pageOf<R extends { id: string; cursor_ts: string }>(rows: readonly R[], limit: number): { page: R[]; nextCursor: string | null } {
  if (rows.length <= limit) return { page: [...rows], nextCursor: null };
  const page = rows.slice(0, limit);
  const last = page[page.length - 1]!;
  return { page, nextCursor: encodeCursor({ createdAt: last.cursor_ts, id: last.id }) };
}

/**
 * One page of `query` (a filtered table query) in (created_at, id) order, starting after
 * `cursor`: the select, order, limit and cursor handling every tenant-scoped list shares.
 */
export async function pageByCreation<R extends { id: string }>(
  trx: Knex.Transaction,
  query: Knex.QueryBuilder,
  opts: { limit: number; cursor?: string },
): Promise<{ page: R[]; nextCursor: string | null }> {
  let q = query
    .select('*', trx.raw(`${keysetTimestampSql('created_at')} as cursor_ts`))
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .limit(opts.limit + 1);
  if (opts.cursor) q = afterPosition(q, decodeCursor(opts.cursor));
  return pageOf((await q) as Array<R & { cursor_ts: string }>, opts.limit);
}
