/**
 * Tag `boards`: tenant-owned content.
 */
import { notBuilt } from './not-built';

export const listBoards = notBuilt('listBoards');
export const createBoard = notBuilt('createBoard');
export const getBoard = notBuilt('getBoard');
