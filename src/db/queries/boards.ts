/**
 * Boards and their generations, the tenant's own content, in the request's tenant-scoped
 * transaction. The page is the hot read path of GET /api/boards: one statement on the request
 * transaction's connection without the query builder or model instances
 * (src/db/request-transaction.ts), in the order, position text and index of `fetchKeysetRows`
 * (./keyset-page.ts).
 */
import { BoardMemberRow, BoardRow, GenerationRow } from '../models';
import { queryRows } from '../request-transaction';
import type { Transaction } from '../tenant-scope';
import type { KeysetPosition, Positioned } from './keyset-page';
import type { BoardRecord, GenerationRecord } from '../../context/records';

const COLUMNS = `tenant_id, id, name, description, created_by, created_at,
  to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_ts`;
const FIRST = `select ${COLUMNS} from boards where tenant_id = $1 order by created_at, id limit $2`;
const AFTER = `select ${COLUMNS} from boards where tenant_id = $1 and (created_at, id) > ($3::timestamptz, $4::uuid)
  order by created_at, id limit $2`;

/** Up to `limit` boards of the tenant after `after`, oldest first, each with `cursor_ts`. */
export function boardsPage(trx: Transaction, tenantId: string, limit: number, after?: KeysetPosition): Promise<Array<Positioned<BoardRecord>>> {
  return after
    ? queryRows<Positioned<BoardRecord>>(trx, AFTER, [tenantId, limit, after.createdAt, after.id], 'tenant_service_boards_after_v1')
    : queryRows<Positioned<BoardRecord>>(trx, FIRST, [tenantId, limit], 'tenant_service_boards_first_v1');
}

/** Inserts a board; its creator (when a member) becomes its owner. */
export async function insertBoard(trx: Transaction, tenantId: string, b: { name: string; description: string | null; createdBy: string | null }): Promise<BoardRecord> {
  const board = await BoardRow.query(trx).insert({ tenant_id: tenantId, name: b.name, description: b.description, created_by: b.createdBy }).returning('*');
  if (b.createdBy) await BoardMemberRow.query(trx).insert({ tenant_id: tenantId, board_id: board.id, user_id: b.createdBy, role: 'owner' });
  return boardOf(board);
}

/** A board with its generations (oldest first), or null when the tenant has no such board. */
export async function findBoardWithGenerations(trx: Transaction, tenantId: string, boardId: string): Promise<{ board: BoardRecord; generations: GenerationRecord[] } | null> {
  const board = await BoardRow.query(trx).findById([tenantId, boardId]);
  if (!board) return null;
  const generations = (await board.$relatedQuery('generations', trx).orderBy([{ column: 'created_at' }, { column: 'id' }])) as GenerationRow[];
  return { board: boardOf(board), generations: generations.map(generationOf) };
}

/** The records of model instances (the columns, not the model). */
function boardOf({ tenant_id, id, name, description, created_by, created_at }: BoardRow): BoardRecord {
  return { tenant_id, id, name, description, created_by, created_at };
}
function generationOf({ tenant_id, id, board_id, prompt, status, media_url, media_type, created_at }: GenerationRow): GenerationRecord {
  return { tenant_id, id, board_id, prompt, status, media_url, media_type, created_at };
}
