/**
 * Explicit domain → API mappings, so a new column never leaks into a response. Each entity has
 * one shape below the handlers (src/context/entities.ts) and one mapping here.
 */
import type { Board, BoardDetail, Generation, Member, Permission, Role, Tenant } from '../../generated/types.gen';
import type { Member as MemberEntry, Permission as PermissionEntry, Role as RoleEntry, Tenant as TenantEntry } from '../context/entities';
import type { BoardRecord, GenerationRecord } from '../context/records';


const iso = (d: Date | string): string => (d instanceof Date ? d : new Date(d)).toISOString();

/**
 * A tenant as the Tenant schema: `identity_links` when it has any (absent: none, or not read);
 * the lifecycle fields on platform admins' reads only (a tenant entered by a request has none).
 */
export function toTenant(t: TenantEntry): Tenant {
  const policy = t.membershipPolicy;
  const links = t.identityLinks ?? [];
  return {
    tenant_id: t.id,
    name: t.name,
    slug: t.slug,
    settings: t.settings,
    status: t.status,
    membership_policy: { provision_from_claims: policy.provisionFromClaims, claims_issuer: policy.claimsIssuer, ...(policy.rolesFromClaims ? { roles_from_claims: true } : {}) },
    ...(links.length > 0 ? { identity_links: links.map((l) => ({ issuer: l.issuer, organization_id: l.organizationId })) } : {}),
    ...(t.lifecycle
      ? {
          suspended_at: t.lifecycle.suspendedAt ? iso(t.lifecycle.suspendedAt) : null,
          suspension_reason: t.lifecycle.suspensionReason,
          delete_after: t.lifecycle.deleteAfter ? iso(t.lifecycle.deleteAfter) : null,
        }
      : {}),
    created_at: iso(t.createdAt),
    updated_at: iso(t.updatedAt),
  };
}

/** A member and their role's permissions (sorted) as the Member schema. */
export function toMember(m: MemberEntry, permissions: readonly string[]): Member {
  return { user_id: m.userId, issuer: m.issuer, subject: m.subject, email: m.email, display_name: m.displayName, role: m.role, permissions: [...permissions], created_at: iso(m.createdAt) };
}

export function toPermission(p: PermissionEntry): Permission {
  return { key: p.key, description: p.description, created_at: iso(p.createdAt), system: p.system };
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

export function toBoard(b: BoardRecord): Board {
  return { board_id: b.id, name: b.name, description: b.description, created_by: b.created_by, created_at: iso(b.created_at) };
}

export function toGeneration(g: GenerationRecord): Generation {
  return { generation_id: g.id, prompt: g.prompt, status: g.status, media_url: g.media_url, media_type: g.media_type, created_at: iso(g.created_at) };
}

export function toBoardDetail(b: BoardRecord, generations: readonly GenerationRecord[]): BoardDetail {
  return { ...toBoard(b), generations: generations.map(toGeneration) };
}
