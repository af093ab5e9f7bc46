/**
 * The product's applications that sign people in through this service's OpenID provider
 * (docs/sign-in.md): `oidc_clients`.
 *
 * - `client_id`: chosen by the service (URL-safe, at most 64 characters).
 * - `type`: `confidential` (has a secret; `client_secret_basic` or `client_secret_post`) or
 *   `public` (a browser or native app: PKCE only). A confidential client has a secret and a public
 *   one none (a check).
 * - `client_secret`: sealed (`enc1.` + AES-256-GCM under SERVICE_KEY_ENCRYPTION_SECRET, the
 *   client id as additional data) when the deployment sets that secret, else plain; never returned
 *   after the create's answer.
 * - `redirect_uris`, `post_logout_redirect_uris`: matched exactly.
 * - `built_in`: the service's own clients (the console); not listed for changes, never deleted.
 * - Platform rows: row-level security lets the runtime role see them only outside a tenant
 *   transaction; the reader role gets no grant.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
CREATE TABLE oidc_clients (
  client_id text PRIMARY KEY CHECK (client_id ~ '^[A-Za-z0-9_-]{1,64}$'),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
  type text NOT NULL CHECK (type IN ('confidential', 'public')),
  redirect_uris text[] NOT NULL CHECK (cardinality(redirect_uris) BETWEEN 1 AND 20),
  post_logout_redirect_uris text[] NOT NULL DEFAULT '{}' CHECK (cardinality(post_logout_redirect_uris) <= 20),
  client_secret text CHECK (char_length(client_secret) <= 1000),
  built_in boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT oidc_clients_secret_by_type CHECK ((type = 'confidential') = (client_secret IS NOT NULL))
);
CREATE INDEX oidc_clients_created_order ON oidc_clients (created_at, client_id);

ALTER TABLE oidc_clients ENABLE ROW LEVEL SECURITY;
CREATE POLICY outside_tenants ON oidc_clients FOR ALL TO tenant_service_app
  USING (nullif(current_setting('app.tenant_id', true), '') IS NULL)
  WITH CHECK (nullif(current_setting('app.tenant_id', true), '') IS NULL);
GRANT SELECT, INSERT, UPDATE, DELETE ON oidc_clients TO tenant_service_app;
`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS oidc_clients');
}
