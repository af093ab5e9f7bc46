/**
 * Tenant resolution as pure functions: from (claims, X-Tenant header, config) to the slug of
 * the tenant a request asks for and where it came from (PRODUCT.md §3). The database check of
 * that slug (exists, active, membership) happens in the request's transaction.
 */
import { parse as parseDomain } from 'tldts';
import { normalizeClaimValue, readClaim, type TenantSource } from '../context/claims';
import { isPublicMailDomain } from './mail-domains';

export { normalizeClaimValue, readClaim, type TenantSource };

/** Sources 1–4: a tenant asserted by the identity provider. */
export const CLAIM_SOURCES: ReadonlySet<TenantSource> = new Set(['custom_claim', 'tenant_claim', 'organization_claim', 'namespace_claim']);

export const ORGANIZATION_CLAIMS = ['org', 'organization', 'org_slug', 'org_name'] as const;
export const NAMESPACE_CLAIMS = ['namespace', 'group', 'team', 'workspace'] as const;

export const TENANT_HEADER_PATTERN = /^[a-z0-9-]+$/;
export const TENANT_HEADER_MAX = 255;

export type TenantRequest =
  | { kind: 'tenant'; slug: string; source: TenantSource; claim?: string }
  | { kind: 'missing' }
  | { kind: 'mismatch'; claimSlug: string; headerSlug: string; claim: string };

export interface ResolutionInput {
  claims: Readonly<Record<string, unknown>>;
  /** The X-Tenant header, already checked by `checkTenantHeader`. */
  header: string | null;
  customClaim: string | null;
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

/** Sources 1–4 in order; the first claim that normalizes to a slug wins. */
export function tenantFromClaims(
  claims: Readonly<Record<string, unknown>>,
  customClaim: string | null,
): { slug: string; source: TenantSource; claim: string } | null {
  const groups: Array<[TenantSource, readonly string[]]> = [
    ['custom_claim', customClaim ? [customClaim] : []],
    ['tenant_claim', ['tenant']],
    ['organization_claim', ORGANIZATION_CLAIMS],
    ['namespace_claim', NAMESPACE_CLAIMS],
  ];
  for (const [source, names] of groups) {
    for (const claim of names) {
      const slug = normalizeClaimValue(source === 'custom_claim' ? readClaim(claims, claim) : claims[claim]);
      if (slug) return { slug, source, claim };
    }
  }
  return null;
}

/**
 * Decides which tenant a multi-tenant request asks for (PRODUCT.md §3): claims, then the
 * header, then the email domain. A claim and a header naming different tenants is a mismatch.
 */
export function requestedTenant(input: ResolutionInput): TenantRequest {
  const fromClaims = tenantFromClaims(input.claims, input.customClaim);
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
