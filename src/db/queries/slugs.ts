/**
 * Retired slugs (migration 004): slugs of tenants deleted or renamed away, which self-service
 * registration may not take for SERVICE_SLUG_RETIREMENT_DAYS.
 */
import type { Knex } from 'knex';

/**
 * Serialises work on one slug with the trigger that retires slugs (migration 004): a deletion
 * retiring `slug` and a registration checking it run one after the other until commit.
 */
export async function lockSlug(trx: Knex.Transaction, slug: string): Promise<void> {
  await trx.raw("select pg_advisory_xact_lock(hashtextextended('tenant-slug:' || ?, 0))", [slug]);
}

/** Those of `slugs` retired within the last `days` days. */
export async function retiredAmong(trx: Knex.Transaction, slugs: readonly string[], days: number): Promise<Set<string>> {
  if (days <= 0 || slugs.length === 0) return new Set();
  const rows = (await trx('retired_slugs')
    .distinct('slug')
    .whereIn('slug', slugs as string[])
    .andWhereRaw('retired_at > now() - make_interval(days => ?)', [days])) as Array<{ slug: string }>;
  return new Set(rows.map((r) => r.slug));
}

/** Those of `slugs` a tenant uses now. */
export async function takenAmong(trx: Knex.Transaction, slugs: readonly string[]): Promise<Set<string>> {
  const rows = (await trx('tenants').select('slug').whereIn('slug', slugs as string[])) as Array<{ slug: string }>;
  return new Set(rows.map((r) => r.slug));
}
