/**
 * Each tenant's own single sign-on (docs/sso.md):
 *
 * - `sso_connections`: a tenant's OIDC or SAML 2.0 identity providers (at most 5, checked by the
 *   service under a per-tenant lock). OIDC: issuer, client id, the client secret (sealed, `enc1.`
 *   + AES-256-GCM under SERVICE_KEY_ENCRYPTION_SECRET with the connection id as additional data,
 *   when the deployment sets it; never returned), scopes. SAML: the IdP's entity id, its
 *   HTTP-Redirect sign-in URL and its signing certificate (base64 DER, public). Tenant-owned:
 *   row-level security confines it to the tenant; the platform reader finds a connection's tenant
 *   (a SAML response names only the connection).
 * - `sso_settings`: one row per tenant that set `sso_required`.
 * - `sso_requests`: sign-ins sent to an identity provider and not yet back: the OIDC `state`
 *   (with its PKCE verifier and nonce) or the SAML AuthnRequest ID, the provider's interaction,
 *   an expiry (10 minutes) and when it was used (once). Platform rows: the callback reads them
 *   before any tenant is known; row-level security lets the runtime role see them only outside a
 *   tenant transaction.
 * - `sso_consumed_assertions`: SAML assertion IDs accepted, kept until their NotOnOrAfter, so a
 *   replayed assertion is refused. Platform rows, like `sso_requests`.
 *
 * Tables and roles are spelled literally: released migrations never import later constants.
 */
import type { Knex } from 'knex';

const TENANT_OWNED = (table: string) => `
ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY;
ALTER TABLE ${table} FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON ${table}
  USING (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid)
  WITH CHECK (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid);
GRANT SELECT, INSERT, UPDATE, DELETE ON ${table} TO tenant_service_app;
GRANT SELECT ON ${table} TO tenant_service_reader;
CREATE TRIGGER decision_facts_notify AFTER INSERT OR UPDATE OR DELETE ON ${table}
  FOR EACH ROW EXECUTE FUNCTION app_notify_decision_facts('tenant_id');
CREATE TRIGGER decision_facts_notify_truncate AFTER TRUNCATE ON ${table}
  FOR EACH STATEMENT EXECUTE FUNCTION app_notify_decision_facts();
`;

const PLATFORM = (table: string) => `
ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY;
CREATE POLICY outside_tenants ON ${table} FOR ALL TO tenant_service_app
  USING (nullif(current_setting('app.tenant_id', true), '') IS NULL)
  WITH CHECK (nullif(current_setting('app.tenant_id', true), '') IS NULL);
GRANT SELECT, INSERT, UPDATE, DELETE ON ${table} TO tenant_service_app;
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
CREATE TABLE sso_connections (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  type text NOT NULL CHECK (type IN ('oidc', 'saml')),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive')),
  oidc_issuer text CHECK (char_length(oidc_issuer) <= 2048),
  oidc_client_id text CHECK (char_length(oidc_client_id) <= 500),
  oidc_client_secret text CHECK (char_length(oidc_client_secret) <= 2000),
  oidc_scopes text[],
  saml_idp_entity_id text CHECK (char_length(saml_idp_entity_id) <= 2048),
  saml_idp_sso_url text CHECK (char_length(saml_idp_sso_url) <= 2048),
  saml_idp_certificate text CHECK (char_length(saml_idp_certificate) <= 20000),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  CONSTRAINT sso_connections_id_unique UNIQUE (id),
  CONSTRAINT sso_connections_fields_by_type CHECK (
    (type = 'oidc' AND oidc_issuer IS NOT NULL AND oidc_client_id IS NOT NULL AND oidc_client_secret IS NOT NULL AND oidc_scopes IS NOT NULL
       AND saml_idp_entity_id IS NULL AND saml_idp_sso_url IS NULL AND saml_idp_certificate IS NULL)
    OR (type = 'saml' AND saml_idp_entity_id IS NOT NULL AND saml_idp_sso_url IS NOT NULL AND saml_idp_certificate IS NOT NULL
       AND oidc_issuer IS NULL AND oidc_client_id IS NULL AND oidc_client_secret IS NULL AND oidc_scopes IS NULL))
);
CREATE INDEX sso_connections_active_order ON sso_connections (tenant_id, created_at, id) WHERE status = 'active';
${TENANT_OWNED('sso_connections')}

CREATE TABLE sso_settings (
  tenant_id uuid PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
  sso_required boolean NOT NULL DEFAULT false,
  updated_at timestamptz NOT NULL DEFAULT now()
);
${TENANT_OWNED('sso_settings')}

CREATE TABLE sso_requests (
  id text PRIMARY KEY CHECK (char_length(id) BETWEEN 20 AND 200),
  kind text NOT NULL CHECK (kind IN ('oidc', 'saml')),
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  connection_id uuid NOT NULL REFERENCES sso_connections (id) ON DELETE CASCADE,
  interaction_uid text NOT NULL CHECK (char_length(interaction_uid) <= 200),
  code_verifier text CHECK (char_length(code_verifier) <= 200),
  nonce text CHECK (char_length(nonce) <= 200),
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);
CREATE INDEX sso_requests_expiry ON sso_requests (expires_at);
CREATE INDEX sso_requests_connection ON sso_requests (connection_id);
CREATE INDEX sso_requests_tenant ON sso_requests (tenant_id);
${PLATFORM('sso_requests')}

CREATE TABLE sso_consumed_assertions (
  connection_id uuid NOT NULL REFERENCES sso_connections (id) ON DELETE CASCADE,
  assertion_id text NOT NULL CHECK (char_length(assertion_id) BETWEEN 1 AND 200),
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (connection_id, assertion_id)
);
CREATE INDEX sso_consumed_assertions_expiry ON sso_consumed_assertions (expires_at);
${PLATFORM('sso_consumed_assertions')}
`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS sso_consumed_assertions, sso_requests, sso_settings, sso_connections');
}
