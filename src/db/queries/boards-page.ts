/**
 * One keyset page of a tenant's boards as plain rows: the hot read path of GET /api/boards,
 * one statement on the request transaction's connection without the query builder or model
 * instances (src/db/request-transaction.ts). Same order, position text and index as
 * `fetchKeysetRows` (./keyset-page.ts).
 */
import type { BoardRow } from '../models';
import { queryRows } from '../request-transaction';
import type { Transaction } from '../tenant-scope';
import type { KeysetPosition, Positioned } from './keyset-page';

/** The columns of a board, as the page returns them (no model instance). */
export type BoardFields = Pick<BoardRow, 'tenant_id' | 'id' | 'name' | 'description' | 'created_by' | 'created_at'>;

const COLUMNS = `tenant_id, id, name, description, created_by, created_at,
  to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_ts`;
const FIRST = `select ${COLUMNS} from boards where tenant_id = $1 order by created_at, id limit $2`;
const AFTER = `select ${COLUMNS} from boards where tenant_id = $1 and (created_at, id) > ($3::timestamptz, $4::uuid)
  order by created_at, id limit $2`;

/** Up to `limit` boards of the tenant after `after`, oldest first, each with `cursor_ts`. */
export function boardsPage(trx: Transaction, tenantId: string, limit: number, after?: KeysetPosition): Promise<Array<Positioned<BoardFields>>> {
  return after
    ? queryRows<Positioned<BoardFields>>(trx, AFTER, [tenantId, limit, after.createdAt, after.id], 'tenant_service_boards_after_v1')
    : queryRows<Positioned<BoardFields>>(trx, FIRST, [tenantId, limit], 'tenant_service_boards_first_v1');
}
