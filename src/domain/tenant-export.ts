/**
 * Tenant export (docs/operations.md#moving-a-tenant-between-deployments): every row the
 * tenant owns as newline-delimited JSON, from one snapshot, streamed with bounded memory:
 *
 *   {"type":"manifest","format":"tenant-service.export/1","tenant_id":…,"slug":…,"schema_version":…,"exported_at":…,"tables":[…]}
 *   {"type":"row","table":"<database table>","row":{…}}      one per row, parents before children
 *   {"type":"end","counts":{table: n},"sha256":"<hex of every byte before this line>"}
 *
 * The table list and the columns that never leave are src/db/schema.ts `TENANT_DATA_TABLES`.
 */
import crypto from 'node:crypto';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { SCHEMA_VERSION } from '../db/database';
import { streamTenantRows } from '../db/queries/tenant-export';
import { findTenant } from '../db/queries/tenants';
import { TENANT_DATA_TABLES } from '../db/schema';
import { withService, withTenantSnapshot, type Database } from '../db/tenant-scope';
import { ApiError } from '../errors';
import { recordEvent, type EventOrigin } from './events';

export const EXPORT_FORMAT = 'tenant-service.export/1';
export const EXPORT_CONTENT_TYPE = 'application/x-ndjson';

export interface ExportManifest {
  type: 'manifest';
  format: typeof EXPORT_FORMAT;
  tenant_id: string;
  slug: string;
  schema_version: string;
  exported_at: string;
  tables: string[];
}

/** A prepared export: the tenant's id and slug, and `write`, which streams the file. */
export interface TenantExport {
  readonly tenantId: string;
  readonly slug: string;
  /** Writes the whole file to `out`, honouring its backpressure; rejects if `out` closes early. */
  write(out: NodeJS.WritableStream): Promise<void>;
}

/** Writes `text` and waits for the stream to drain when its buffer is full. */
async function put(out: NodeJS.WritableStream, text: string): Promise<void> {
  const w = out as Writable;
  // A client that went away ends the export (and its snapshot transaction) at the next write.
  if (w.destroyed || w.writableEnded) throw new Error('The export stream closed before the end');
  if (w.write(text)) return;
  if (w.destroyed) throw new Error('The export stream closed before the end');
  const closed = once(w, 'close').then(() => {
    throw new Error('The export stream closed before the end');
  });
  await Promise.race([once(w, 'drain'), closed]);
}

/**
 * Records `tenant.exported` (404 when the tenant does not exist), then returns the export, whose
 * `write` reads one repeatable-read snapshot. The event commits first, so the file holds it.
 */
export async function exportTenant(db: Database, origin: EventOrigin, id: string): Promise<TenantExport> {
  const tenant = await withService(db, async (trx) => {
    const row = await findTenant(trx, id);
    if (!row) throw new ApiError('tenantNotFound', `Tenant with ID ${id} not found.`);
    await recordEvent(trx, origin, {
      action: 'tenant.exported',
      tenantId: id,
      target: { type: 'tenant', id },
      data: { tenant: { tenant_id: row.id, slug: row.slug, status: row.status }, format: EXPORT_FORMAT, schema_version: SCHEMA_VERSION },
    });
    return row;
  });
  return {
    tenantId: tenant.id,
    slug: tenant.slug,
    write: (out) =>
      withTenantSnapshot(db, id, async (trx) => {
        const hash = crypto.createHash('sha256');
        const emit = async (line: string) => {
          hash.update(line);
          await put(out, line);
        };
        const manifest: ExportManifest = {
          type: 'manifest',
          format: EXPORT_FORMAT,
          tenant_id: tenant.id,
          slug: tenant.slug,
          schema_version: SCHEMA_VERSION,
          exported_at: new Date().toISOString(),
          tables: TENANT_DATA_TABLES.map((t) => t.table),
        };
        await emit(`${JSON.stringify(manifest)}\n`);
        const counts: Record<string, number> = {};
        for (const { table } of TENANT_DATA_TABLES) {
          counts[table] = 0;
          const prefix = `{"type":"row","table":${JSON.stringify(table)},"row":`;
          await streamTenantRows(trx, table, id, async (rows) => {
            counts[table]! += rows.length;
            // One write per batch: the rows are already JSON text.
            await emit(rows.map((r) => `${prefix}${r}}\n`).join(''));
          });
        }
        await put(out, `${JSON.stringify({ type: 'end', counts, sha256: hash.digest('hex') })}\n`);
      }),
  };
}
