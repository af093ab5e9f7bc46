/** listTenants: one page of tenants, with the count of every match. */
import type { Tenant } from '../../context/entities';
import { countTenants, searchTenants } from '../../db/queries/tenant-search';
import { withIdentityLinks } from '../../db/queries/tenants';
import { withService, type Database } from '../../db/tenant-scope';
import { ApiError } from '../../errors';
import { decodeCursor, pageByCreation } from '../pagination';

export interface ListTenantsInput {
  limit?: number;
  cursor?: string;
  q?: string;
}

export interface TenantPage {
  tenants: Tenant[];
  totalCount: number;
  nextCursor: string | null;
}

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

export { containsPattern } from '../../db/queries/tenant-search';

/**
 * One page of tenants in (created_at, id) order and the count of every match. Both read one
 * snapshot (repeatable read), so the count agrees with the page. The page is a range scan of
 * `tenants_created_order` whatever the depth; the count is one pass over the table.
 */
export async function listTenants(db: Database, input: ListTenantsInput): Promise<TenantPage> {
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw new ApiError('validation', `query.limit must be an integer from 1 to ${MAX_PAGE_SIZE}.`);
  }
  // Decoded up front so a malformed cursor is a 400 before any query runs.
  if (input.cursor !== undefined) decodeCursor(input.cursor);
  const q = input.q !== undefined && input.q !== '' ? input.q : null;

  return withService(
    db,
    async (trx) => {
      const totalCount = await countTenants(trx, q);
      // Nothing matches (the usual answer to a long or wildcard-only q, which no index
      // narrows): the page query would scan the table a second time to find nothing.
      if (totalCount === 0) return { tenants: [], totalCount: 0, nextCursor: null };
      const { page, nextCursor } = await pageByCreation((n, after) => searchTenants(trx, q, n, after), { limit, cursor: input.cursor });
      return { tenants: await withIdentityLinks(trx, page.map((p) => p.tenant)), totalCount, nextCursor };
    },
    { isolationLevel: 'repeatable read', readOnly: true },
  );
}
