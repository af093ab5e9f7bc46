/**
 * What the platform tenant forms share: the slug rule of the contract, settings typed as JSON,
 * and invalidating every cached tenant read after a change.
 */
import type { QueryClient } from '@tanstack/react-query';
import type { TenantSettings } from '@generated/types.gen';

export const SLUG_PATTERN = /^[a-z0-9-]{1,255}$/;

/** A slug suggested from a name: lowercase letters, digits and hyphens. */
export function slugFromName(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 255);
}

/** Why a slug is refused, as a sentence, or null when it follows the contract. */
export function slugProblem(slug: string): string | null {
  if (slug === '') return 'Enter a slug.';
  if (!SLUG_PATTERN.test(slug)) return 'A slug may hold only lowercase letters (a–z), digits and hyphens, at most 255 of them.';
  return null;
}

/** The settings textarea as an object, or the sentence saying why it is not one. */
export function parseSettings(text: string): { value: TenantSettings } | { problem: string } {
  if (text.trim() === '') return { value: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return { problem: `Settings are not valid JSON (${e instanceof SyntaxError ? e.message : 'unreadable'}). Write an object such as {"billing_plan": "free"}.` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { problem: 'Settings must be a JSON object, such as {"billing_plan": "free"}.' };
  }
  return { value: parsed as TenantSettings };
}

const TENANT_READS = new Set(['listTenants', 'getTenant', 'getTenantDeletionPreview', 'auditTenants', 'listEvents', 'listMyTenants']);

/** After a tenant changed: every cached list, detail, audit and event page is stale. */
export function invalidateTenantReads(queryClient: QueryClient): Promise<void> {
  return queryClient.invalidateQueries({
    predicate: (q) => {
      const key = q.queryKey[0] as { _id?: string } | undefined;
      return typeof key?._id === 'string' && TENANT_READS.has(key._id);
    },
  });
}

/** A status's label, from the service's lifecycle table. */
export { statusLabel } from '@service/context/tenant-status';
