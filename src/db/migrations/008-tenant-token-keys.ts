/**
 * The signing keys of tenant tokens (docs/tenant-tokens.md#the-key-set), shared by every instance.
 *
 * - One row per key. A key is published (in /.well-known/jwks.json) from its creation until
 *   `published_until`, and signs from `signs_from` until `signs_until`: a rotation creates the
 *   next key with `signs_from` in the future, so verifiers see it before any token carries it.
 * - At most one key has no successor yet (`signs_until IS NULL`): the unique partial index makes
 *   two instances that create the first key at once end with one.
 * - `private_key` is the private JWK, or its AES-256-GCM envelope when the service runs with
 *   SERVICE_KEY_ENCRYPTION_SECRET (`private_key_encryption`).
 * - Row-level security is enabled, and its one policy lets the runtime role see the keys only
 *   outside a tenant transaction: no tenant-scoped statement can read a private key. It is not
 *   forced, so the owner (migrations, pg_dump backups) reads the table whole. The reader role
 *   (audit) gets no grant at all.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
CREATE TABLE tenant_token_keys (
  kid text PRIMARY KEY CHECK (char_length(kid) BETWEEN 1 AND 100),
  algorithm text NOT NULL CHECK (algorithm = 'ES256'),
  public_jwk jsonb NOT NULL,
  private_key jsonb NOT NULL,
  private_key_encryption text NOT NULL CHECK (private_key_encryption IN ('none', 'aes-256-gcm')),
  created_at timestamptz NOT NULL DEFAULT now(),
  signs_from timestamptz NOT NULL,
  signs_until timestamptz,
  published_until timestamptz,
  CONSTRAINT tenant_token_keys_retirement CHECK ((signs_until IS NULL) = (published_until IS NULL) AND (published_until IS NULL OR published_until >= signs_until))
);
CREATE UNIQUE INDEX tenant_token_keys_one_latest ON tenant_token_keys ((true)) WHERE signs_until IS NULL;

ALTER TABLE tenant_token_keys ENABLE ROW LEVEL SECURITY;
CREATE POLICY outside_tenants ON tenant_token_keys FOR ALL TO tenant_service_app
  USING (nullif(current_setting('app.tenant_id', true), '') IS NULL)
  WITH CHECK (nullif(current_setting('app.tenant_id', true), '') IS NULL);

GRANT SELECT, INSERT, UPDATE, DELETE ON tenant_token_keys TO tenant_service_app;
`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS tenant_token_keys');
}
