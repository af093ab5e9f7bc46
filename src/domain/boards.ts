/**
 * Boards: the tenant's own content. Every function takes the request's tenant-scoped
 * transaction, so row-level security confines it to that tenant whatever the query says.
 */
import { boardsPage, findBoardWithGenerations, insertBoard } from '../db/queries/boards';
import type { Transaction } from '../db/tenant-scope';
import { recordEvent, type EventOrigin } from './events';
import { pageByCreation } from './pagination';
import type { BoardRecord, GenerationRecord } from '../context/records';

/** One page of the tenant's boards, oldest first. */
export async function listBoards(trx: Transaction, tenantId: string, opts: { limit: number; cursor?: string }): Promise<{ boards: BoardRecord[]; nextCursor: string | null }> {
  const { page, nextCursor } = await pageByCreation((limit, after) => boardsPage(trx, tenantId, limit, after), opts);
  return { boards: page, nextCursor };
}

/** Creates a board; its creator (when a member) becomes its owner. */
export async function createBoard(
  trx: Transaction,
  origin: EventOrigin,
  tenantId: string,
  input: { name: string; description?: string | null; createdBy: string | null },
): Promise<BoardRecord> {
  const board = await insertBoard(trx, tenantId, { name: input.name, description: input.description ?? null, createdBy: input.createdBy });
  await recordEvent(trx, origin, {
    action: 'board.created',
    tenantId,
    target: { type: 'board', id: board.id },
    data: { board: { board_id: board.id, name: board.name, description: board.description, created_by: board.created_by } },
  });
  return board;
}

/** A board with its generations, or null when the tenant has no such board. */
export async function getBoardWithGenerations(trx: Transaction, tenantId: string, boardId: string): Promise<{ board: BoardRecord; generations: GenerationRecord[] } | null> {
  return findBoardWithGenerations(trx, tenantId, boardId);
}
