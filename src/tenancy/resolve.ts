/**
 * Tenant resolution as pure functions: from (claims, X-Tenant header, config) to the slug of
 * the tenant a request asks for and where it came from (docs/tenants.md#tenant-resolution). The
 * database check of that slug (exists, active, membership) happens in the request's transaction.
 */
import { parse as parseDomain } from 'tldts';
import { normalizeClaimValue, readClaim, type TenantSource } from '../context/claims';
import { isPublicMailDomain } from './mail-domains';

export { normalizeClaimValue, readClaim, type TenantSource };

/** Sources 1–4: a tenant asserted by the identity provider by name. */
export const CLAIM_SOURCES: ReadonlySet<TenantSource> = new Set(['custom_claim', 'tenant_claim', 'organization_claim', 'namespace_claim']);

export const ORGANIZATION_CLAIMS = ['org', 'organization', 'org_slug', 'org_name'] as const;
export const NAMESPACE_CLAIMS = ['namespace', 'group', 'team', 'workspace'] as const;
const NAME_CLAIMS: ReadonlySet<string> = new Set(['tenant', ...ORGANIZATION_CLAIMS, ...NAMESPACE_CLAIMS]);

export const TENANT_HEADER_PATTERN = /^[a-z0-9-]+$/;
export const TENANT_HEADER_MAX = 255;

export type TenantRequest =
  /** `fromSet`: the claim named several tenants and the header chose this one. */
  | { kind: 'tenant'; slug: string; source: TenantSource; claim?: string; fromSet?: true }
  /** The token's organization ids: one is looked up by its link; with several, `header` chose
   * a tenant whose links must hold one of them (checked on the facts). */
  | { kind: 'linked'; organizationIds: readonly string[]; header: string | null; claim: string }
  | { kind: 'missing' }
  | { kind: 'mismatch'; claimSlug: string; headerSlug: string; claim: string }
  /** The claim names several tenants and no header chose one. */
  | { kind: 'choose'; claim: string; listed: readonly string[] }
  /** The claim names several tenants and the header names another. */
  | { kind: 'unlisted'; claim: string; listed: readonly string[]; headerSlug: string };

export interface ResolutionInput {
  claims: Readonly<Record<string, unknown>>;
  /** The X-Tenant header, already checked by `checkTenantHeader`. */
  header: string | null;
  customClaim: string | null;
  /** SERVICE_JWT_TENANT_ID_CLAIM: the claim holding organization ids (docs/identity-providers.md#organization-ids). */
  idClaim?: string | null;
}

/** A claim value whose every value is an object, keyed by tenant name (Keycloak's map). */
function isNameMap(value: unknown): value is Record<string, Record<string, unknown>> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const values = Object.values(value);
  return values.length > 0 && values.every((v) => v !== null && typeof v === 'object' && !Array.isArray(v));
}

/**
 * The tenants a claim value names (docs/identity-providers.md#several-tenants-in-one-claim): an
 * array and Keycloak's map are sets (each element, each key); anything else is one organization
 * (`normalizeClaimValue`). Deduplicated, in the claim's order; empty when nothing usable remains.
 */
export function claimedSlugs(value: unknown): string[] {
  const items = Array.isArray(value) ? value : isNameMap(value) ? Object.keys(value) : [value];
  const out: string[] = [];
  for (const item of items) {
    const slug = normalizeClaimValue(item, 1);
    if (slug && !out.includes(slug)) out.push(slug);
  }
  return out;
}

/**
 * The organization ids a claim value carries: a string (or number); an array of them or of
 * objects with `id`; Keycloak's map (each entry's `id`); an object's `id`. Compared exactly,
 * never normalized: ids are opaque. `objectsOnly` when the claim also names tenants (Keycloak's
 * `organization`, an array of aliases or a map with ids): plain strings there are names.
 */
export function claimedOrganizationIds(value: unknown, objectsOnly = false): string[] {
  const one = (v: unknown): string | null => {
    if (typeof v === 'string') return v.trim() === '' || v.length > 255 ? null : v;
    if (typeof v === 'number' && Number.isFinite(v)) return String(v);
    return null;
  };
  const items = Array.isArray(value) ? value : isNameMap(value) ? Object.values(value) : [value];
  const out: string[] = [];
  for (const item of items) {
    const isObject = item !== null && typeof item === 'object' && !Array.isArray(item);
    const id = isObject ? one((item as Record<string, unknown>).id) : objectsOnly ? null : one(item);
    if (id !== null && !out.includes(id)) out.push(id);
  }
  return out;
}

/**
 * The tenant slug from the `email` claim's registrable domain without its public suffix
 * (`ann@mail.acme.co.uk` → `acme`). Null when `email_verified` is present and not true (or
 * "true"), when the email is malformed, or at a
 * public or disposable mail provider.
 */
export function tenantFromEmail(email: unknown, emailVerified: unknown): string | null {
  // Absent counts as not stated; present, only true or "true" is verified ("FALSE", 0… are not).
  if (typeof email !== 'string' || (emailVerified !== undefined && emailVerified !== true && emailVerified !== 'true')) return null;
  const at = email.lastIndexOf('@');
  if (at <= 0 || at === email.length - 1) return null;
  const host = email.slice(at + 1).trim().toLowerCase();
  const parsed = parseDomain(host);
  if (!parsed.domain || !parsed.domainWithoutSuffix || parsed.isIp) return null;
  if (isPublicMailDomain(host) || isPublicMailDomain(parsed.domain)) return null;
  return normalizeClaimValue(parsed.domainWithoutSuffix);
}

/** What a name claim asserts: one tenant, or a set of several (docs/identity-providers.md#several-tenants-in-one-claim). */
export type ClaimedTenant = { slug: string; source: TenantSource; claim: string } | { slugs: readonly string[]; source: TenantSource; claim: string; slug?: undefined };

/** Sources 1–4 in order; the first claim that names a tenant (or a set of them) wins. */
export function tenantFromClaims(claims: Readonly<Record<string, unknown>>, customClaim: string | null): ClaimedTenant | null {
  const groups: Array<[TenantSource, readonly string[]]> = [
    ['custom_claim', customClaim ? [customClaim] : []],
    ['tenant_claim', ['tenant']],
    ['organization_claim', ORGANIZATION_CLAIMS],
    ['namespace_claim', NAMESPACE_CLAIMS],
  ];
  for (const [source, names] of groups) {
    for (const claim of names) {
      const slugs = claimedSlugs(source === 'custom_claim' ? readClaim(claims, claim) : claims[claim]);
      if (slugs.length === 1) return { slug: slugs[0]!, source, claim };
      if (slugs.length > 1) return { slugs, source, claim };
    }
  }
  return null;
}

/**
 * Decides which tenant a multi-tenant request asks for (docs/tenants.md#tenant-resolution):
 * organization ids, then name claims, then the header, then the email domain. A claim and a header
 * naming different tenants is a mismatch; a claim naming several tenants needs the header to
 * choose.
 */
export function requestedTenant(input: ResolutionInput): TenantRequest {
  if (input.idClaim) {
    const namesToo = input.idClaim === input.customClaim || NAME_CLAIMS.has(input.idClaim);
    const ids = claimedOrganizationIds(readClaim(input.claims, input.idClaim), namesToo);
    if (ids.length > 1 && input.header === null) return { kind: 'choose', claim: input.idClaim, listed: ids };
    if (ids.length > 0) return { kind: 'linked', organizationIds: ids, header: input.header, claim: input.idClaim };
  }
  const fromClaims = tenantFromClaims(input.claims, input.customClaim);
  if (fromClaims && 'slugs' in fromClaims) {
    if (input.header === null) return { kind: 'choose', claim: fromClaims.claim, listed: fromClaims.slugs };
    if (!fromClaims.slugs.includes(input.header)) return { kind: 'unlisted', claim: fromClaims.claim, listed: fromClaims.slugs, headerSlug: input.header };
    return { kind: 'tenant', slug: input.header, source: fromClaims.source, claim: fromClaims.claim, fromSet: true };
  }
  if (fromClaims) {
    if (input.header !== null && input.header !== fromClaims.slug) {
      return { kind: 'mismatch', claimSlug: fromClaims.slug, headerSlug: input.header, claim: fromClaims.claim };
    }
    return { kind: 'tenant', ...fromClaims };
  }
  if (input.header !== null) return { kind: 'tenant', slug: input.header, source: 'header' };
  const fromEmail = tenantFromEmail(input.claims.email, input.claims.email_verified);
  if (fromEmail) return { kind: 'tenant', slug: fromEmail, source: 'email_domain', claim: 'email' };
  return { kind: 'missing' };
}

/** True when the X-Tenant header value is well formed (checked on every endpoint). */
export function isValidTenantHeader(value: string): boolean {
  return value.length <= TENANT_HEADER_MAX && TENANT_HEADER_PATTERN.test(value);
}
