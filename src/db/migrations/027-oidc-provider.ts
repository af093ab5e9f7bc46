/**
 * The service's own OpenID provider (docs/sign-in.md#the-provider): what it keeps in PostgreSQL so
 * that any instance continues a sign-in another started.
 *
 * - `oidc_payloads`: every object of the protocol library (sessions, interactions, authorization
 *   codes, access and refresh tokens, grants…), one row per (model, id), its payload as the
 *   library wrote it. `grant_id`, `uid` and `user_code` are copied out for the lookups the library
 *   makes by them; `consumed_at` marks a code or refresh token used once; a row past `expires_at`
 *   is never read and is purged. `grant_sign_in` (Grant rows only) is the service's own record of
 *   the sign-in behind the grant: the tenant chosen, the connection used, the method; the library
 *   never writes it.
 * - `oidc_signing_keys`: the provider's RS256 keys, modeled on `tenant_token_keys` (published from
 *   creation until `published_until`, signing from `signs_from` until `signs_until`; one key
 *   without a successor), the private JWK encrypted (AES-256-GCM envelope) under
 *   SERVICE_KEY_ENCRYPTION_SECRET when set.
 * - `oidc_provider_secrets`: values the instances must agree on and that are not derived from
 *   SERVICE_KEY_ENCRYPTION_SECRET (the cookie-signing secret of a deployment without it).
 * - `sign_in_accounts`: a person who signs in through the provider; its id is the `sub` of every
 *   token. `sign_in_identities`: how they sign in (a verified email, an OIDC or SAML connection's
 *   issuer and subject), one account per (issuer, subject).
 * - Platform rows: row-level security lets the runtime role see them only outside a tenant
 *   transaction; the reader role gets no grant.
 */
import type { Knex } from 'knex';

const TABLES = ['oidc_payloads', 'oidc_signing_keys', 'oidc_provider_secrets', 'sign_in_accounts', 'sign_in_identities'];

const outsideTenants = (table: string) => `
ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY;
CREATE POLICY outside_tenants ON ${table} FOR ALL TO tenant_service_app
  USING (nullif(current_setting('app.tenant_id', true), '') IS NULL)
  WITH CHECK (nullif(current_setting('app.tenant_id', true), '') IS NULL);
GRANT SELECT, INSERT, UPDATE, DELETE ON ${table} TO tenant_service_app;`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
CREATE TABLE oidc_payloads (
  model text NOT NULL CHECK (char_length(model) BETWEEN 1 AND 64),
  id text NOT NULL CHECK (char_length(id) BETWEEN 1 AND 255),
  payload jsonb NOT NULL,
  grant_id text,
  uid text,
  user_code text,
  consumed_at timestamptz,
  expires_at timestamptz,
  grant_sign_in jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (model, id)
);
CREATE INDEX oidc_payloads_grant ON oidc_payloads (grant_id) WHERE grant_id IS NOT NULL;
CREATE INDEX oidc_payloads_uid ON oidc_payloads (model, uid) WHERE uid IS NOT NULL;
CREATE INDEX oidc_payloads_user_code ON oidc_payloads (model, user_code) WHERE user_code IS NOT NULL;
CREATE INDEX oidc_payloads_expiry ON oidc_payloads (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE oidc_signing_keys (
  kid text PRIMARY KEY CHECK (char_length(kid) BETWEEN 1 AND 100),
  algorithm text NOT NULL CHECK (algorithm = 'RS256'),
  public_jwk jsonb NOT NULL,
  private_key jsonb NOT NULL,
  private_key_encryption text NOT NULL CHECK (private_key_encryption IN ('none', 'aes-256-gcm')),
  created_at timestamptz NOT NULL DEFAULT now(),
  signs_from timestamptz NOT NULL,
  signs_until timestamptz,
  published_until timestamptz,
  CONSTRAINT oidc_signing_keys_retirement CHECK ((signs_until IS NULL) = (published_until IS NULL) AND (published_until IS NULL OR published_until >= signs_until))
);
CREATE UNIQUE INDEX oidc_signing_keys_one_latest ON oidc_signing_keys ((true)) WHERE signs_until IS NULL;

CREATE TABLE oidc_provider_secrets (
  name text PRIMARY KEY CHECK (char_length(name) BETWEEN 1 AND 64),
  value text NOT NULL CHECK (char_length(value) BETWEEN 32 AND 1000),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE sign_in_accounts (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email text CHECK (email = lower(email) AND char_length(email) BETWEEN 3 AND 320),
  email_verified boolean NOT NULL DEFAULT false,
  name text CHECK (char_length(name) <= 300),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sign_in_accounts_email ON sign_in_accounts (email) WHERE email IS NOT NULL;

CREATE TABLE sign_in_identities (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id uuid NOT NULL REFERENCES sign_in_accounts (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('email', 'oidc', 'saml')),
  issuer text NOT NULL CHECK (char_length(issuer) BETWEEN 1 AND 1024),
  subject text NOT NULL CHECK (char_length(subject) BETWEEN 1 AND 1024),
  connection_id uuid,
  tenant_id uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  CONSTRAINT sign_in_identities_unique UNIQUE (issuer, subject)
);
CREATE INDEX sign_in_identities_account ON sign_in_identities (account_id);
${TABLES.map(outsideTenants).join('\n')}
`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS ${[...TABLES].reverse().join(', ')}`);
}
