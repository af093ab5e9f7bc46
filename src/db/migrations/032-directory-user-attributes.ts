/**
 * `directory_users.attributes`: the SCIM User attributes a directory sends that the service keeps
 * without a column of their own (`nickName`, `title`, `userType`, `preferredLanguage`, `locale`,
 * `timezone`; docs/directory-sync.md#the-scim-api), as one JSON object keyed by attribute name.
 * A new such attribute needs no migration (docs/architecture-operations.md#adding-a-scim-attribute).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
ALTER TABLE directory_users
  ADD COLUMN attributes jsonb NOT NULL DEFAULT '{}'::jsonb
  CONSTRAINT directory_users_attributes_object CHECK (jsonb_typeof(attributes) = 'object' AND octet_length(attributes::text) <= 16384);
`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE directory_users DROP COLUMN IF EXISTS attributes');
}
