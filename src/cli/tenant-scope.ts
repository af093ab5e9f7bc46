/**
 * What the tenant-scoped command groups (members, invitations) share: `--tenant <slug>`, sent as
 * the X-Tenant header, and paging through a list to its end.
 */
import { InvalidArgumentError, Option } from 'commander';
import { ROLE_KEY_PATTERN } from '../context/roles';
import { CliError } from './errors';

const SLUG = /^[a-z0-9-]{1,255}$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `--tenant <slug>`: which tenant the request is for (X-Tenant; ignored in single-tenant mode). */
export function tenantOption(): Option {
  return new Option('--tenant <slug>', 'the tenant, sent as X-Tenant (multi-tenant mode, unless the token names one)').argParser((v: string) => {
    if (!SLUG.test(v)) throw new InvalidArgumentError('--tenant must be a tenant slug: 1-255 lowercase letters, digits and hyphens.');
    return v;
  });
}

export function tenantHeaders(slug: string | undefined): { 'X-Tenant': string } | undefined {
  return slug ? { 'X-Tenant': slug } : undefined;
}

/** A page size flag's parser (1-1000). */
export function parsePageSize(v: string): number {
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 1000) throw new InvalidArgumentError('--limit must be an integer from 1 to 1000.');
  return Number(v);
}

/** A role flag: any role key (admin, member, or a platform or tenant role; see `tenantctl roles list`). */
export function roleOption(description: string, required: boolean): Option {
  const o = new Option('--role <role>', `${description}: admin, member or another role key`).argParser((v: string) => {
    if (!ROLE_KEY_PATTERN.test(v)) throw new InvalidArgumentError('--role must be a role key: 1-64 lowercase letters, digits and hyphens (tenantctl roles list --tenant SLUG lists them).');
    return v;
  });
  return required ? o.makeOptionMandatory() : o;
}

/** Every item of a cursor-paged list, page after page until `next_cursor` is null. */
export async function allPages<T>(fetchPage: (cursor: string | undefined) => Promise<{ items: T[]; next_cursor: string | null }>): Promise<T[]> {
  const items: T[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (;;) {
    const page = await fetchPage(cursor);
    items.push(...page.items);
    if (page.next_cursor === null || page.items.length === 0) return items;
    // A cursor seen twice would loop forever: stop with an error rather than hang.
    if (seen.has(page.next_cursor)) throw new CliError(`the server returned the same next_cursor twice after ${items.length} items`);
    seen.add(page.next_cursor);
    cursor = page.next_cursor;
  }
}
