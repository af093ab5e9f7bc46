/**
 * Tag `boards`: tenant-owned content, enough of it to prove isolation end to end.
 */
import type { CreateBoardData, CreateBoardResponses, GetBoardData, GetBoardResponses, ListBoardsData, ListBoardsResponses } from '../../generated/types.gen';
import * as boards from '../domain/boards';
import { ApiError } from '../errors';
import { toBoard, toBoardDetail } from './mappers';
import { tenantScoped, type HandlerInput, type Reply } from './types';

export const listBoards = tenantScoped(async (ctx, input: HandlerInput<ListBoardsData>): Promise<Reply<ListBoardsResponses>> => {
  const page = await boards.listBoards(ctx.trx, ctx.tenant.id, { limit: input.query.limit ?? 100, cursor: input.query.cursor });
  return { status: 200, body: { boards: page.boards.map(toBoard), next_cursor: page.nextCursor } };
});

export const createBoard = tenantScoped(async (ctx, input: HandlerInput<CreateBoardData>): Promise<Reply<CreateBoardResponses>> => {
  const board = await boards.createBoard(ctx.trx, ctx.origin, ctx.tenant.id, {
    name: input.body.name,
    description: input.body.description ?? null,
    createdBy: ctx.membership?.userId ?? null,
  });
  return { status: 201, body: toBoard(board) };
});

export const getBoard = tenantScoped(async (ctx, input: HandlerInput<GetBoardData>): Promise<Reply<GetBoardResponses>> => {
  // Another tenant's board is invisible under row-level security: the same 404 as no board.
  const found = await boards.getBoardWithGenerations(ctx.trx, ctx.tenant.id, input.path.board_id);
  if (!found) throw new ApiError('notFound', `Board ${input.path.board_id} not found.`);
  return { status: 200, body: toBoardDetail(found.board, found.generations) };
});
