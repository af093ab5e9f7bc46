/**
 * One-time codes of console sign-in links (`tenantctl console`, docs/console.md#the-local-provider-tenantctl-console).
 *
 * - `code_hash` is HKDF-SHA256 of the code: the code itself is never stored, and a row cannot be
 *   found without it.
 * - `sealed_token` is the access token encrypted (AES-256-GCM) under another key derived from
 *   the code, so the table alone signs nobody in. A code is spent by deleting its row.
 * - `issuer`, `subject` and `platform_admin` only name who the link signs in (for the events).
 * - Platform rows: row-level security lets the runtime role see them only outside a tenant
 *   transaction; the reader role (audit) gets no grant.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
CREATE TABLE console_sign_in_codes (
  id uuid PRIMARY KEY,
  code_hash bytea NOT NULL CHECK (octet_length(code_hash) = 32),
  sealed_token jsonb NOT NULL,
  issuer text NOT NULL,
  subject text NOT NULL,
  platform_admin boolean NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  CONSTRAINT console_sign_in_codes_code_hash_key UNIQUE (code_hash),
  CONSTRAINT console_sign_in_codes_lifetime CHECK (expires_at > created_at)
);
CREATE INDEX console_sign_in_codes_expires_at_idx ON console_sign_in_codes (expires_at);

ALTER TABLE console_sign_in_codes ENABLE ROW LEVEL SECURITY;
CREATE POLICY outside_tenants ON console_sign_in_codes FOR ALL TO tenant_service_app
  USING (nullif(current_setting('app.tenant_id', true), '') IS NULL)
  WITH CHECK (nullif(current_setting('app.tenant_id', true), '') IS NULL);

GRANT SELECT, INSERT, DELETE ON console_sign_in_codes TO tenant_service_app;
`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS console_sign_in_codes');
}
