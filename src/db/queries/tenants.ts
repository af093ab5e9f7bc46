/**
 * Tenant rows, mapped once to the domain's `Tenant` (src/context/entities.ts): the tenant row,
 * its identity links, its first admin and its sample data. Platform rows (the `tenants` and
 * `identity_links` tables have no row-level security), read and written in a service
 * transaction (src/db/tenant-scope.ts `withService`), except the tenant-owned rows a new tenant
 * starts with, written under the new tenant's scope.
 */
import type { TenantStatusUpdate } from '../../context/tenant-status';
import type { Knex } from 'knex';
import type { IdentityLink, MembershipPolicy, Tenant, TenantLifecycle, TenantStatus } from '../../context/entities';
import { ADMIN_ROLE } from '../../context/roles';
import { BoardMemberRow, BoardRow, CreditTransactionRow, databaseNow, GenerationRow, ProviderConfigRow, TenantRow, UserRow } from '../models';
import { setTenantScope } from '../tenant-scope';

/** A tenants row as the domain speaks of it (with `links` when they were read): the one mapping of tenants. */
export function tenantOf(row: TenantRow, links?: readonly IdentityLink[]): Tenant {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    settings: row.settings,
    status: row.status,
    isDefault: row.is_default,
    membershipPolicy: { provisionFromClaims: row.provision_from_claims, claimsIssuer: row.claims_issuer, rolesFromClaims: row.roles_from_claims },
    ...(links ? { identityLinks: links } : {}),
    lifecycle: {
      suspendedAt: row.suspended_at ?? null,
      suspensionReason: row.suspension_reason ?? null,
      deleteAfter: row.delete_after ?? null,
      statusBeforeDeletion: row.status_before_deletion ?? null,
    },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The tenant with `id` (without its links); undefined when absent. */
export async function findTenant(trx: Knex.Transaction, id: string): Promise<Tenant | undefined> {
  const row = await TenantRow.query(trx).findById(id);
  return row && tenantOf(row);
}

/** The tenant with `id` and its identity links; undefined when absent. */
export async function findTenantWithLinks(trx: Knex.Transaction, id: string): Promise<Tenant | undefined> {
  const row = await TenantRow.query(trx).findById(id);
  return row && tenantOf(row, (await identityLinksOf(trx, [id])).get(id) ?? []);
}

/**
 * The tenant, locked FOR NO KEY UPDATE: serialises updates of this tenant without waiting for
 * its in-flight requests (they hold it FOR KEY SHARE). Undefined when absent.
 */
export async function findTenantForUpdate(trx: Knex.Transaction, id: string): Promise<Tenant | undefined> {
  const row = await TenantRow.query(trx).findById(id).forNoKeyUpdate();
  return row && tenantOf(row);
}

/** The tenant locked FOR KEY SHARE, like a request's entry (an accepted invitation's answer). */
export async function lockTenantForKeyShare(trx: Knex.Transaction, tenantId: string): Promise<Tenant | undefined> {
  const row = await TenantRow.query(trx).findById(tenantId).forKeyShare();
  return row && tenantOf(row);
}

/** A change of a tenant: the fields present change; `suspendedAt: 'now'` is the transaction's clock. */
export interface TenantChange {
  name?: string;
  slug?: string;
  settings?: Record<string, unknown>;
  status?: TenantStatus;
  membershipPolicy?: Partial<MembershipPolicy>;
  suspendedAt?: 'now' | null;
  suspensionReason?: string | null;
  deleteAfter?: Date | null;
  statusBeforeDeletion?: TenantLifecycle['statusBeforeDeletion'];
}

/** Writes `change` (and `updated_at`, the transaction's clock) and returns the tenant as stored, without its links. */
export async function patchTenant(trx: Knex.Transaction, id: string, change: TenantChange): Promise<Tenant> {
  const patch: Partial<TenantRow> = { updated_at: databaseNow() };
  if (change.name !== undefined) patch.name = change.name;
  if (change.slug !== undefined) patch.slug = change.slug;
  if (change.settings !== undefined) patch.settings = change.settings;
  if (change.status !== undefined) patch.status = change.status;
  const policy = change.membershipPolicy;
  if (policy?.provisionFromClaims !== undefined) patch.provision_from_claims = policy.provisionFromClaims;
  if (policy?.claimsIssuer !== undefined) patch.claims_issuer = policy.claimsIssuer;
  if (policy?.rolesFromClaims !== undefined) patch.roles_from_claims = policy.rolesFromClaims;
  if (change.suspendedAt !== undefined) patch.suspended_at = change.suspendedAt === 'now' ? databaseNow() : null;
  if (change.suspensionReason !== undefined) patch.suspension_reason = change.suspensionReason;
  if (change.deleteAfter !== undefined) patch.delete_after = change.deleteAfter;
  if (change.statusBeforeDeletion !== undefined) patch.status_before_deletion = change.statusBeforeDeletion;
  const [row] = await TenantRow.query(trx).where({ id }).patch(patch).returning('*');
  return tenantOf(row!);
}

/** Deletes the tenant row (its remaining rows go by cascade); 1 when deleted, 0 when already gone. */
export async function deleteTenantRow(trx: Knex.Transaction, id: string): Promise<number> {
  return TenantRow.query(trx).deleteById(id);
}

/** Tenants a registrant created (deleted ones no longer count). */
export async function countTenantsCreatedBy(trx: Knex.Transaction, who: { issuer: string; subject: string }): Promise<number> {
  return TenantRow.query(trx).where({ created_by_issuer: who.issuer, created_by_subject: who.subject }).resultSize();
}

/** What a new tenant row holds. */
export interface NewTenant {
  name: string;
  slug: string;
  settings: Record<string, unknown>;
  status: TenantStatusUpdate;
  createdBy: { issuer: string; subject: string } | null;
  registration: Record<string, unknown> | null;
  membershipPolicy: MembershipPolicy;
}

/**
 * Inserts the tenant (returned with its registration record as stored) and scopes `trx` to it, so the tenant-owned rows that follow are written
 * under its row-level security. A taken slug is the unique violation on `tenants_slug_unique`,
 * which the error catalog maps to 409 Conflict.
 */
export async function insertTenant(trx: Knex.Transaction, t: NewTenant): Promise<{ tenant: Tenant; registration: Record<string, unknown> | null }> {
  const row = await TenantRow.query(trx)
    .insert({
      name: t.name,
      slug: t.slug,
      settings: t.settings,
      status: t.status,
      created_by_issuer: t.createdBy?.issuer ?? null,
      created_by_subject: t.createdBy?.subject ?? null,
      registration: t.registration,
      provision_from_claims: t.membershipPolicy.provisionFromClaims,
      claims_issuer: t.membershipPolicy.claimsIssuer,
      roles_from_claims: t.membershipPolicy.rolesFromClaims,
    })
    .returning('*');
  await setTenantScope(trx, row.id);
  // The registration record as stored (jsonb), for the registration's event.
  return { tenant: tenantOf(row), registration: row.registration };
}

/** Inserts the new tenant's first member, its admin (`trx` scoped to the tenant). */
export async function insertTenantAdmin(
  trx: Knex.Transaction,
  tenantId: string,
  a: { issuer: string; subject: string; email: string | null; displayName: string | null },
): Promise<{ userId: string }> {
  const row = await UserRow.query(trx)
    .insert({ tenant_id: tenantId, issuer: a.issuer, subject: a.subject, email: a.email, display_name: a.displayName, role: ADMIN_ROLE })
    .returning('id');
  return { userId: row.id };
}

/** `links` without repeated pairs, in a stable order (as the tenant's events and idempotency hash list them). */
export function distinctLinks(links: readonly IdentityLink[]): IdentityLink[] {
  const seen = new Map<string, IdentityLink>();
  for (const l of links) seen.set(JSON.stringify([l.issuer, l.organizationId]), { issuer: l.issuer, organizationId: l.organizationId });
  return [...seen.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, l]) => l);
}

/** The links of each of `tenantIds`, sorted (a tenant without links is absent from the map). */
export async function identityLinksOf(trx: Knex.Transaction, tenantIds: readonly string[]): Promise<Map<string, IdentityLink[]>> {
  const out = new Map<string, IdentityLink[]>();
  if (tenantIds.length === 0) return out;
  const rows = (await trx('identity_links')
    .select('tenant_id', 'issuer', 'organization_id')
    .whereIn('tenant_id', tenantIds as string[])
    .orderBy(['issuer', 'organization_id'])) as Array<{ tenant_id: string; issuer: string; organization_id: string }>;
  for (const r of rows) {
    const list = out.get(r.tenant_id) ?? [];
    list.push({ issuer: r.issuer, organizationId: r.organization_id });
    out.set(r.tenant_id, list);
  }
  return out;
}

/** `tenants` with their identity links, read in one query. */
export async function withIdentityLinks(trx: Knex.Transaction, tenants: readonly Tenant[]): Promise<Tenant[]> {
  const links = await identityLinksOf(
    trx,
    tenants.map((t) => t.id),
  );
  return tenants.map((t) => ({ ...t, identityLinks: links.get(t.id) ?? [] }));
}

/**
 * Makes `links` the tenant's identity links (migration 008): the ones no longer wanted are
 * deleted, the new ones inserted. A pair another tenant holds is the unique violation
 * `identity_links_pair_unique` (409). The caller holds the tenant row locked, so two updates of
 * one tenant do not interleave.
 */
export async function replaceIdentityLinks(trx: Knex.Transaction, tenantId: string, links: readonly IdentityLink[]): Promise<void> {
  const key = (issuer: string, organizationId: string) => JSON.stringify([issuer, organizationId]);
  const wanted = new Map(links.map((l) => [key(l.issuer, l.organizationId), l]));
  const current = (await trx('identity_links').select('issuer', 'organization_id').where({ tenant_id: tenantId })) as Array<{ issuer: string; organization_id: string }>;
  const stale = current.filter((c) => !wanted.delete(key(c.issuer, c.organization_id)));
  for (const c of stale) await trx('identity_links').where({ tenant_id: tenantId, issuer: c.issuer, organization_id: c.organization_id }).delete();
  if (wanted.size === 0) return;
  await trx('identity_links').insert([...wanted.values()].map((l) => ({ tenant_id: tenantId, issuer: l.issuer, organization_id: l.organizationId })));
}

/**
 * Sample data (docs/tenants.md#tenant-administration): two boards with a few generations each
 * (with media URLs), one provider configuration and one credit grant. The same content every time.
 */
export const SAMPLE_BOARDS = [
  {
    name: 'Product launch',
    description: 'Hero images and social posts for the spring launch.',
    generations: [
      { prompt: 'A minimalist hero image of the product on a pastel background', media: 'launch-hero.png', type: 'image/png' },
      { prompt: 'Square social post announcing the launch date', media: 'launch-social.png', type: 'image/png' },
      { prompt: 'Ten-second teaser clip with the logo reveal', media: 'launch-teaser.mp4', type: 'video/mp4' },
    ],
  },
  {
    name: 'Brand guidelines',
    description: 'Reference visuals for colours, type and tone.',
    generations: [
      { prompt: 'Colour palette swatches in the brand colours', media: 'brand-palette.png', type: 'image/png' },
      { prompt: 'Typography specimen sheet for headings and body text', media: 'brand-type.png', type: 'image/png' },
    ],
  },
] as const;

export const SAMPLE_PROVIDER = { provider: 'sample-image-provider', config: { model: 'sample-v1', size: '1024x1024' } } as const;
export const SAMPLE_CREDIT_GRANT = 1000;
const MEDIA_BASE = 'https://media.example.com/samples/';

/** Inserts the sample rows for `tenantId`; `trx` must already be scoped to that tenant. */
export async function insertSampleData(trx: Knex.Transaction, tenantId: string, ownerUserId: string | null): Promise<void> {
  for (const board of SAMPLE_BOARDS) {
    const row = await BoardRow.query(trx)
      .insert({ tenant_id: tenantId, name: board.name, description: board.description, created_by: ownerUserId })
      .returning('id');
    await GenerationRow.query(trx).insert(
      board.generations.map((g) => ({
        tenant_id: tenantId,
        board_id: row.id,
        prompt: g.prompt,
        status: 'completed' as const,
        media_url: MEDIA_BASE + g.media,
        media_type: g.type,
      })),
    );
    if (ownerUserId) await BoardMemberRow.query(trx).insert({ tenant_id: tenantId, board_id: row.id, user_id: ownerUserId, role: 'owner' });
  }
  await ProviderConfigRow.query(trx).insert({ tenant_id: tenantId, provider: SAMPLE_PROVIDER.provider, config: { ...SAMPLE_PROVIDER.config } });
  await CreditTransactionRow.query(trx).insert({
    tenant_id: tenantId,
    user_id: ownerUserId,
    kind: 'grant',
    amount: SAMPLE_CREDIT_GRANT,
    balance_after: SAMPLE_CREDIT_GRANT,
    description: 'Welcome credits',
  });
}
