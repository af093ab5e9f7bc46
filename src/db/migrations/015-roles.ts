/**
 * Roles and permissions (docs/roles.md):
 *
 * - `permissions`: the catalogue, platform-wide, written by platform admins only.
 * - `platform_roles` (+ `platform_role_permissions`): roles available in every tenant; the
 *   built-in `admin` and `member` are rows like any other, flagged `built_in`.
 * - `tenant_roles` (+ `tenant_role_permissions`): a tenant's own roles, tenant-owned tables
 *   (tenant_id in every key, row-level security enabled and forced, like 001).
 * - A permission's deletion cascades out of every role's permission rows (foreign keys), so it
 *   happens in the deleting transaction and no role can keep a permission the catalogue lost.
 * - `users.role` / `invitations.role` hold any role key (the slug pattern); that the key names a
 *   role available in the tenant is checked by the domain, under a lock on the role's row.
 * - `app_tenant_facts` also returns the permissions of the roles the decision may need (the
 *   member's stored role, `member`, and the roles the token's role claim names), so a decision
 *   stays one statement.
 *
 * Tables and roles are spelled literally: released migrations never import later constants.
 */
import type { Knex } from 'knex';

const rls = (table: string) => `
ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY;
ALTER TABLE ${table} FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON ${table}
  USING (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid)
  WITH CHECK (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid);`;

const PERMISSION_KEY = `'^[a-z0-9][a-z0-9._-]*(:[a-z0-9][a-z0-9._-]*)*$'`;
const ROLE_KEY = `'^[a-z0-9-]+$'`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
CREATE TABLE permissions (
  key varchar(100) PRIMARY KEY CHECK (key ~ ${PERMISSION_KEY}),
  description text NOT NULL DEFAULT '' CHECK (char_length(description) <= 500),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE platform_roles (
  key varchar(64) PRIMARY KEY CHECK (key ~ ${ROLE_KEY}),
  name varchar(255) NOT NULL CHECK (char_length(name) >= 1),
  description text NOT NULL DEFAULT '' CHECK (char_length(description) <= 500),
  built_in boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE platform_role_permissions (
  role_key varchar(64) NOT NULL REFERENCES platform_roles (key) ON DELETE CASCADE,
  permission_key varchar(100) NOT NULL REFERENCES permissions (key) ON DELETE CASCADE,
  PRIMARY KEY (role_key, permission_key)
);
CREATE INDEX platform_role_permissions_permission ON platform_role_permissions (permission_key);
INSERT INTO platform_roles (key, name, description, built_in) VALUES
  ('admin', 'Admin', 'Administers the tenant: members, invitations, roles.', true),
  ('member', 'Member', 'A member of the tenant.', true);

CREATE TABLE tenant_roles (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  key varchar(64) NOT NULL CHECK (key ~ ${ROLE_KEY}),
  name varchar(255) NOT NULL CHECK (char_length(name) >= 1),
  description text NOT NULL DEFAULT '' CHECK (char_length(description) <= 500),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, key)
);
CREATE INDEX tenant_roles_created_order ON tenant_roles (tenant_id, created_at, key);
CREATE TABLE tenant_role_permissions (
  tenant_id uuid NOT NULL,
  role_key varchar(64) NOT NULL,
  permission_key varchar(100) NOT NULL REFERENCES permissions (key) ON DELETE CASCADE,
  PRIMARY KEY (tenant_id, role_key, permission_key),
  FOREIGN KEY (tenant_id, role_key) REFERENCES tenant_roles (tenant_id, key) ON DELETE CASCADE
);
CREATE INDEX tenant_role_permissions_permission ON tenant_role_permissions (permission_key);
${rls('tenant_roles')}
${rls('tenant_role_permissions')}

ALTER TABLE users DROP CONSTRAINT users_role_check;
ALTER TABLE users ADD CONSTRAINT users_role_check CHECK (role ~ ${ROLE_KEY} AND char_length(role) <= 64);
ALTER TABLE invitations DROP CONSTRAINT invitations_role_check;
ALTER TABLE invitations ADD CONSTRAINT invitations_role_check CHECK (role ~ ${ROLE_KEY} AND char_length(role) <= 64);
CREATE INDEX users_role ON users (tenant_id, role);

GRANT SELECT, INSERT, DELETE ON permissions TO tenant_service_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON platform_roles, platform_role_permissions TO tenant_service_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON tenant_roles, tenant_role_permissions TO tenant_service_app;
GRANT SELECT ON permissions, platform_roles, platform_role_permissions, tenant_roles, tenant_role_permissions TO tenant_service_reader;
`);

  await knex.raw(`
DROP FUNCTION app_tenant_facts(text, uuid, text, text, text, text);
CREATE FUNCTION app_tenant_facts(
  p_slug text, p_tenant_id uuid, p_link_issuer text, p_link_organization_id text, p_issuer text, p_subject text, p_roles text[]
) RETURNS TABLE (
  tenant_id uuid, tenant_name text, tenant_slug text, tenant_settings jsonb, tenant_status text,
  tenant_is_default boolean, tenant_created_at timestamptz, tenant_updated_at timestamptz,
  tenant_provision_from_claims boolean, tenant_claims_issuer text, tenant_roles_from_claims boolean, tenant_links jsonb,
  user_id uuid, user_email text, user_display_name text, user_role text, user_created_at timestamptz,
  role_permissions jsonb
) LANGUAGE plpgsql VOLATILE SECURITY INVOKER AS $$
DECLARE
  t tenants%ROWTYPE;
  u users%ROWTYPE;
  tid uuid;
  wanted text[];
BEGIN
  IF p_tenant_id IS NOT NULL THEN
    tid := p_tenant_id;
  ELSIF p_slug IS NOT NULL THEN
    SELECT id INTO tid FROM tenants WHERE slug = p_slug;
  ELSIF p_link_organization_id IS NOT NULL THEN
    SELECT l.tenant_id INTO tid FROM identity_links l
     WHERE l.issuer = p_link_issuer AND l.organization_id = p_link_organization_id;
  ELSE
    SELECT id INTO tid FROM tenants WHERE is_default; -- single-tenant mode
  END IF;
  IF tid IS NULL THEN
    RETURN;
  END IF;
  -- The tenant's entry lock, shared by every request in it and taken exclusively by its delete
  -- (app_lock_tenant_exclusive), so a stream of requests cannot starve the delete.
  PERFORM pg_advisory_xact_lock_shared(hashtextextended('tenant-entry:' || tid::text, 0));
  -- FOR KEY SHARE: the tenant and the membership cannot be deleted until the request ends.
  SELECT * INTO t FROM tenants WHERE id = tid FOR KEY SHARE;
  IF NOT FOUND THEN
    RETURN; -- deleted while this request waited
  END IF;
  PERFORM set_config('app.tenant_id', t.id::text, true);
  SELECT * INTO u FROM users
   WHERE users.tenant_id = t.id AND issuer = p_issuer AND subject = p_subject FOR KEY SHARE;
  -- The roles the decision may need: the stored one, member (the fallback), the token's.
  wanted := array_append(array_append(coalesce(p_roles, '{}'::text[]), 'member'), u.role);
  RETURN QUERY SELECT t.id, t.name::text, t.slug::text, t.settings, t.status, t.is_default, t.created_at, t.updated_at,
    t.provision_from_claims, t.claims_issuer, t.roles_from_claims,
    (SELECT coalesce(jsonb_agg(jsonb_build_object('issuer', l.issuer, 'organization_id', l.organization_id)
                               ORDER BY l.issuer, l.organization_id), '[]'::jsonb)
       FROM identity_links l WHERE l.tenant_id = t.id),
    u.id, u.email, u.display_name, u.role, u.created_at,
    (SELECT coalesce(jsonb_object_agg(r.key, r.perms), '{}'::jsonb) FROM (
       SELECT pr.key::text AS key,
              (SELECT coalesce(jsonb_agg(rp.permission_key ORDER BY rp.permission_key COLLATE "C"), '[]'::jsonb)
                 FROM platform_role_permissions rp WHERE rp.role_key = pr.key) AS perms
         FROM platform_roles pr WHERE pr.key = ANY (wanted)
       UNION ALL
       SELECT tr.key::text,
              (SELECT coalesce(jsonb_agg(tp.permission_key ORDER BY tp.permission_key COLLATE "C"), '[]'::jsonb)
                 FROM tenant_role_permissions tp WHERE tp.tenant_id = t.id AND tp.role_key = tr.key)
         FROM tenant_roles tr WHERE tr.tenant_id = t.id AND tr.key = ANY (wanted)) r);
END $$;
GRANT EXECUTE ON FUNCTION app_tenant_facts(text, uuid, text, text, text, text, text[]) TO tenant_service_app;
`);
}

export async function down(): Promise<void> {
  throw new Error('Migration 013 cannot be rolled back; restore a backup instead.');
}
