/**
 * Tenant import (docs/operations.md#moving-a-tenant-between-deployments): an export file
 * (./tenant-export.ts) read as it streams and written in one transaction with the same ids.
 * Any fault — a line that is not JSON or not of the format, a row of another tenant, rows out of
 * table order, counts or a SHA-256 that do not match, a missing end line, another format or
 * schema version — is a 400 naming the line, and the transaction rolls back: nothing is written.
 * A file that breaks the role rules the API keeps (./tenant-import-rules.ts) is a 400 naming every
 * fault at once.
 */
import crypto from 'node:crypto';
import { SCHEMA_VERSION } from '../db/database';
import { advanceCreditSequence, insertTenantRows, tenantClash } from '../db/queries/tenant-export';
import { TENANT_DATA_TABLES } from '../db/schema';
import { withSavepoint, withTenant, type Database, type Transaction } from '../db/tenant-scope';
import { mapDatabaseError } from '../db/database-errors';
import { ApiError } from '../errors';
import { recordEvent, type EventOrigin } from './events';
import { readLines, type Line } from './ndjson-lines';
import { ImportRoleRules } from './tenant-import-rules';
import { EXPORT_FORMAT, type ExportManifest } from './tenant-export';

/** One line may hold a tenant's settings or an event's data: generous, but bounded. */
export const MAX_IMPORT_LINE_BYTES = 8 * 1024 * 1024;
/** Rows per INSERT statement. */
const BATCH_ROWS = 500;
const BATCH_BYTES = 4 * 1024 * 1024;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SLUG = /^[a-z0-9-]{1,255}$/;
const TABLES = TENANT_DATA_TABLES.map((t) => t.table);

export interface TenantImportResult {
  tenantId: string;
  slug: string;
  counts: Record<string, number>;
}

const bad = (line: number, why: string) => new ApiError('badRequest', `Line ${line}: ${why}`);

function parse(line: Line): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(line.bytes.toString('utf8'));
  } catch {
    throw bad(line.number, 'not valid JSON.');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw bad(line.number, 'not a JSON object.');
  return value as Record<string, unknown>;
}

function readManifest(line: Line | undefined): ExportManifest {
  if (!line) throw new ApiError('badRequest', 'Line 1: the body is empty; an export file starts with its manifest line.');
  const m = parse(line);
  if (m.type !== 'manifest') throw bad(1, "the first line must be the manifest ({\"type\":\"manifest\",…}).");
  if (m.format !== EXPORT_FORMAT) throw bad(1, `unknown format ${JSON.stringify(m.format)}; this service reads '${EXPORT_FORMAT}'.`);
  if (m.schema_version !== SCHEMA_VERSION) {
    throw bad(1, `the file is of schema version ${JSON.stringify(m.schema_version)}, this service of '${SCHEMA_VERSION}': import it into a deployment of the same version.`);
  }
  if (typeof m.tenant_id !== 'string' || !UUID.test(m.tenant_id)) throw bad(1, 'tenant_id must be a lower-case UUID.');
  if (typeof m.slug !== 'string' || !SLUG.test(m.slug)) throw bad(1, 'slug must match ^[a-z0-9-]+$ (1 to 255 characters).');
  if (!Array.isArray(m.tables) || m.tables.length !== TABLES.length || m.tables.some((t, i) => t !== TABLES[i])) {
    throw bad(1, `tables must be ${JSON.stringify(TABLES)}.`);
  }
  return m as unknown as ExportManifest;
}

interface Pending {
  table: string;
  rows: Record<string, unknown>[];
  lines: number[];
  bytes: number;
}

/** The database's refusal of one row, as the import's answer. */
function refusal(err: unknown, table: string, line: number): ApiError {
  const mapped = mapDatabaseError(err);
  if (!mapped) throw err;
  if (mapped.status === 503) return mapped;
  // The tenant, its slug or one of its identity links is already on this deployment.
  if (mapped.kind === 'conflict' && (table === 'tenants' || table === 'identity_links')) return new ApiError('conflict', `Line ${line} (${table}): ${mapped.detail}`);
  return bad(line, `the ${table} row is refused: ${mapped.detail}`);
}

/** Inserts a batch; on a refusal, finds the row at fault (one savepoint per row) to name its line. */
async function flush(trx: Transaction, p: Pending, rules: ImportRoleRules): Promise<void> {
  if (p.table === 'tenant_role_permissions' && p.rows.length > 0) {
    // A permission the catalogue lacks is named at the end with all the others, not refused here.
    const keep = await rules.keepKnownPermissions(trx, p.rows);
    p.lines = p.lines.filter((_, i) => keep[i]);
    p.rows = p.rows.filter((_, i) => keep[i]);
  }
  if (p.rows.length === 0) {
    p.bytes = 0;
    return;
  }
  try {
    await withSavepoint(trx, (sp) => insertTenantRows(sp, p.table, p.rows));
  } catch (batchErr) {
    for (let i = 0; i < p.rows.length; i++) {
      try {
        await withSavepoint(trx, (sp) => insertTenantRows(sp, p.table, [p.rows[i]!]));
      } catch (err) {
        throw refusal(err, p.table, p.lines[i]!);
      }
    }
    throw refusal(batchErr, p.table, p.lines[0]!);
  }
  p.rows = [];
  p.lines = [];
  p.bytes = 0;
}

/**
 * Imports an export file streamed in `body` (at most `maxBytes`). 409 when the tenant's id or
 * slug (or one of its identity links) exists here; 400 naming the line for any fault of the file.
 */
export async function importTenant(db: Database, origin: EventOrigin, body: AsyncIterable<Buffer | string>, opts: { maxBytes: number }): Promise<TenantImportResult> {
  const lines = readLines(body, { maxBytes: opts.maxBytes, maxLineBytes: MAX_IMPORT_LINE_BYTES });
  const first = await lines.next();
  const firstLine = first.done ? undefined : first.value;
  const manifest = readManifest(firstLine);
  const hash = crypto.createHash('sha256');
  hash.update(firstLine!.bytes).update('\n');
  const tenantId = manifest.tenant_id;

  return withTenant(db, tenantId, async (trx) => {
    const clash = await tenantClash(trx, tenantId, manifest.slug);
    if (clash) {
      throw new ApiError('conflict', clash.id === tenantId ? `A tenant with ID ${tenantId} already exists.` : `A tenant with slug '${manifest.slug}' already exists.`);
    }
    const counts: Record<string, number> = Object.fromEntries(TABLES.map((t) => [t, 0]));
    const pending: Pending = { table: TABLES[0]!, rows: [], lines: [], bytes: 0 };
    let tableIndex = 0;
    let maxSeq = 0;
    let ended: Line | null = null;
    const rules = new ImportRoleRules();
    for await (const line of lines) {
      if (ended) {
        if (line.bytes.toString('utf8').trim() !== '') throw bad(line.number, 'nothing may follow the end line.');
        continue;
      }
      if (!line.terminated) throw bad(line.number, 'the file ends in the middle of a line: it was cut short.');
      const entry = parse(line);
      if (entry.type === 'end') {
        ended = line;
        await flush(trx, pending, rules);
        checkEnd(line, entry, counts, hash.digest('hex'));
        await rules.check(trx);
        continue;
      }
      hash.update(line.bytes).update('\n');
      if (entry.type !== 'row') throw bad(line.number, `unknown line type ${JSON.stringify(entry.type)}.`);
      const index = TABLES.indexOf(entry.table as string);
      if (index === -1) throw bad(line.number, `unknown table ${JSON.stringify(entry.table)}.`);
      if (index < tableIndex) throw bad(line.number, `a ${String(entry.table)} row after the ${TABLES[tableIndex]} rows: tables come in the manifest's order.`);
      const def = TENANT_DATA_TABLES[index]!;
      const row = entry.row;
      if (row === null || typeof row !== 'object' || Array.isArray(row)) throw bad(line.number, 'row must be a JSON object.');
      const r = row as Record<string, unknown>;
      if (r[def.tenantColumn] !== tenantId) throw bad(line.number, `the row's ${def.tenantColumn} is not the manifest's tenant_id.`);
      if (index === 0) {
        if (counts.tenants! > 0) throw bad(line.number, 'a second tenants row.');
        if (r.slug !== manifest.slug) throw bad(line.number, "the tenants row's slug is not the manifest's.");
      } else if (counts.tenants === 0) {
        throw bad(line.number, 'the tenants row must come first.');
      }
      // Never the file's word on what the service keeps out of exports (a secret or a deployment fact).
      for (const c of def.omit) delete r[c];
      // Columns absent from a row are NULL, not their default: give the omitted ones theirs here.
      if (def.table === 'tenants') r.is_default = false;
      if (def.table === 'invitations') r.token_hash = `imported:${crypto.randomUUID()}`;
      if (def.table === 'credit_transactions' && typeof r.seq === 'number') maxSeq = Math.max(maxSeq, r.seq);
      if (index !== tableIndex || pending.rows.length >= BATCH_ROWS || pending.bytes >= BATCH_BYTES) {
        await flush(trx, pending, rules);
        pending.table = def.table;
        tableIndex = index;
      }
      rules.see(def.table, r, line.number);
      pending.rows.push(r);
      pending.lines.push(line.number);
      pending.bytes += line.bytes.length;
      counts[def.table]!++;
    }
    if (!ended) throw new ApiError('badRequest', 'The file has no end line ({"type":"end",…}): it was cut short.');
    if (maxSeq > 0) await advanceCreditSequence(trx, maxSeq);
    await recordEvent(trx, origin, {
      action: 'tenant.imported',
      tenantId,
      target: { type: 'tenant', id: tenantId },
      data: { tenant: { tenant_id: tenantId, slug: manifest.slug }, counts, format: EXPORT_FORMAT, schema_version: SCHEMA_VERSION, exported_at: manifest.exported_at },
    });
    return { tenantId, slug: manifest.slug, counts };
  });
}

function checkEnd(line: Line, end: Record<string, unknown>, counts: Record<string, number>, sha256: string): void {
  const stated = end.counts;
  if (stated === null || typeof stated !== 'object' || Array.isArray(stated)) throw bad(line.number, 'the end line needs counts.');
  const s = stated as Record<string, unknown>;
  for (const key of new Set([...Object.keys(s), ...TABLES])) {
    if (s[key] !== counts[key]) throw bad(line.number, `the end line counts ${JSON.stringify(s[key] ?? null)} ${key} rows; the file has ${counts[key] ?? 0}.`);
  }
  if (end.sha256 !== sha256) throw bad(line.number, 'the SHA-256 of the file does not match its end line: the file was changed or reordered.');
}
