/**
 * The service's own permissions (docs/roles.md#system-permissions): one per kind of work in a
 * tenant, each guarding the tenant operations whose `x-permission` names it in openapi.yaml.
 * They are in the catalogue with `system: true` (migration 025 spells them literally), cannot be
 * created or deleted, and no product permission may start with their prefix. A plain constant
 * module with no imports, so the console and the generated operation table can read it too.
 */

/** Every system permission, sorted. */
export const SYSTEM_PERMISSIONS = [
  'tenant:directory:manage',
  'tenant:domains:manage',
  'tenant:events:read',
  'tenant:invitations:write',
  'tenant:members:read',
  'tenant:members:write',
  'tenant:roles:write',
  'tenant:settings:write',
  'tenant:sso:manage',
  'tenant:webhooks:manage',
] as const;

export type SystemPermission = (typeof SYSTEM_PERMISSIONS)[number];

/** The prefix reserved for system permissions: no product permission starts with it. */
export const SYSTEM_PERMISSION_PREFIX = 'tenant:';

/**
 * What administering a tenant's people needs: a tenant always keeps a member holding both
 * (docs/roles.md#who-can-still-administer), else nobody could give roles or manage members.
 */
export const ADMINISTRATION_PERMISSIONS: readonly SystemPermission[] = ['tenant:members:write', 'tenant:roles:write'];

export function isSystemPermission(key: string): key is SystemPermission {
  return (SYSTEM_PERMISSIONS as readonly string[]).includes(key);
}

/** True when the key is in the reserved namespace (a system permission or a key that would pose as one). */
export function isReservedPermissionKey(key: string): boolean {
  return key.startsWith(SYSTEM_PERMISSION_PREFIX);
}

/**
 * The system permissions a role given by a verified domain may hold
 * (docs/domains.md#joining-by-domain): only what the built-in `member` role holds, reading who
 * else is a member. A DNS record proves control of a domain, not a decision about a person.
 */
export const DOMAIN_JOINABLE_PERMISSIONS: readonly SystemPermission[] = ['tenant:members:read'];

/** The first permission of `permissions` that a role given by a domain may not hold; undefined: none. */
export function notGivenByDomain(permissions: readonly string[]): string | undefined {
  return permissions.find((p) => isReservedPermissionKey(p) && !(DOMAIN_JOINABLE_PERMISSIONS as readonly string[]).includes(p));
}
