/**
 * Keyset cursors (src/domain/pagination.ts): a page of `limit` from `limit + 1` fetched rows,
 * the next cursor from the last row's microsecond position, and tampered cursors refused as 400.
 */
import { decodeCursor, pageByCreation, type KeysetPosition } from '../../src/domain/pagination';

const row = (i: number) => ({
  id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
  cursor_ts: `2026-01-02T03:04:05.${String(100000 + i)}Z`,
});

it('a page and the cursor after its last row; the cursor decodes to that position', async () => {
  const rows = [1, 2, 3, 4].map(row);
  const calls: Array<[number, KeysetPosition | undefined]> = [];
  const first = await pageByCreation(async (limit, after) => {
    calls.push([limit, after]);
    return rows.slice(0, limit);
  }, { limit: 3 });
  expect(calls).toEqual([[4, undefined]]);
  expect(first.page.map((r) => r.id)).toEqual(rows.slice(0, 3).map((r) => r.id));
  expect(first.nextCursor).not.toBeNull();
  expect(decodeCursor(first.nextCursor!)).toEqual({ createdAt: rows[2]!.cursor_ts, id: rows[2]!.id });

  const second = await pageByCreation(async (limit, after) => {
    calls.push([limit, after]);
    return rows.slice(3, 3 + limit);
  }, { limit: 3, cursor: first.nextCursor! });
  expect(calls[1]).toEqual([4, { createdAt: rows[2]!.cursor_ts, id: rows[2]!.id }]);
  expect(second).toEqual({ page: [rows[3]], nextCursor: null });
});

it.each([
  ['not base64url', '!!!'],
  ['not JSON', Buffer.from('nope').toString('base64url')],
  ['another version', Buffer.from(JSON.stringify([2, '2026-01-02T03:04:05.123456Z', row(1).id])).toString('base64url')],
  ['a millisecond timestamp', Buffer.from(JSON.stringify([1, '2026-01-02T03:04:05.123Z', row(1).id])).toString('base64url')],
  ['an impossible date', Buffer.from(JSON.stringify([1, '2026-13-02T03:04:05.123456Z', row(1).id])).toString('base64url')],
  ['not a uuid', Buffer.from(JSON.stringify([1, '2026-01-02T03:04:05.123456Z', 'x'])).toString('base64url')],
])('a cursor that is %s is a 400 Validation error', async (_what, cursor) => {
  expect(() => decodeCursor(cursor)).toThrow(expect.objectContaining({ status: 400, error: 'Validation error' }));
  const fetch = jest.fn();
  await expect(pageByCreation(fetch, { limit: 3, cursor })).rejects.toMatchObject({ status: 400 });
  expect(fetch).not.toHaveBeenCalled();
});
