/**
 * Slug generation for self-service registration (docs/tenants.md#self-service-registration): the
 * organization name, normalized the way tenant claims are, at most 63 characters, with `-2`, `-3`…
 * appended while the slug is taken. Pure functions; the database check lives in ./registration.ts.
 */
import crypto from 'node:crypto';
import { normalizeClaimValue } from '../context/claims';

/** Generated slugs stay within one DNS label, so they also work as subdomains. */
export const MAX_GENERATED_SLUG_LENGTH = 63;

/** Prefix of the slug given to a name that normalizes to nothing (only emoji, only punctuation…). */
export const FALLBACK_SLUG_PREFIX = 'org';

/** Cuts a slug to `max` characters without leaving a trailing hyphen. */
function cut(slug: string, max: number): string {
  return slug.slice(0, max).replace(/-+$/, '');
}

/**
 * The slug an organization name asks for: `normalizeClaimValue` (lowercase, runs outside
 * [a-z0-9] become one `-`, accents folded), cut to 63 characters. A name with nothing usable
 * gets `org-<8 random hex>`, so every registration still has a slug.
 */
export function baseSlugFromName(name: string, random: () => string = () => crypto.randomBytes(4).toString('hex')): string {
  const normalized = normalizeClaimValue(name);
  const slug = normalized ? cut(normalized, MAX_GENERATED_SLUG_LENGTH) : '';
  return slug !== '' ? slug : `${FALLBACK_SLUG_PREFIX}-${random()}`;
}

/**
 * The n-th candidate for a base slug: n = 1 is the base itself, n ≥ 2 appends `-n`, cutting the
 * base so the whole stays within 63 characters.
 */
export function slugCandidate(base: string, n: number): string {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`candidate number must be a positive integer, got ${n}`);
  if (n === 1) return cut(base, MAX_GENERATED_SLUG_LENGTH);
  const suffix = `-${n}`;
  const head = cut(base, MAX_GENERATED_SLUG_LENGTH - suffix.length);
  // A base made only of hyphens cannot occur (normalization strips them); guard anyway.
  return head === '' ? `${FALLBACK_SLUG_PREFIX}${suffix}` : `${head}${suffix}`;
}

/** Candidates `from` … `from + count - 1`, in order. */
export function slugCandidates(base: string, from: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) => slugCandidate(base, from + i));
}
