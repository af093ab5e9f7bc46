/**
 * The verified caller and its claims, and the pure readings of claims that several layers share
 * (token verification, tenant resolution, slugs). A neutral module: it imports no layer.
 */

/** The verified caller of a request. */
export interface Caller {
  readonly issuer: string;
  readonly subject: string;
  readonly email: string | null;
  readonly emailVerified: boolean | null;
  readonly name: string | null;
  readonly isPlatformAdmin: boolean;
  /**
   * Why a token carrying the platform admin role is not a platform admin's: no admin issuer is
   * configured, or its issuer is not one of them. Absent otherwise.
   */
  readonly adminRoleIgnored?: 'no_admin_issuer' | 'other_issuer';
  readonly claims: Readonly<Record<string, unknown>>;
}

/** Where a request's tenant came from (docs/tenants.md#tenant-resolution). */
export type TenantSource =
  | 'organization_id_claim'
  | 'custom_claim'
  | 'tenant_claim'
  | 'organization_claim'
  | 'namespace_claim'
  | 'header'
  | 'email_domain'
  | 'single_tenant'
  /** A token of the service's own OpenID provider: its `tenant_id` claim (docs/sign-in.md#tokens-it-issues). */
  | 'tenant_id_claim';

/** The longest slug (tenants.slug, the X-Tenant header). */
const SLUG_MAX_LENGTH = 255;

/**
 * Normalizes a claim value to a slug: lowercase, runs outside [a-z0-9] become one `-`, no
 * leading or trailing `-`. Objects use `slug`, then `name`, then `id`; arrays their first
 * usable element. Returns null when nothing usable remains.
 */
export function normalizeClaimValue(value: unknown, depth = 0): string | null {
  if (depth > 3 || value === null || value === undefined) return null;
  if (typeof value === 'string') {
    const slug = value
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '');
    return slug === '' ? null : slug.slice(0, SLUG_MAX_LENGTH).replace(/-+$/, '');
  }
  if (typeof value === 'number' && Number.isFinite(value)) return normalizeClaimValue(String(value), depth + 1);
  if (Array.isArray(value)) {
    for (const item of value) {
      const s = normalizeClaimValue(item, depth + 1);
      if (s) return s;
    }
    return null;
  }
  if (typeof value === 'object') {
    const o = value as Record<string, unknown>;
    for (const key of ['slug', 'name', 'id']) {
      if (Object.prototype.hasOwnProperty.call(o, key)) {
        const s = normalizeClaimValue(o[key], depth + 1);
        if (s) return s;
      }
    }
  }
  return null;
}

/**
 * Reads a claim by dot path (`realm_access.roles` walks `realm_access` then `roles`): nested
 * objects only, so a top-level key spelled `realm_access.roles`, which a user-editable attribute
 * could put in a token, never stands in for it. A namespaced name (a URL or URN, with `/` or `:`,
 * as Auth0 requires for custom claims) is one top-level key, never walked
 * (docs/configuration.md#claim-names-and-dot-paths).
 */
export function readClaim(claims: Readonly<Record<string, unknown>>, name: string): unknown {
  if (/[/:]/.test(name)) return Object.prototype.hasOwnProperty.call(claims, name) ? claims[name] : undefined;
  let cur: unknown = claims;
  for (const part of name.split('.')) {
    if (!cur || typeof cur !== 'object' || !Object.prototype.hasOwnProperty.call(cur, part)) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}
