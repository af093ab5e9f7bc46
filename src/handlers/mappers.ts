/**
 * Explicit row → API mappings, so a new column never leaks into a response.
 */
import type { Board, BoardDetail, Generation, Member, Permission, Role, Tenant } from '../../generated/types.gen';
import type { BoardRow, GenerationRow, TenantRow, UserRow } from '../db/models';
import type { BoardFields } from '../db/queries/boards-page';
import type { Permission as PermissionEntry, Role as RoleEntry } from '../domain/roles';
import type { Membership, ResolvedTenant } from '../context/request';

const iso = (d: Date | string): string => (d instanceof Date ? d : new Date(d)).toISOString();

/** `identity_links`, present when the tenant has any (absent: none). */
function linksOf(links: ReadonlyArray<{ issuer: string; organizationId: string }>): Pick<Tenant, 'identity_links'> {
  return links.length > 0 ? { identity_links: links.map((l) => ({ issuer: l.issuer, organization_id: l.organizationId })) } : {};
}

/** A tenants row (or the resolved tenant of a request) as the Tenant schema. */
export function toTenant(t: TenantRow | (TenantRow & { identityLinks: ReadonlyArray<{ issuer: string; organizationId: string }> }) | ResolvedTenant): Tenant {
  if ('isDefault' in t) {
    return {
      tenant_id: t.id,
      name: t.name,
      slug: t.slug,
      settings: t.settings,
      status: t.status,
      membership_policy: { provision_from_claims: t.provisionFromClaims, claims_issuer: t.claimsIssuer, ...(t.rolesFromClaims ? { roles_from_claims: true } : {}) },
      ...linksOf(t.identityLinks),
      created_at: iso(t.createdAt),
      updated_at: iso(t.updatedAt),
    };
  }
  return {
    tenant_id: t.id,
    name: t.name,
    slug: t.slug,
    settings: t.settings,
    status: t.status,
    membership_policy: { provision_from_claims: t.provision_from_claims, claims_issuer: t.claims_issuer, ...(t.roles_from_claims ? { roles_from_claims: true } : {}) },
    ...('identityLinks' in t ? linksOf(t.identityLinks) : {}),
    // Platform admins' reads (a tenants row); GET /api/tenant (a resolved tenant) never shows the reason.
    suspended_at: t.suspended_at ? iso(t.suspended_at) : null,
    suspension_reason: t.suspension_reason ?? null,
    delete_after: t.delete_after ? iso(t.delete_after) : null,
    created_at: iso(t.created_at),
    updated_at: iso(t.updated_at),
  };
}

/**
 * A users row with its role's permissions (or the caller's membership, which carries them) as
 * the Member schema.
 */
export function toMember(u: Membership): Member;
export function toMember(u: UserRow, permissions: readonly string[]): Member;
export function toMember(u: UserRow | Membership, permissions?: readonly string[]): Member {
  if ('userId' in u) {
    return { user_id: u.userId, issuer: u.issuer, subject: u.subject, email: u.email, display_name: u.displayName, role: u.role, permissions: [...u.permissions], created_at: iso(u.createdAt) };
  }
  return { user_id: u.id, issuer: u.issuer, subject: u.subject, email: u.email, display_name: u.display_name, role: u.role, permissions: [...(permissions ?? [])], created_at: iso(u.created_at) };
}

export function toPermission(p: PermissionEntry): Permission {
  return { key: p.key, description: p.description, created_at: iso(p.createdAt) };
}

export function toRole(r: RoleEntry): Role {
  return {
    key: r.key,
    name: r.name,
    description: r.description,
    permissions: [...r.permissions],
    scope: r.scope,
    built_in: r.builtIn,
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
  };
}

export function toBoard(b: BoardFields): Board {
  return { board_id: b.id, name: b.name, description: b.description, created_by: b.created_by, created_at: iso(b.created_at) };
}

export function toGeneration(g: GenerationRow): Generation {
  return { generation_id: g.id, prompt: g.prompt, status: g.status, media_url: g.media_url, media_type: g.media_type, created_at: iso(g.created_at) };
}

export function toBoardDetail(b: BoardRow, generations: readonly GenerationRow[]): BoardDetail {
  return { ...toBoard(b), generations: generations.map(toGeneration) };
}
