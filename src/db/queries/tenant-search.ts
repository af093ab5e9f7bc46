/**
 * Tenant search for `GET /api/setup/tenants?q=…`: a case-insensitive substring match on name or
 * slug, paged in (created_at, id) order, with the count. `name_search` is lower(name), kept by a
 * trigger (migration 006), and slugs are lowercase: the pattern is lowercased once per query and
 * compared with LIKE, where `name ILIKE` lowercased the pattern again for every row (2.6 s for a
 * 255-character q over 100 000 tenants). Both columns have trigram indexes.
 */
import type { Knex } from 'knex';
import type { QueryBuilder } from 'objection';
import type { Tenant } from '../../context/entities';
import { TenantRow } from '../models';
import { fetchKeysetRows, type KeysetPosition, type Positioned } from './keyset-page';
import { tenantOf } from './tenants';

/** `q` as a LIKE pattern matching it literally anywhere (`%`, `_` and `\` escaped). */
export function containsPattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function matching(query: QueryBuilder<TenantRow, TenantRow[]>, q: string | null): QueryBuilder<TenantRow, TenantRow[]> {
  if (q === null) return query;
  const pattern = containsPattern(q);
  return query.where((w) => w.whereRaw('name_search like lower(?)', [pattern]).orWhereRaw('slug like lower(?)', [pattern]));
}

/** Up to `limit` tenants matching `q` (all when null) after `after`, in (created_at, id) order. */
export async function searchTenants(trx: Knex.Transaction, q: string | null, limit: number, after?: KeysetPosition): Promise<Array<Positioned<{ id: string; tenant: Tenant }>>> {
  const rows = await fetchKeysetRows(matching(TenantRow.query(trx), q), limit, after);
  return rows.map((r) => ({ id: r.id, cursor_ts: r.cursor_ts, tenant: tenantOf(r) }));
}

/** How many tenants match `q` (all when null). */
export async function countTenants(trx: Knex.Transaction, q: string | null): Promise<number> {
  return matching(TenantRow.query(trx), q).resultSize();
}
