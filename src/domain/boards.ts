/**
 * Boards: the tenant's own content. Every function takes the request's tenant-scoped
 * transaction, so row-level security confines it to that tenant whatever the query says.
 */
import type { Knex } from 'knex';
import type { BoardRow, GenerationRow } from '../db/models';
import { pageByCreation } from './pagination';

/** One page of the tenant's boards, oldest first. */
export async function listBoards(trx: Knex.Transaction, tenantId: string, opts: { limit: number; cursor?: string }): Promise<{ boards: BoardRow[]; nextCursor: string | null }> {
  const { page, nextCursor } = await pageByCreation<BoardRow>(trx, trx('boards').where({ tenant_id: tenantId }), opts);
  return { boards: page, nextCursor };
}

/** Creates a board; its creator (when a member) becomes its owner. */
export async function createBoard(
  trx: Knex.Transaction,
  tenantId: string,
  input: { name: string; description?: string | null; createdBy: string | null },
): Promise<BoardRow> {
  const [board] = (await trx('boards')
    .insert({ tenant_id: tenantId, name: input.name, description: input.description ?? null, created_by: input.createdBy })
    .returning('*')) as BoardRow[];
  if (input.createdBy) await trx('board_members').insert({ tenant_id: tenantId, board_id: board!.id, user_id: input.createdBy, role: 'owner' });
  return board!;
}

/** A board with its generations, or null when the tenant has no such board. */
export async function getBoardWithGenerations(trx: Knex.Transaction, tenantId: string, boardId: string): Promise<{ board: BoardRow; generations: GenerationRow[] } | null> {
  const board = (await trx('boards').where({ tenant_id: tenantId, id: boardId }).first()) as BoardRow | undefined;
  if (!board) return null;
  const generations = (await trx('generations')
    .where({ tenant_id: tenantId, board_id: boardId })
    .orderBy([{ column: 'created_at' }, { column: 'id' }])) as GenerationRow[];
  return { board, generations };
}
