/**
 * Tenant administration (PRODUCT.md §4): create (with Idempotency-Key), list, get, update and
 * delete (batched, with a dry run). Platform-level: the `tenants` table has no row-level
 * security, while every tenant-owned row is touched only inside `withTenant`.
 */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import type { TenantRow } from '../db/models';
import { TENANT_TABLES, type TenantTable } from '../db/migrations/001-schema';
import { withTenant } from '../db/tenant-scope';
import { ApiError } from '../http/errors';
import { decodeCursor, pageByCreation } from './pagination';
import { createTenantWithSampleData } from './tenants';

/** How long a stored Idempotency-Key answers replays. */
export const IDEMPOTENCY_WINDOW_HOURS = 24;

const notFound = (id: string) => new ApiError('tenantNotFound', `Tenant with ID ${id} not found.`);

// ---------------------------------------------------------------------------------------------
// Create

export interface CreateTenantInput {
  name: string;
  slug: string;
  settings?: Record<string, unknown>;
  includeSampleData?: boolean;
}

export interface IdempotencyInput {
  /** Who sent the key: keys are scoped per caller, so two callers never share one. */
  caller: { issuer: string; subject: string };
  key: string;
}

/** What the create answers; `existing` is true for an idempotent replay. */
export interface TenantCreation {
  tenantId: string;
  name: string;
  slug: string;
  message: string;
  existing: boolean;
}

/** The stored first response of an idempotent create. */
interface StoredCreation {
  tenant_id: string;
  name: string;
  slug: string;
  message: string;
}

/** JSON with object keys sorted at every level, so equal bodies hash equally. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** sha256 of the request with its defaults applied, so `{}` settings and no settings match. */
export function createRequestHash(input: CreateTenantInput): string {
  const canonical = canonicalJson({
    name: input.name,
    slug: input.slug,
    settings: input.settings ?? {},
    include_sample_data: input.includeSampleData ?? false,
  });
  return crypto.createHash('sha256').update(canonical).digest('hex');
}

const callerKey = (c: IdempotencyInput['caller']) => JSON.stringify([c.issuer, c.subject]);

/**
 * Creates a tenant (and its sample data) in one transaction. A taken slug is the unique
 * violation on `tenants_slug_unique` (409 Conflict). With an idempotency key, the key row is
 * written first in the same transaction: a concurrent request with the same key blocks on its
 * primary key until this one commits, then replays its result, so one key never makes two
 * tenants; if this one rolls back, nothing of it (key included) remains.
 */
export async function createTenant(db: Knex, input: CreateTenantInput, idempotency?: IdempotencyInput): Promise<TenantCreation> {
  return db.transaction(async (trx) => {
    let key: { caller: string; key: string; hash: string } | null = null;
    if (idempotency) {
      key = { caller: callerKey(idempotency.caller), key: idempotency.key, hash: createRequestHash(input) };
      // An expired key is forgotten; so are a few other expired ones, to keep the table small.
      await trx.raw(
        `delete from idempotency_keys where ctid = any(array(
           select ctid from idempotency_keys
            where (caller = ? and key = ? and created_at < now() - make_interval(hours => ?))
               or created_at < now() - make_interval(hours => ?)
            limit 100))`,
        [key.caller, key.key, IDEMPOTENCY_WINDOW_HOURS, IDEMPOTENCY_WINDOW_HOURS],
      );
      const claimed = await trx.raw<{ rows: unknown[] }>(
        `insert into idempotency_keys (caller, key, request_hash, response)
         values (?, ?, ?, '{}'::jsonb)
         on conflict (caller, key) do nothing
         returning key`,
        [key.caller, key.key, key.hash],
      );
      if (claimed.rows.length === 0) {
        const stored = (await trx('idempotency_keys').where({ caller: key.caller, key: key.key }).first('request_hash', 'response')) as
          | { request_hash: string; response: StoredCreation }
          | undefined;
        if (!stored) {
          // Only reachable if the row expired and was swept between the two statements.
          throw new ApiError('conflict', `The Idempotency-Key '${idempotency.key}' is being reused; retry the request.`);
        }
        if (stored.request_hash !== key.hash) {
          throw new ApiError('conflict', `The Idempotency-Key '${idempotency.key}' was already used with a different request body.`);
        }
        const r = stored.response;
        return { tenantId: r.tenant_id, name: r.name, slug: r.slug, message: r.message, existing: true };
      }
    }

    const includeSampleData = input.includeSampleData ?? false;
    const { tenant } = await createTenantWithSampleData(trx, {
      name: input.name,
      slug: input.slug,
      settings: input.settings ?? {},
      includeSampleData,
    });
    const message = includeSampleData
      ? `Tenant '${tenant.name}' (${tenant.slug}) created with sample data.`
      : `Tenant '${tenant.name}' (${tenant.slug}) created.`;
    const response: StoredCreation = { tenant_id: tenant.id, name: tenant.name, slug: tenant.slug, message };
    if (key) {
      await trx('idempotency_keys')
        .where({ caller: key.caller, key: key.key })
        .update({ tenant_id: tenant.id, response: JSON.stringify(response) });
    }
    return { tenantId: tenant.id, name: tenant.name, slug: tenant.slug, message, existing: false };
  });
}

// ---------------------------------------------------------------------------------------------
// List and get

export interface ListTenantsInput {
  limit?: number;
  cursor?: string;
  q?: string;
}

export interface TenantPage {
  tenants: TenantRow[];
  totalCount: number;
  nextCursor: string | null;
}

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

/** `q` as an ILIKE pattern matching it literally anywhere (`%`, `_` and `\` escaped). */
export function containsPattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * One page of tenants in (created_at, id) order and the count of every match. Both read one
 * snapshot (repeatable read), so the count agrees with the page. The page is a range scan of
 * `tenants_created_order` whatever the depth; the count is one pass over the table.
 */
export async function listTenants(db: Knex, input: ListTenantsInput): Promise<TenantPage> {
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw new ApiError('validation', `query.limit must be an integer from 1 to ${MAX_PAGE_SIZE}.`);
  }
  // Decoded up front so a malformed cursor is a 400 before any query runs.
  if (input.cursor !== undefined) decodeCursor(input.cursor);
  const pattern = input.q !== undefined && input.q !== '' ? containsPattern(input.q) : null;

  return db.transaction(
    async (trx) => {
      const matching = (qb: Knex.QueryBuilder) =>
        pattern ? qb.where((w) => w.whereILike('name', pattern).orWhereILike('slug', pattern)) : qb;
      const { page, nextCursor } = await pageByCreation<TenantRow>(trx, matching(trx('tenants')), { limit, cursor: input.cursor });
      const [{ n }] = (await matching(trx('tenants').count({ n: '*' }))) as Array<{ n: string | number }>;
      return { tenants: page, totalCount: Number(n), nextCursor };
    },
    { isolationLevel: 'repeatable read', readOnly: true },
  );
}

/** The tenant with `id`, or 404 `Tenant not found` naming it. */
export async function getTenant(db: Knex | Knex.Transaction, id: string): Promise<TenantRow> {
  const row = (await db('tenants').where({ id }).first()) as TenantRow | undefined;
  if (!row) throw notFound(id);
  return row;
}

// ---------------------------------------------------------------------------------------------
// Update

export interface TenantPatch {
  name?: string;
  slug?: string;
  settings?: Record<string, unknown>;
  status?: 'active' | 'pending_approval';
}

/**
 * Changes only the fields present; `settings` replaces the stored object. The default tenant
 * keeps its slug (SERVICE_DEFAULT_TENANT_SLUG finds it at boot) and cannot be put back into
 * `pending_approval` (that would lock every single-tenant request out): both are 400.
 * A taken slug is the unique violation → 409 Conflict.
 */
export async function updateTenant(db: Knex, id: string, patch: TenantPatch): Promise<TenantRow> {
  return db.transaction(async (trx) => {
    const current = (await trx('tenants').where({ id }).forUpdate().first()) as TenantRow | undefined;
    if (!current) throw notFound(id);
    if (current.is_default && patch.slug !== undefined && patch.slug !== current.slug) {
      throw new ApiError('badRequest', `The slug of the default tenant ('${current.slug}') cannot be changed.`);
    }
    if (current.is_default && patch.status === 'pending_approval') {
      throw new ApiError('badRequest', 'The default tenant cannot be set to pending_approval.');
    }
    const changes: Record<string, unknown> = { updated_at: trx.fn.now() };
    if (patch.name !== undefined) changes.name = patch.name;
    if (patch.slug !== undefined) changes.slug = patch.slug;
    if (patch.settings !== undefined) changes.settings = JSON.stringify(patch.settings);
    if (patch.status !== undefined) changes.status = patch.status;
    const [row] = (await trx('tenants').where({ id }).update(changes).returning('*')) as TenantRow[];
    return row!;
  });
}

// ---------------------------------------------------------------------------------------------
// Delete

/**
 * Tenant tables children before parents (TENANT_TABLES lists parents first). Deleting in this
 * order means each batch's foreign-key actions find nothing left to cascade or set null, so a
 * batch costs only its own rows.
 */
export const DELETE_ORDER: readonly TenantTable[] = [...TENANT_TABLES].reverse();

/** Rows per tenant table. */
export type TableCounts = Record<TenantTable, number>;

/** Rows of each tenant table that belong to `tenantId`, counted under its row-level security. */
export async function countTenantRows(db: Knex, tenantId: string): Promise<TableCounts> {
  return withTenant(db, tenantId, (trx) => countRowsIn(trx, tenantId));
}

/** One statement counting the tenant's rows in every tenant table, inside `trx`. */
async function countRowsIn(trx: Knex.Transaction, tenantId: string): Promise<TableCounts> {
  const selects = TENANT_TABLES.map((t) => `(select count(*) from ${t} where tenant_id = :id) as ${t}`).join(', ');
  const result = await trx.raw<{ rows: Array<Record<string, string>> }>(`select ${selects}`, { id: tenantId });
  const row = result.rows[0]!;
  return Object.fromEntries(TENANT_TABLES.map((t) => [t, Number(row[t])])) as TableCounts;
}

export interface DeleteOptions {
  /** Whether the service runs in multi-tenant mode (the default tenant is deletable only then). */
  multiTenantMode: boolean;
  dryRun?: boolean;
  /** Rows per batch (default 5000). */
  batchSize?: number;
}

export type TenantDeletion =
  | { dryRun: true; tenant: TenantRow; rows: TableCounts }
  | { dryRun: false; tenant: TenantRow; rows: TableCounts };

export const DELETE_BATCH_SIZE = 5000;

/**
 * Deletes a tenant and everything it owns, or (dry run) counts what would go.
 *
 * Why in batches: one `DELETE FROM tenants` would cascade through every child row in a single
 * transaction — for a tenant with a million rows that outlives the statement timeout, holds its
 * row locks and WAL until the end, and if it fails nothing is deleted. Instead the child rows go
 * table by table, children before parents, `batchSize` rows per short `withTenant` transaction
 * (row-level security confines each to this tenant, and only this tenant's rows are locked, so
 * other tenants are never blocked). The tenant row goes last; its cascade then removes only rows
 * written meanwhile. If the process stops half-way, what remains is a smaller tenant that
 * another delete finishes.
 */
export async function deleteTenant(db: Knex, id: string, opts: DeleteOptions): Promise<TenantDeletion> {
  const tenant = await getTenant(db, id);
  if (tenant.is_default && !opts.multiTenantMode) {
    throw new ApiError('badRequest', `The default tenant '${tenant.slug}' cannot be deleted in single-tenant mode.`);
  }
  if (opts.dryRun) {
    return { dryRun: true, tenant, rows: await countTenantRows(db, id) };
  }

  const batchSize = opts.batchSize ?? DELETE_BATCH_SIZE;
  const rows = Object.fromEntries(TENANT_TABLES.map((t) => [t, 0])) as TableCounts;
  for (const table of DELETE_ORDER) {
    for (;;) {
      // ctid = any(array(…)) is a TID scan: the batch is picked through the (tenant_id, …) primary key.
      const deleted = await withTenant(db, id, async (trx) => {
        const r = await trx.raw<{ rowCount: number }>(
          `delete from ${table} where ctid = any(array(select ctid from ${table} where tenant_id = ? limit ?))`,
          [id, batchSize],
        );
        return r.rowCount;
      });
      rows[table] += deleted;
      if (deleted < batchSize) break;
    }
  }
  const gone = await withTenant(db, id, async (trx) => {
    // Anything written to the tenant while the batches ran is removed by this cascade.
    const before = await countRowsIn(trx, id);
    const n = await trx('tenants').where({ id }).del();
    if (n === 1) for (const t of TENANT_TABLES) rows[t] += before[t];
    return n;
  });
  // A concurrent delete of the same tenant won the race.
  if (gone === 0) throw notFound(id);
  return { dryRun: false, tenant, rows };
}
