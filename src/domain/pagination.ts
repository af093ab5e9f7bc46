/**
 * Opaque keyset cursors over (created_at, id), the order every list of the API uses.
 *
 * Keyset rather than offset: a page costs one index range scan however deep it is, and rows
 * inserted while a client pages do not shift later pages. The cursor carries the timestamp as
 * PostgreSQL text with microseconds, because a JavaScript Date keeps only milliseconds and
 * rows created within the same millisecond would otherwise be skipped or repeated.
 */
import type { KeysetPosition } from '../db/queries/keyset-page';
import { ApiError } from '../errors';

export type { KeysetPosition } from '../db/queries/keyset-page';

const VERSION = 1;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Encodes a position as an opaque URL-safe string. */
export function encodeCursor(position: KeysetPosition): string {
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
  if (!TIMESTAMP.test(createdAt) || !isRealTimestamp(createdAt) || !UUID.test(id)) throw invalid();
  return { createdAt, id: id.toLowerCase() };
}

/**
 * True when every field of a `TIMESTAMP`-shaped string is in range, as PostgreSQL checks it.
 * Date.parse is not enough: it accepts `2024-02-30` (rolled over to March 1) and year 0000,
 * which PostgreSQL refuses (22008) — a 500 if such a cursor reached the query.
 */
function isRealTimestamp(ts: string): boolean {
  const [y, mo, d, h, mi, s] = [ts.slice(0, 4), ts.slice(5, 7), ts.slice(8, 10), ts.slice(11, 13), ts.slice(14, 16), ts.slice(17, 19)].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return false;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  return d <= [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1]!;
}

/**
 * Given `limit + 1` rows fetched in order (each with the `cursor_ts` column of
 * `fetchKeysetRows`), returns the page and the cursor of the next one (null on the last page).
 */
function pageOf<R extends { id: string; cursor_ts: string }>(rows: readonly R[], limit: number): { page: R[]; nextCursor: string | null } {
  if (rows.length <= limit) return { page: [...rows], nextCursor: null };
  const page = rows.slice(0, limit);
  const last = page[page.length - 1]!;
  return { page, nextCursor: encodeCursor({ createdAt: last.cursor_ts, id: last.id }) };
}

/**
 * One page in (created_at, id) order starting after `cursor`: `fetch` reads up to `limit` rows
 * after a position (src/db/queries/keyset-page.ts `fetchKeysetRows` on a model query); this asks
 * for one more than the page to learn whether another follows, and encodes the next cursor.
 */
export async function pageByCreation<R extends { id: string }>(
  fetch: (limit: number, after?: KeysetPosition) => Promise<Array<R & { cursor_ts: string }>>,
  opts: { limit: number; cursor?: string },
): Promise<{ page: R[]; nextCursor: string | null }> {
  const after = opts.cursor ? decodeCursor(opts.cursor) : undefined;
  return pageOf(await fetch(opts.limit + 1, after), opts.limit);
}
