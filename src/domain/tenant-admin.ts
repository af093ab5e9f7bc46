/**
 * Tenant administration (docs/tenants.md#tenant-administration): create (with Idempotency-Key),
 * list, get, update and delete (batched, with a dry run). Platform-level: the `tenants` table has
 * no row-level security, while every tenant-owned row is touched only inside `withTenant`.
 */
import crypto from 'node:crypto';
import { databaseNow, TenantRow } from '../db/models';
import { claimIdempotencyKey, completeIdempotencyKey, readIdempotencyKey, sweepExpiredIdempotencyKeys } from '../db/queries/idempotency';
import { countTenantRowsIn, deleteTenantRowsBatch, lockTenantExclusively, type TableCounts } from '../db/queries/tenant-delete';
import { identityLinksOf, replaceIdentityLinks, type IdentityLink } from '../db/queries/identity-links';
import { countTenants, searchTenants } from '../db/queries/tenant-search';
import { findTenantForUpdate, patchTenant } from '../db/queries/tenants';
import { TENANT_TABLES, type TenantTable } from '../db/schema';
import { withService, withTenant, type Database, type Transaction } from '../db/tenant-scope';
import { ApiError } from '../errors';
import { changedFields, freeForm, recordEvent, type EventOrigin } from './events';
import { decodeCursor, pageByCreation } from './pagination';
import { createTenantWithSampleData, type MembershipPolicy } from './tenants';

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
  /** Default for tenants a platform admin creates: provision from claims of any issuer. */
  membershipPolicy?: Partial<MembershipPolicy>;
  /** Organizations of identity providers naming the tenant (docs/identity-providers.md#organization-ids). */
  identityLinks?: readonly IdentityLink[];
}

export type { IdentityLink } from '../db/queries/identity-links';

/** A tenants row with its identity links, as platform admins read it. */
export type LinkedTenantRow = TenantRow & { identityLinks: IdentityLink[] };

/** `links` without repeated pairs, in a stable order. */
function distinctLinks(links: readonly IdentityLink[]): IdentityLink[] {
  const seen = new Map<string, IdentityLink>();
  for (const l of links) seen.set(JSON.stringify([l.issuer, l.organizationId]), { issuer: l.issuer, organizationId: l.organizationId });
  return [...seen.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, l]) => l);
}

const linksData = (links: readonly IdentityLink[]) => links.map((l) => ({ issuer: l.issuer, organization_id: l.organizationId }));

async function withLinks(trx: Transaction, rows: TenantRow[]): Promise<LinkedTenantRow[]> {
  const links = await identityLinksOf(
    trx,
    rows.map((r) => r.id),
  );
  return rows.map((r) => Object.assign(r, { identityLinks: links.get(r.id) ?? [] }));
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
    membership_policy: {
      provision_from_claims: input.membershipPolicy?.provisionFromClaims ?? true,
      claims_issuer: input.membershipPolicy?.claimsIssuer ?? null,
      // Absent unless on, so the hash of a request without it is what it always was.
      roles_from_claims: input.membershipPolicy?.rolesFromClaims ? true : undefined,
    },
    // Absent unless given, so the hash of a request without links is what it always was.
    identity_links: input.identityLinks?.length ? linksData(distinctLinks(input.identityLinks)) : undefined,
  });
  return crypto.createHash('sha256').update(canonical).digest('hex');
}

/**
 * The caller as stored in idempotency_keys' primary key: the JSON pair, or its SHA-256 when the
 * pair is long (issuer and subject may each be 1 024 bytes and JSON escaping doubles some
 * characters; an index row holds at most ~2 700 bytes). Short pairs keep their old form.
 */
const callerKey = (c: IdempotencyInput['caller']) => {
  const pair = JSON.stringify([c.issuer, c.subject]);
  return Buffer.byteLength(pair, 'utf8') <= 512 ? pair : `sha256:${crypto.createHash('sha256').update(pair).digest('hex')}`;
};

/**
 * Creates a tenant (and its sample data) in one transaction. A taken slug is the unique
 * violation on `tenants_slug_unique` (409 Conflict). With an idempotency key, the key row is
 * written first in the same transaction: a concurrent request with the same key blocks on its
 * primary key until this one commits, then replays its result, so one key never makes two
 * tenants; if this one rolls back, nothing of it (key included) remains.
 */
export async function createTenant(db: Database, origin: EventOrigin, input: CreateTenantInput, idempotency?: IdempotencyInput): Promise<TenantCreation> {
  return withService(db, async (trx) => {
    let key: { caller: string; key: string; hash: string } | null = null;
    if (idempotency) {
      key = { caller: callerKey(idempotency.caller), key: idempotency.key, hash: createRequestHash(input) };
      // An expired key is forgotten; so are a few other expired ones, to keep the table small.
      await sweepExpiredIdempotencyKeys(trx, key.caller, key.key, IDEMPOTENCY_WINDOW_HOURS);
      if (!(await claimIdempotencyKey(trx, key.caller, key.key, key.hash))) {
        const stored = await readIdempotencyKey(trx, key.caller, key.key);
        if (!stored) {
          // Only reachable if the row expired and was swept between the two statements.
          throw new ApiError('conflict', `The Idempotency-Key '${idempotency.key}' is being reused; retry the request.`);
        }
        if (stored.request_hash !== key.hash) {
          throw new ApiError('conflict', `The Idempotency-Key '${idempotency.key}' was already used with a different request body.`);
        }
        const r = stored.response as unknown as StoredCreation;
        return { tenantId: r.tenant_id, name: r.name, slug: r.slug, message: r.message, existing: true };
      }
    }

    const includeSampleData = input.includeSampleData ?? false;
    const { tenant } = await createTenantWithSampleData(trx, {
      name: input.name,
      slug: input.slug,
      settings: input.settings ?? {},
      includeSampleData,
      membershipPolicy: {
        provisionFromClaims: input.membershipPolicy?.provisionFromClaims ?? true,
        claimsIssuer: input.membershipPolicy?.claimsIssuer ?? null,
        rolesFromClaims: input.membershipPolicy?.rolesFromClaims ?? false,
      },
    });
    const links = distinctLinks(input.identityLinks ?? []);
    if (links.length > 0) await replaceIdentityLinks(trx, tenant.id, links);
    const message = includeSampleData
      ? `Tenant '${tenant.name}' (${tenant.slug}) created with sample data.`
      : `Tenant '${tenant.name}' (${tenant.slug}) created.`;
    await recordEvent(trx, origin, {
      action: 'tenant.created',
      tenantId: tenant.id,
      target: { type: 'tenant', id: tenant.id },
      data: { tenant: { ...tenantData(tenant), ...(links.length > 0 ? { identity_links: linksData(links) } : {}) }, include_sample_data: includeSampleData },
    });
    const response: StoredCreation = { tenant_id: tenant.id, name: tenant.name, slug: tenant.slug, message };
    if (key) await completeIdempotencyKey(trx, key.caller, key.key, tenant.id, { ...response });
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
  tenants: LinkedTenantRow[];
  totalCount: number;
  nextCursor: string | null;
}

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

export { containsPattern } from '../db/queries/tenant-search';

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
      return { tenants: await withLinks(trx, page), totalCount, nextCursor };
    },
    { isolationLevel: 'repeatable read', readOnly: true },
  );
}

/** The tenant with `id`, or 404 `Tenant not found` naming it. */
export async function getTenant(db: Database, id: string): Promise<LinkedTenantRow> {
  return withService(db, async (trx) => (await withLinks(trx, [await findTenant(trx, id)]))[0]!, { readOnly: true });
}

/** The tenant with `id` inside `trx`, or 404. */
async function findTenant(trx: Transaction, id: string): Promise<TenantRow> {
  const row = await TenantRow.query(trx).findById(id);
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
  /** Fields present change; `claims_issuer: null` clears the issuer restriction. */
  membershipPolicy?: Partial<MembershipPolicy>;
  /** Replaces the tenant's identity links. */
  identityLinks?: readonly IdentityLink[];
}

/**
 * Changes only the fields present; `settings` replaces the stored object. The default tenant
 * keeps its slug (SERVICE_DEFAULT_TENANT_SLUG finds it at boot) and cannot be put back into
 * `pending_approval` (that would lock every single-tenant request out): both are 400.
 * A taken slug is the unique violation → 409 Conflict.
 */
export async function updateTenant(db: Database, origin: EventOrigin, id: string, patch: TenantPatch): Promise<LinkedTenantRow> {
  return withService(db, async (trx) => {
    // NO KEY UPDATE: serialises updates of this tenant without waiting for its in-flight requests
    // (they hold it FOR KEY SHARE); a slug change still waits for them (slug is a unique key).
    const current = await findTenantForUpdate(trx, id);
    if (!current) throw notFound(id);
    if (current.is_default && patch.slug !== undefined && patch.slug !== current.slug) {
      throw new ApiError('badRequest', `The slug of the default tenant ('${current.slug}') cannot be changed.`);
    }
    if (current.is_default && patch.status === 'pending_approval') {
      throw new ApiError('badRequest', 'The default tenant cannot be set to pending_approval.');
    }
    // Suspension and scheduled deletion end through their own operations, which record why.
    if (patch.status !== undefined && patch.status !== current.status && (current.status === 'suspended' || current.status === 'pending_deletion')) {
      const how = current.status === 'suspended' ? 'POST /api/setup/tenant/{tenant_id}/reactivate' : 'DELETE /api/setup/tenant/{tenant_id}/scheduled-deletion';
      throw new ApiError('conflict', `Tenant '${current.slug}' is ${current.status}; change its status with ${how}.`);
    }
    const changes: Partial<Pick<TenantRow, 'name' | 'slug' | 'settings' | 'status' | 'provision_from_claims' | 'claims_issuer' | 'roles_from_claims' | 'updated_at'>> = {
      updated_at: databaseNow(),
    };
    if (patch.name !== undefined) changes.name = patch.name;
    if (patch.slug !== undefined) changes.slug = patch.slug;
    if (patch.settings !== undefined) changes.settings = patch.settings;
    if (patch.status !== undefined) changes.status = patch.status;
    if (patch.membershipPolicy?.provisionFromClaims !== undefined) changes.provision_from_claims = patch.membershipPolicy.provisionFromClaims;
    if (patch.membershipPolicy?.claimsIssuer !== undefined) changes.claims_issuer = patch.membershipPolicy.claimsIssuer;
    if (patch.membershipPolicy?.rolesFromClaims !== undefined) changes.roles_from_claims = patch.membershipPolicy.rolesFromClaims;
    const row = await patchTenant(trx, id, changes);
    const linksBefore = distinctLinks((await identityLinksOf(trx, [id])).get(id) ?? []);
    let linksAfter = linksBefore;
    if (patch.identityLinks !== undefined) {
      linksAfter = distinctLinks(patch.identityLinks);
      await replaceIdentityLinks(trx, id, linksAfter);
    }
    // Approving (pending_approval → active) is its own event; any other changed field is
    // tenant.updated with `before` and `after` of just those fields.
    const approved = current.status === 'pending_approval' && row!.status === 'active';
    const before: Record<string, unknown> = { ...tenantData(current), identity_links: linksData(linksBefore) };
    const diff = changedFields(before, { ...tenantData(row!), identity_links: linksData(linksAfter) });
    if (approved) {
      delete diff.before.status;
      delete diff.after.status;
      await recordEvent(trx, origin, {
        action: 'tenant.approved',
        tenantId: id,
        target: { type: 'tenant', id },
        data: { tenant: tenantData(row!), before: { status: current.status }, after: { status: row!.status } },
      });
    }
    if (!approved || Object.keys(diff.after).length > 0) {
      await recordEvent(trx, origin, { action: 'tenant.updated', tenantId: id, target: { type: 'tenant', id }, data: { ...diff, slug: row!.slug } });
    }
    return Object.assign(row!, { identityLinks: linksAfter });
  });
}

/** The fields of a tenant an event carries; `settings` only as far as SERVICE_EVENT_SETTINGS_KEYS allows. */
export function tenantData(t: TenantRow): Record<string, unknown> {
  return { tenant_id: t.id, name: t.name, slug: t.slug, settings: freeForm(t.settings), status: t.status, is_default: t.is_default };
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
export type { TableCounts } from '../db/queries/tenant-delete';

/** Rows of each tenant table that belong to `tenantId`, counted under its row-level security. */
export async function countTenantRows(db: Database, tenantId: string): Promise<TableCounts> {
  return withTenant(db, tenantId, (trx) => countTenantRowsIn(trx, tenantId));
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

/** The tenant, if a delete may remove it (404 if none; 400 for the default one in single-tenant mode). */
async function deletableTenant(db: Database, id: string, opts: { multiTenantMode: boolean }): Promise<TenantRow> {
  const tenant = await getTenant(db, id);
  if (tenant.is_default && !opts.multiTenantMode) {
    throw new ApiError('badRequest', `The default tenant '${tenant.slug}' cannot be deleted in single-tenant mode.`);
  }
  return tenant;
}

/** What deleting the tenant would remove now, per table; changes nothing. Same refusals as the delete. */
export async function previewTenantDeletion(db: Database, id: string, opts: { multiTenantMode: boolean }): Promise<{ tenant: TenantRow; rows: TableCounts }> {
  const tenant = await deletableTenant(db, id, opts);
  return { tenant, rows: await countTenantRows(db, id) };
}

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
 *
 * `tenant.deletion_started` commits before the first batch, so a delete cut short by a crash
 * still left its mark in the log; `tenant.deleted` is written with the tenant row's removal.
 */
export async function deleteTenant(db: Database, origin: EventOrigin, id: string, opts: DeleteOptions): Promise<TenantDeletion> {
  if (opts.dryRun) return { dryRun: true, ...(await previewTenantDeletion(db, id, opts)) };
  const tenant = await deletableTenant(db, id, opts);
  await withTenant(db, id, async (trx) => {
    // Still there (a concurrent delete may have finished since): no intent for a gone tenant.
    if (!(await TenantRow.query(trx).findById(id))) throw notFound(id);
    await recordEvent(trx, origin, { action: 'tenant.deletion_started', tenantId: id, target: { type: 'tenant', id }, data: { tenant: tenantData(tenant) } });
  });

  const batchSize = opts.batchSize ?? DELETE_BATCH_SIZE;
  const rows = Object.fromEntries(TENANT_TABLES.map((t) => [t, 0])) as TableCounts;
  for (const table of DELETE_ORDER) {
    for (;;) {
      const deleted = await withTenant(db, id, async (trx) => {
        await lockTenantExclusively(trx, id);
        return deleteTenantRowsBatch(trx, table, id, batchSize);
      });
      rows[table] += deleted;
      if (deleted < batchSize) break;
    }
  }
  const gone = await withTenant(db, id, async (trx) => {
    // Anything written to the tenant while the batches ran is removed by this cascade.
    await lockTenantExclusively(trx, id);
    const before = await countTenantRowsIn(trx, id);
    const n = await TenantRow.query(trx).deleteById(id);
    if (n === 1) {
      for (const t of TENANT_TABLES) rows[t] += before[t];
      // In the transaction that deletes the tenant row; the event itself outlives the tenant.
      await recordEvent(trx, origin, { action: 'tenant.deleted', tenantId: id, target: { type: 'tenant', id }, data: { tenant: tenantData(tenant), rows } });
    }
    return n;
  });
  // A concurrent delete of the same tenant won the race.
  if (gone === 0) throw notFound(id);
  return { dryRun: false, tenant, rows };
}
