/**
 * Tenant search without ILIKE (docs/security.md#security-and-robustness). `name ILIKE pattern`
 * lowercases the PATTERN again for every row it tests: a 255-character `q` (e.g. all `%` or `_`,
 * escaped to literals, which no trigram narrows) took 2.6 s over 100 000 tenants. Instead the name
 * is kept lowercased in a column (set by a trigger on every insert and update), the pattern is
 * lowercased once per query, and a plain LIKE compares them (slugs are lowercase by their CHECK
 * already). The trigram index moves from `name` to the new column; where pg_trgm is missing the
 * search still works, only slower.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  // A plain column kept by a trigger rather than a generated column: a generated column refuses
  // any explicit value, which would break code (and tests) that write back a row read with
  // select *. The trigger overwrites whatever is written.
  await knex.raw(`
ALTER TABLE tenants ADD COLUMN IF NOT EXISTS name_search text;
UPDATE tenants SET name_search = lower(name) WHERE name_search IS DISTINCT FROM lower(name);
ALTER TABLE tenants ALTER COLUMN name_search SET NOT NULL;
CREATE OR REPLACE FUNCTION tenants_set_name_search() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  NEW.name_search := lower(NEW.name);
  RETURN NEW;
END $fn$;
DROP TRIGGER IF EXISTS tenants_name_search ON tenants;
CREATE TRIGGER tenants_name_search BEFORE INSERT OR UPDATE ON tenants
  FOR EACH ROW EXECUTE FUNCTION tenants_set_name_search();`);
  await knex.raw(`
DO $$
BEGIN
  CREATE EXTENSION IF NOT EXISTS pg_trgm;
  CREATE INDEX IF NOT EXISTS tenants_name_search_trgm ON tenants USING gin (name_search gin_trgm_ops);
  DROP INDEX IF EXISTS tenants_name_trgm;
EXCEPTION WHEN undefined_file OR insufficient_privilege OR feature_not_supported THEN
  RAISE NOTICE 'pg_trgm unavailable (%): tenant search will scan the table', SQLERRM;
END $$;`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
DO $$
BEGIN
  CREATE INDEX IF NOT EXISTS tenants_name_trgm ON tenants USING gin (name gin_trgm_ops);
EXCEPTION WHEN undefined_object OR undefined_file OR insufficient_privilege OR feature_not_supported THEN
  NULL;
END $$;`);
  await knex.raw('DROP INDEX IF EXISTS tenants_name_search_trgm');
  await knex.raw('DROP TRIGGER IF EXISTS tenants_name_search ON tenants');
  await knex.raw('DROP FUNCTION IF EXISTS tenants_set_name_search()');
  await knex.raw('ALTER TABLE tenants DROP COLUMN IF EXISTS name_search');
}
