/**
 * One-time codes of email sign-in at the provider's sign-in page (docs/sign-in.md#the-sign-in-page):
 * `sign_in_email_codes`.
 *
 * - A row is one code mailed to `email` for the sign-in in progress `interaction_uid`: the code
 *   is accepted only in that sign-in (the browser that asked for it), never in another.
 * - `code_hash` is HMAC-SHA256 of the code keyed by the row id: the code itself is never stored.
 * - `attempts` counts wrong tries; at 5 the code is dead (`dead_at`), as it is once used.
 * - `ip` and `created_at` are what the rate limits count (codes per email, codes per address in
 *   the last 15 minutes): rows stay until an hour after they were made, used or not, so the
 *   limits cannot be reset by using a code.
 * `sign_in_handbacks`: who a sign-in in progress identified, until its interaction ends: after an
 * email code (`method` email, no tenant yet: the person chooses an organization next), or after a
 * tenant's connection (`method` sso, its tenant and connection). A connection's callback path does
 * not carry the interaction's cookie, so it redirects to the interaction's own page with the
 * handback's id; that page (with the cookie, so in the same browser) takes the row once and ends
 * the interaction. Rows live 10 minutes.
 *
 * - Platform rows: row-level security lets the runtime role see them only outside a tenant
 *   transaction; the reader role gets no grant.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
CREATE TABLE sign_in_email_codes (
  id uuid PRIMARY KEY,
  email text NOT NULL CHECK (char_length(email) BETWEEN 3 AND 320 AND email = lower(email)),
  interaction_uid text NOT NULL CHECK (char_length(interaction_uid) BETWEEN 1 AND 200),
  code_hash bytea NOT NULL CHECK (octet_length(code_hash) = 32),
  ip text CHECK (char_length(ip) <= 100),
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  dead_at timestamptz,
  CONSTRAINT sign_in_email_codes_lifetime CHECK (expires_at > created_at)
);
CREATE INDEX sign_in_email_codes_interaction_idx ON sign_in_email_codes (interaction_uid, created_at);
CREATE INDEX sign_in_email_codes_email_idx ON sign_in_email_codes (email, created_at);
CREATE INDEX sign_in_email_codes_ip_idx ON sign_in_email_codes (ip, created_at);
CREATE INDEX sign_in_email_codes_created_idx ON sign_in_email_codes (created_at);

ALTER TABLE sign_in_email_codes ENABLE ROW LEVEL SECURITY;
CREATE POLICY outside_tenants ON sign_in_email_codes FOR ALL TO tenant_service_app
  USING (nullif(current_setting('app.tenant_id', true), '') IS NULL)
  WITH CHECK (nullif(current_setting('app.tenant_id', true), '') IS NULL);
GRANT SELECT, INSERT, UPDATE, DELETE ON sign_in_email_codes TO tenant_service_app;

CREATE TABLE sign_in_handbacks (
  id uuid PRIMARY KEY,
  interaction_uid text NOT NULL CHECK (char_length(interaction_uid) BETWEEN 1 AND 200),
  account_id uuid NOT NULL,
  method text NOT NULL CHECK (method IN ('email', 'sso')),
  tenant_id uuid,
  connection_id uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  CONSTRAINT sign_in_handbacks_lifetime CHECK (expires_at > created_at)
);
CREATE INDEX sign_in_handbacks_expires_idx ON sign_in_handbacks (expires_at);
CREATE INDEX sign_in_handbacks_interaction_idx ON sign_in_handbacks (interaction_uid);
ALTER TABLE sign_in_handbacks ENABLE ROW LEVEL SECURITY;
CREATE POLICY outside_tenants ON sign_in_handbacks FOR ALL TO tenant_service_app
  USING (nullif(current_setting('app.tenant_id', true), '') IS NULL)
  WITH CHECK (nullif(current_setting('app.tenant_id', true), '') IS NULL);
GRANT SELECT, INSERT, DELETE ON sign_in_handbacks TO tenant_service_app;
`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS sign_in_handbacks; DROP TABLE IF EXISTS sign_in_email_codes');
}
