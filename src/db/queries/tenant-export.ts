/**
 * The statements of a tenant export and import (docs/operations.md#moving-a-tenant-between-deployments).
 * Rows travel as JSON text made by PostgreSQL (`to_jsonb`), so every value keeps
 * its exact form (microsecond timestamps, jsonb, bigint) and comes back through
 * `jsonb_populate_recordset` by column name.
 */
import type { Knex } from 'knex';
import { TENANT_DATA_TABLES, type TenantDataTable } from '../schema';

/** Rows fetched per round trip from an export's cursor. */
export const EXPORT_FETCH_ROWS = 1000;

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

function known(table: string): TenantDataTable {
  const t = TENANT_DATA_TABLES.find((d) => d.table === table);
  if (!t) throw new Error(`Not a tenant data table: ${table}`);
  return t;
}

/**
 * Reads the tenant's rows of `table` through a server-side cursor, `EXPORT_FETCH_ROWS` at a time,
 * each row as its JSON text without the omitted columns, handing each batch to `onBatch` before
 * fetching the next (so memory holds one batch, and a slow reader slows the fetching). `trx`
 * must be the export's snapshot transaction (src/db/tenant-scope.ts `withTenantSnapshot`).
 */
export async function streamTenantRows(trx: Knex.Transaction, table: string, tenantId: string, onBatch: (rows: readonly string[]) => Promise<void>): Promise<void> {
  const t = known(table);
  const omit = t.omit.length > 0 ? ` - array[${t.omit.map((c) => `'${c}'`).join(', ')}]::text[]` : '';
  const cursor = `tenant_export_${t.table}`;
  await trx.raw(
    `declare ${cursor} no scroll cursor for
       select (to_jsonb(r)${omit})::text as row from ${ident(t.table)} r
        where r.${ident(t.tenantColumn)} = ? order by ${t.orderBy.map((c) => `r.${ident(c)}`).join(', ')}`,
    [tenantId],
  );
  for (;;) {
    const r = await trx.raw<{ rows: Array<{ row: string }> }>(`fetch ${EXPORT_FETCH_ROWS} from ${cursor}`);
    if (r.rows.length > 0) await onBatch(r.rows.map((x) => x.row));
    if (r.rows.length < EXPORT_FETCH_ROWS) break;
  }
  await trx.raw(`close ${cursor}`);
}

/** Whether a tenant with this id or slug exists (what an import would collide with). */
export async function tenantClash(trx: Knex.Transaction, id: string, slug: string): Promise<{ id: string; slug: string } | null> {
  const row = (await trx('tenants').where({ id }).orWhere({ slug }).first('id', 'slug')) as { id: string; slug: string } | undefined;
  return row ?? null;
}

/**
 * Inserts rows of `table` (objects keyed by column name) in one statement. Columns absent from
 * a row are NULL, not their default: the file must be complete. Identity columns keep the
 * file's values.
 */
export async function insertTenantRows(trx: Knex.Transaction, table: string, rows: readonly Record<string, unknown>[]): Promise<void> {
  const t = known(table);
  // Events outlive their tenant (the log is append-only): restoring a deleted tenant on the
  // deployment it left finds its old events still there, the same rows under the same ids.
  const keep = t.table === 'events' ? ' on conflict (id) do nothing' : '';
  await trx.raw(`insert into ${ident(t.table)} overriding system value select * from jsonb_populate_recordset(null::${ident(t.table)}, ?::jsonb)${keep}`, [JSON.stringify(rows)]);
}

/** Moves the shared credit-transaction sequence past `seq` (imported rows keep theirs). */
export async function advanceCreditSequence(trx: Knex.Transaction, seq: number): Promise<void> {
  await trx.raw('select app_credit_seq_at_least(?)', [seq]);
}
