/**
 * The keyset page: rows of a filtered query in (created_at, id) order after a position, with the
 * position of each row as microsecond text (a JavaScript Date keeps only milliseconds, and rows
 * created within one millisecond would otherwise be skipped or repeated). The row comparison
 * matches a (…, created_at, id) index, so any page is one index range scan however deep.
 * Cursor encoding is pure and lives in src/domain/pagination.ts.
 */
import { raw, type Model, type QueryBuilder } from 'objection';

/** The position after which the next page starts. */
export interface KeysetPosition {
  /** `created_at` as UTC text with microseconds, e.g. `2026-01-02T03:04:05.123456Z`. */
  readonly createdAt: string;
  readonly id: string;
}

/** A fetched row with its position's timestamp text. */
export type Positioned<R> = R & { cursor_ts: string };

/**
 * Up to `limit` rows of `query` (a model query already filtered) after `after`, in
 * (created_at, id) order (reversed with `newestFirst`), each with `cursor_ts`. Callers ask for one row more than a page to
 * learn whether another page follows.
 */
export async function fetchKeysetRows<M extends Model>(
  query: QueryBuilder<M, M[]>,
  limit: number,
  after?: KeysetPosition,
  newestFirst = false,
): Promise<Array<Positioned<M>>> {
  const table = query.modelClass().tableName;
  const order = newestFirst ? 'desc' : 'asc';
  let q = query
    .select(`${table}.*`, raw(`to_char(??.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_ts`, [table]))
    .orderBy([
      { column: `${table}.created_at`, order },
      { column: `${table}.id`, order },
    ])
    .limit(limit);
  const op = newestFirst ? '<' : '>';
  if (after) q = q.whereRaw(`(??, ??) ${op} (?::timestamptz, ?::uuid)`, [`${table}.created_at`, `${table}.id`, after.createdAt, after.id]);
  return (await q) as Array<Positioned<M>>;
}
