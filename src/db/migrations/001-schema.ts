/**
 * The schema. Every tenant-owned table carries tenant_id in its primary key and in every foreign
 * key, so a row can never reference another tenant's row, and has row-level security enabled
 * and forced with a policy on `app.tenant_id`.
 */
import type { Knex } from 'knex';

// Frozen: this migration is released. It spells its tables and roles literally and imports
// nothing later code may change (src/db/schema.ts holds the names the running service uses), so
// what it does on an empty database never changes; test/operations/schema-snapshot.test.ts checks that.
const APP = 'tenant_service_app';
const READER = 'tenant_service_reader';
/** The tenant-owned tables this migration creates, parents before children. */
const TABLES = ['users', 'boards', 'board_members', 'generations', 'provider_configs', 'credit_transactions'];

const createRole = (name: string, attrs: string) => `
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${name}') THEN
    CREATE ROLE ${name} ${attrs};
  END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
  NULL; -- created by a concurrent migration of another database on this cluster
END $$;`;

const grantRoleToMigrator = (name: string) => `
DO $$
BEGIN
  EXECUTE format('GRANT ${name} TO %I', current_user);
EXCEPTION WHEN OTHERS THEN
  NULL; -- superusers need no membership; other owners must be granted it by a DBA
END $$;`;

const rls = (table: string) => `
ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY;
ALTER TABLE ${table} FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON ${table}
  USING (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid)
  WITH CHECK (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid);`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(createRole(APP, 'NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE'));
  await knex.raw(createRole(READER, 'NOLOGIN NOSUPERUSER BYPASSRLS NOCREATEDB NOCREATEROLE'));
  await knex.raw(grantRoleToMigrator(APP));
  await knex.raw(grantRoleToMigrator(READER));

  await knex.raw(`
CREATE TABLE tenants (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name varchar(255) NOT NULL CHECK (char_length(name) >= 1),
  slug varchar(255) NOT NULL CHECK (slug ~ '^[a-z0-9-]+$'),
  settings jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(settings) = 'object'),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'pending_approval')),
  is_default boolean NOT NULL DEFAULT false,
  created_by_issuer text,
  created_by_subject text,
  registration jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT tenants_slug_unique UNIQUE (slug)
);
CREATE UNIQUE INDEX tenants_one_default ON tenants (is_default) WHERE is_default;
CREATE INDEX tenants_created_order ON tenants (created_at, id);
CREATE INDEX tenants_created_by ON tenants (created_by_issuer, created_by_subject) WHERE created_by_subject IS NOT NULL;

CREATE TABLE users (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  issuer text NOT NULL,
  subject text NOT NULL,
  email text,
  display_name text,
  role text NOT NULL DEFAULT 'member' CHECK (role IN ('admin', 'member')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  CONSTRAINT users_tenant_identity_unique UNIQUE (tenant_id, issuer, subject)
);
CREATE INDEX users_identity ON users (issuer, subject);
CREATE INDEX users_created_order ON users (tenant_id, created_at, id);

CREATE TABLE boards (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  name varchar(255) NOT NULL,
  description text,
  created_by uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, created_by) REFERENCES users (tenant_id, id) ON DELETE SET NULL (created_by)
);
CREATE INDEX boards_created_order ON boards (tenant_id, created_at, id);

CREATE TABLE board_members (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  board_id uuid NOT NULL,
  user_id uuid NOT NULL,
  role text NOT NULL DEFAULT 'editor' CHECK (role IN ('owner', 'editor', 'viewer')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, board_id, user_id),
  FOREIGN KEY (tenant_id, board_id) REFERENCES boards (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX board_members_user ON board_members (tenant_id, user_id);

CREATE TABLE generations (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  board_id uuid NOT NULL,
  prompt text NOT NULL,
  status text NOT NULL DEFAULT 'completed' CHECK (status IN ('pending', 'running', 'completed', 'failed')),
  media_url text,
  media_type text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, board_id) REFERENCES boards (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX generations_board ON generations (tenant_id, board_id, created_at);

CREATE TABLE provider_configs (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  provider text NOT NULL,
  config jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id)
);

CREATE TABLE credit_transactions (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  user_id uuid,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  kind text NOT NULL CHECK (kind IN ('grant', 'usage', 'refund', 'adjustment')),
  amount integer NOT NULL,
  balance_after integer NOT NULL,
  description text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE SET NULL (user_id)
);
CREATE INDEX credit_transactions_order ON credit_transactions (tenant_id, seq);

CREATE TABLE idempotency_keys (
  caller text NOT NULL,
  key text NOT NULL,
  request_hash text NOT NULL,
  tenant_id uuid REFERENCES tenants (id) ON DELETE CASCADE,
  response jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (caller, key)
);
CREATE INDEX idempotency_keys_age ON idempotency_keys (created_at);
`);

  for (const t of TABLES) await knex.raw(rls(t));

  // Resolution and membership in one round trip, inside the request's own transaction: it sets
  // app.tenant_id for the transaction, then reads (and, for IdP-asserted tenants, provisions)
  // the caller's membership under row-level security.
  await knex.raw(`
CREATE FUNCTION app_enter_tenant(
  p_slug text, p_tenant_id uuid, p_issuer text, p_subject text,
  p_provision boolean, p_email text, p_display_name text
) RETURNS TABLE (
  tenant_id uuid, tenant_name text, tenant_slug text, tenant_settings jsonb, tenant_status text,
  tenant_is_default boolean, tenant_created_at timestamptz, tenant_updated_at timestamptz,
  user_id uuid, user_email text, user_display_name text, user_role text, user_created_at timestamptz,
  provisioned boolean
) LANGUAGE plpgsql VOLATILE SECURITY INVOKER AS $$
DECLARE
  t tenants%ROWTYPE;
  u users%ROWTYPE;
  made boolean := false;
BEGIN
  IF p_tenant_id IS NOT NULL THEN
    SELECT * INTO t FROM tenants WHERE id = p_tenant_id;
  ELSIF p_slug IS NOT NULL THEN
    SELECT * INTO t FROM tenants WHERE slug = p_slug;
  ELSE
    SELECT * INTO t FROM tenants WHERE is_default; -- single-tenant mode
  END IF;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  PERFORM set_config('app.tenant_id', t.id::text, true);
  SELECT * INTO u FROM users WHERE users.tenant_id = t.id AND issuer = p_issuer AND subject = p_subject;
  IF NOT FOUND AND p_provision AND t.status = 'active' THEN
    INSERT INTO users (tenant_id, issuer, subject, email, display_name, role)
    VALUES (t.id, p_issuer, p_subject, p_email, p_display_name, 'member')
    ON CONFLICT ON CONSTRAINT users_tenant_identity_unique DO NOTHING;
    SELECT * INTO u FROM users WHERE users.tenant_id = t.id AND issuer = p_issuer AND subject = p_subject;
    made := FOUND;
  END IF;
  RETURN QUERY SELECT t.id, t.name::text, t.slug::text, t.settings, t.status, t.is_default, t.created_at, t.updated_at,
    u.id, u.email, u.display_name, u.role, u.created_at, made;
END $$;
`);

  await knex.raw(`
GRANT USAGE ON SCHEMA public TO ${APP}, ${READER};
GRANT SELECT, INSERT, UPDATE, DELETE ON tenants, idempotency_keys, ${TABLES.join(', ')} TO ${APP};
GRANT SELECT ON tenants, idempotency_keys, ${TABLES.join(', ')} TO ${READER};
GRANT EXECUTE ON FUNCTION app_enter_tenant(text, uuid, text, text, boolean, text, text) TO ${APP};
`);
}

export async function down(): Promise<void> {
  throw new Error('The initial schema cannot be rolled back; drop the database instead.');
}
